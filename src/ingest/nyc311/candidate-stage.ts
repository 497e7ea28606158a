/**
 * The external sort of the cleaning: the requests that passed the removal rules are staged, as they
 * are read, in a temporary SQLite file (a table clustered on (created wall time, id)), then read back
 * in that order. The process holds one batch, never every request, whatever the export's size; SQLite
 * keeps its page cache bounded and the rest on disk. The file is deleted when the stage is closed.
 * Threads that clean parts of an export each write a stage of their own; mergeSortedStages reads
 * them back as one.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { turnOffRollbackJournal } from './rollback-journal.js';
import type { RepeatCandidate } from './cleaning-rules.js';
import { formatWallTime } from '../../snapshot/new-york-time.js';
import type { ServiceRequest } from '../../snapshot/service-request.js';

/** A request that passed the removal rules before the repeat check. */
export interface Candidate extends RepeatCandidate {
  /** created_at as a wall time (sorts like the text). */
  createdWallMs: number;
}

/** Candidates per INSERT statement. */
const BATCH = 200;
/** The page cache of an export's stages, KiB: shared out between the stages when threads write several. */
export const STAGES_CACHE_KIB = 65_536;

/** The stage directories this thread made and has not removed: a stopped command removes them (removeStageDirectories). */
const madeStageDirectories = new Set<string>();

/** A new temporary directory for a stage, under `parentDirectory`. */
export function makeStageDirectory(parentDirectory: string = tmpdir()): string {
  const directory = mkdtempSync(join(parentDirectory, 'snapshot-stage-'));
  madeStageDirectories.add(directory);
  return directory;
}

/** Removes a stage directory (its file with it). */
export function removeStageDirectory(directory: string): void {
  rmSync(directory, { recursive: true, force: true });
  madeStageDirectories.delete(directory);
}

/**
 * Removes every stage directory this thread made and has not removed yet: a snapshot command stopped
 * by a signal would otherwise leave them in the temporary directory (about 300 bytes a request read:
 * gigabytes for a history of tens of millions).
 */
export function removeStageDirectories(): void {
  for (const directory of [...madeStageDirectories]) removeStageDirectory(directory);
}

export class CandidateStage {
  private readonly db: Database.Database;
  private readonly insertBatch: Database.Statement | undefined;
  private readonly pending: (string | number | null)[] = [];
  private staged = 0;

  /**
   * The stage in `directory` (from makeStageDirectory): `new` creates it, to add candidates, with a
   * page cache of `cacheKib`; `finished` opens one that another thread wrote and finished, to read it.
   */
  constructor(
    readonly directory: string,
    state: 'new' | 'finished',
    cacheKib = STAGES_CACHE_KIB,
  ) {
    this.db = new Database(join(this.directory, 'stage.sqlite'));
    if (state === 'finished') return;
    turnOffRollbackJournal(this.db);
    this.db.pragma('synchronous = OFF');
    this.db.pragma('page_size = 16384');
    this.db.pragma(`cache_size = -${Math.max(1024, Math.floor(cacheKib))}`);
    this.db.pragma('temp_store = FILE');
    this.db.exec(
      // The candidate is one JSON text: cheaper to bind and read back than a column per field.
      'CREATE TABLE staged (wall_ms INTEGER NOT NULL, id INTEGER NOT NULL, candidate TEXT NOT NULL, PRIMARY KEY (wall_ms, id)) WITHOUT ROWID',
    );
    this.insertBatch = this.db.prepare(`INSERT INTO staged (wall_ms, id, candidate) VALUES ${Array.from({ length: BATCH }, () => '(?, ?, ?)').join(', ')}`);
    this.db.exec('BEGIN');
  }

  /** Candidates staged so far. */
  get size(): number {
    return this.staged;
  }

  add(candidate: Candidate): void {
    const r = candidate.row;
    // Values without their names: half the text of the object's JSON.
    const values = [
      candidate.createdMs, candidate.repeatKey, r.created_at, r.closed_at, r.status, r.complaint_type, r.descriptor, r.location_type,
      r.borough, r.community_board, r.council_district, r.incident_zip, r.channel, r.latitude, r.longitude, r.days_to_close,
    ];
    this.pending.push(candidate.createdWallMs, r.id, JSON.stringify(values));
    this.staged++;
    if (this.pending.length === BATCH * 3) {
      (this.insertBatch as Database.Statement).run(this.pending);
      this.pending.length = 0;
    }
  }

  /**
   * Store the last candidates (the stage takes no more); returns the created_at of the first and
   * the last candidate in order, or null when none was staged.
   */
  finish(): { first: string; last: string } | null {
    const insertOne = this.db.prepare('INSERT INTO staged (wall_ms, id, candidate) VALUES (?, ?, ?)');
    for (let i = 0; i < this.pending.length; i += 3) insertOne.run(this.pending.slice(i, i + 3));
    this.pending.length = 0;
    this.db.exec('COMMIT');
    const range = this.db.prepare('SELECT min(wall_ms) AS first, max(wall_ms) AS last FROM staged').get() as { first: number | null; last: number | null };
    return range.first === null || range.last === null ? null : { first: formatWallTime(range.first), last: formatWallTime(range.last) };
  }

  /** The staged candidates by created wall time, then id (after `finish`). */
  *sorted(): Generator<Candidate> {
    const select = this.db.prepare('SELECT wall_ms, id, candidate FROM staged ORDER BY wall_ms, id').raw(true);
    for (const [wallMs, id, text] of select.iterate() as IterableIterator<[number, number, string]>) {
      const v = JSON.parse(text) as unknown[];
      const row = {
        id,
        created_at: v[2],
        closed_at: v[3],
        status: v[4],
        complaint_type: v[5],
        descriptor: v[6],
        location_type: v[7],
        borough: v[8],
        community_board: v[9],
        council_district: v[10],
        incident_zip: v[11],
        channel: v[12],
        latitude: v[13],
        longitude: v[14],
        days_to_close: v[15],
      } as ServiceRequest;
      yield { row, createdMs: v[0] as number, repeatKey: v[1] as string | null, createdWallMs: wallMs };
    }
  }

  /** Close the file and keep it, for another thread to read (after `finish`). */
  release(): void {
    if (this.db.open) this.db.close();
  }

  /** Delete the temporary file. */
  close(): void {
    if (this.db.open) this.db.close();
    removeStageDirectory(this.directory);
  }
}

/** The candidates of finished stages as one sequence, by created wall time, then id. */
export function* mergeSortedStages(stages: readonly CandidateStage[]): Generator<Candidate> {
  if (stages.length === 1) {
    yield* (stages[0] as CandidateStage).sorted();
    return;
  }
  const sources = stages.map((stage) => stage.sorted());
  const heads = sources.map((source) => source.next());
  for (;;) {
    let first = -1;
    for (let i = 0; i < heads.length; i++) {
      const head = heads[i] as IteratorResult<Candidate>;
      if (head.done === true) continue;
      const best = first < 0 ? undefined : (heads[first] as IteratorYieldResult<Candidate>).value;
      const c = head.value;
      if (best === undefined || c.createdWallMs < best.createdWallMs || (c.createdWallMs === best.createdWallMs && c.row.id < best.row.id)) first = i;
    }
    if (first < 0) return;
    yield (heads[first] as IteratorYieldResult<Candidate>).value;
    heads[first] = (sources[first] as Generator<Candidate>).next();
  }
}
