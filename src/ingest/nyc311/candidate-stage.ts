/**
 * The external sort of the cleaning: the requests that passed the removal rules are staged, as they
 * are read, in a temporary SQLite file (a table clustered on (created wall time, id)), then read back
 * in that order. The process holds one batch, never every request, whatever the export's size; SQLite
 * keeps its page cache bounded and the rest on disk. The file is deleted when the stage is closed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { RepeatCandidate } from './cleaning-rules.js';
import { SERVICE_REQUEST_FIELDS, type ServiceRequest } from './service-request.js';

/** A request that passed the removal rules before the repeat check. */
export interface Candidate extends RepeatCandidate {
  /** created_at as a wall time (sorts like the text). */
  createdWallMs: number;
}

/** Staged columns: the sort key, the repeat check's inputs, then the row's fields but id (untyped: stored as given). */
const ROW_FIELDS = SERVICE_REQUEST_FIELDS.filter((field) => field !== 'id');
const COLUMNS = ['wall_ms', 'id', 'created_ms', 'repeat_key', ...ROW_FIELDS];
/** Candidates per INSERT statement (19 parameters each). */
const BATCH = 50;

export class CandidateStage {
  private readonly directory: string;
  private readonly db: Database.Database;
  private readonly insertBatch: Database.Statement;
  private readonly pending: (string | number | null)[] = [];
  private staged = 0;

  constructor(parentDirectory: string = tmpdir()) {
    this.directory = mkdtempSync(join(parentDirectory, 'snapshot-stage-'));
    this.db = new Database(join(this.directory, 'stage.sqlite'));
    this.db.pragma('journal_mode = OFF');
    this.db.pragma('synchronous = OFF');
    this.db.pragma('page_size = 16384');
    this.db.pragma('cache_size = -65536');
    this.db.pragma('temp_store = FILE');
    this.db.exec(
      `CREATE TABLE staged (wall_ms INTEGER NOT NULL, id INTEGER NOT NULL, created_ms INTEGER NOT NULL, repeat_key TEXT, ${ROW_FIELDS.join(', ')}, PRIMARY KEY (wall_ms, id)) WITHOUT ROWID`,
    );
    const row = `(${COLUMNS.map(() => '?').join(', ')})`;
    this.insertBatch = this.db.prepare(`INSERT INTO staged (${COLUMNS.join(', ')}) VALUES ${Array.from({ length: BATCH }, () => row).join(', ')}`);
    this.db.exec('BEGIN');
  }

  /** Candidates staged so far. */
  get size(): number {
    return this.staged;
  }

  add(candidate: Candidate): void {
    const r = candidate.row;
    this.pending.push(
      candidate.createdWallMs, r.id, candidate.createdMs, candidate.repeatKey,
      r.created_at, r.closed_at, r.status, r.complaint_type, r.descriptor, r.location_type, r.borough, r.community_board,
      r.council_district, r.incident_zip, r.channel, r.latitude, r.longitude, r.days_to_close,
    );
    this.staged++;
    if (this.pending.length === BATCH * COLUMNS.length) {
      this.insertBatch.run(this.pending);
      this.pending.length = 0;
    }
  }

  /**
   * Store the last candidates (the stage takes no more); returns the created_at of the first and
   * the last candidate in order, or null when none was staged.
   */
  finish(): { first: string; last: string } | null {
    const insertOne = this.db.prepare(`INSERT INTO staged (${COLUMNS.join(', ')}) VALUES (${COLUMNS.map(() => '?').join(', ')})`);
    for (let i = 0; i < this.pending.length; i += COLUMNS.length) insertOne.run(this.pending.slice(i, i + COLUMNS.length));
    this.pending.length = 0;
    this.db.exec('COMMIT');
    const first = this.db.prepare('SELECT created_at FROM staged ORDER BY wall_ms, id LIMIT 1').pluck().get() as string | undefined;
    const last = this.db.prepare('SELECT created_at FROM staged ORDER BY wall_ms DESC, id DESC LIMIT 1').pluck().get() as string | undefined;
    return first === undefined || last === undefined ? null : { first, last };
  }

  /** The staged candidates by created wall time, then id (after `finish`). */
  *sorted(): Generator<RepeatCandidate> {
    const select = this.db.prepare(`SELECT id, created_ms, repeat_key, ${ROW_FIELDS.join(', ')} FROM staged ORDER BY wall_ms, id`).raw(true);
    for (const v of select.iterate() as IterableIterator<unknown[]>) {
      const row = {
        id: v[0],
        created_at: v[3],
        closed_at: v[4],
        status: v[5],
        complaint_type: v[6],
        descriptor: v[7],
        location_type: v[8],
        borough: v[9],
        community_board: v[10],
        council_district: v[11],
        incident_zip: v[12],
        channel: v[13],
        latitude: v[14],
        longitude: v[15],
        days_to_close: v[16],
      } as ServiceRequest;
      yield { row, createdMs: v[1] as number, repeatKey: v[2] as string | null };
    }
  }

  /** Delete the temporary file. */
  close(): void {
    if (this.db.open) this.db.close();
    rmSync(this.directory, { recursive: true, force: true });
  }
}
