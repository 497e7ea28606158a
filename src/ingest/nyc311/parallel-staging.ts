/**
 * Staging an export on worker threads (staging-worker.ts), for large exports. This thread cuts the
 * text into pieces of whole records and deals them to the workers; each worker parses a piece,
 * screens it (the rules before duplicate_unique_key) and sends back its Unique Keys; this thread
 * takes the pieces' keys in file order, marks the duplicates and sends each piece its marks; the
 * worker then admits the piece into a stage of its own. The stages are read back as one, in order.
 * The result is that of the staging on one thread (stageExportRecords), count for count: only
 * duplicate_unique_key depends on the order of the records, and it is decided here, in file order.
 */
import type { Worker } from 'node:worker_threads';
import { CandidateStage, STAGES_CACHE_KIB, makeStageDirectory, removeStageDirectory } from './candidate-stage.js';
import {
  type CleanedExport,
  type CleaningOptions,
  type CleaningTally,
  type StagedExport,
  markDuplicates,
  mergeRemovalExamples,
  stageOnThisThread,
  stagedExportOf,
} from './clean-export.js';
import { type CleaningCounts, type SpellingTally, UniqueKeySet } from './cleaning-rules.js';
import { type ExportPiece, ExportFormatError } from './export-format-error.js';
import { type ExportFormat, type OpenedExport, openExport } from './export-reader.js';
import type { ExportColumnName } from './export-columns.js';
import { startModuleWorker } from '../../shared/module-worker.js';

/** What a staging worker starts with. */
export interface StagingWorkerData {
  format: ExportFormat;
  header: string[];
  applyFilters: boolean;
  /** Its stage's directory (made, and deleted on failure, by this thread), and its page cache (its share of STAGES_CACHE_KIB). */
  stageDirectory: string;
  cacheKib: number;
}

/** This thread to a worker. */
export type StagingRequest =
  | ({ kind: 'piece'; seq: number } & ExportPiece)
  | { kind: 'admit'; seq: number; duplicates: Uint8Array }
  | { kind: 'finish' };

/** An ExportFormatError as it crosses threads. */
export interface FormatFailure {
  format: 'CSV' | 'JSON' | null;
  line: number | null;
  reason: string;
}

/** A worker to this thread. `failed`: `seq` is the piece's (null when not a piece's), `format` set for an ExportFormatError. */
export type StagingReply =
  | { kind: 'screened'; seq: number; ids: Float64Array; records: number }
  | { kind: 'admitted'; seq: number }
  | ({ kind: 'finished' } & CleaningTally)
  | { kind: 'failed'; seq: number | null; format: FormatFailure | null; reason: string };

/** Pieces a worker holds at most (sent and not yet admitted): what bounds the memory of the staging. */
const PIECES_PER_WORKER = 4;

export interface StagingOptions extends CleaningOptions {
  /** Worker threads that parse and clean (default 0: this thread does everything). */
  threads?: number;
}

/** Read and stage an export's text chunks (any layout: export-reader.ts), for `rows()` to take the cleaned requests out in order. */
export async function stageExportText(chunks: AsyncIterable<string> | Iterable<string>, options: StagingOptions = {}): Promise<StagedExport> {
  const threads = options.threads ?? 0;
  const opened = await openExport(chunks);
  if (threads < 1) return stageOnThisThread(opened, options);
  return stageOnWorkers(opened, threads, options);
}

/** Clean an export's text chunks into an array of requests (for exports that fit in memory: tests, fixtures). */
export async function cleanExportText(chunks: AsyncIterable<string> | Iterable<string>, options: StagingOptions = {}): Promise<CleanedExport> {
  const staged = await stageExportText(chunks, options);
  const rows = [...staged.rows()];
  const { rawRowsRead, layout, format, filtersApplied, latestTimestamp, malformed } = staged;
  return { rows, rules: staged.rules(), report: staged.report(), rawRowsRead, layout, format, filtersApplied, latestTimestamp, malformed };
}

async function stageOnWorkers(opened: OpenedExport, threads: number, options: CleaningOptions): Promise<StagedExport> {
  const applyFilters = options.applyFilters ?? true;
  const { format, header, layout, pieces } = opened;

  const directories: string[] = [];
  const workers: Worker[] = [];
  const inFlight: number[] = [];
  const finished: (CleaningTally | undefined)[] = [];
  const screened = new Map<number, { worker: number; reply: Extract<StagingReply, { kind: 'screened' | 'failed' }> }>();
  const seenKeys = new UniqueKeySet();
  let nextSeq = 0;
  let nextDecision = 0;
  let recordsRead = 0;
  let failure: Error | null = null;
  let stopping = false;
  let wakeUp: (() => void) | null = null;
  const wake = (): void => {
    const resolve = wakeUp;
    wakeUp = null;
    resolve?.();
  };
  const changed = (): Promise<void> => new Promise((resolve) => (wakeUp = resolve));
  const fail = (error: Error): void => {
    failure ??= error;
    wake();
  };
  /** Decide the pieces whose turn has come: duplicate_unique_key in file order. */
  const decide = (): void => {
    for (let entry = screened.get(nextDecision); entry !== undefined && failure === null; entry = screened.get(nextDecision)) {
      screened.delete(nextDecision);
      const { worker, reply } = entry;
      if (reply.kind === 'failed') {
        fail(reply.format === null ? new Error(reply.reason) : new ExportFormatError(reply.format.format, reply.format.line, reply.format.reason));
        return;
      }
      const duplicates = markDuplicates(reply.ids, seenKeys);
      (workers[worker] as Worker).postMessage({ kind: 'admit', seq: nextDecision, duplicates } satisfies StagingRequest, [duplicates.buffer as ArrayBuffer]);
      recordsRead += reply.records;
      nextDecision++;
      options.onRecords?.(recordsRead);
    }
  };
  const until = async (done: () => boolean): Promise<void> => {
    while (!done()) {
      if (failure !== null) throw failure;
      await changed();
    }
    if (failure !== null) throw failure;
  };
  const send = async (piece: ExportPiece): Promise<void> => {
    if (piece.text.length === 0) return;
    let chosen = 0;
    await until(() => {
      for (let w = 1; w < inFlight.length; w++) if ((inFlight[w] as number) < (inFlight[chosen] as number)) chosen = w;
      return (inFlight[chosen] as number) < PIECES_PER_WORKER;
    });
    inFlight[chosen] = (inFlight[chosen] as number) + 1;
    const message: StagingRequest = { kind: 'piece', seq: nextSeq++, ...piece };
    (workers[chosen] as Worker).postMessage(message, piece.bounds === undefined ? [] : [piece.bounds.buffer as ArrayBuffer]);
  };

  try {
    for (let w = 0; w < threads; w++) {
      const stageDirectory = makeStageDirectory(options.stageDirectory);
      directories.push(stageDirectory);
      const worker = startModuleWorker(import.meta.url, 'staging-worker', { format, header, applyFilters, stageDirectory, cacheKib: STAGES_CACHE_KIB / threads } satisfies StagingWorkerData);
      workers.push(worker);
      inFlight.push(0);
      finished.push(undefined);
      worker.on('message', (reply: StagingReply) => {
        if (reply.kind === 'screened' || (reply.kind === 'failed' && reply.seq !== null)) {
          screened.set(reply.seq as number, { worker: w, reply });
          decide();
        } else if (reply.kind === 'failed') {
          fail(new Error(reply.reason));
        } else if (reply.kind === 'admitted') {
          inFlight[w] = (inFlight[w] as number) - 1;
          wake();
        } else {
          const { kind: _finished, ...part } = reply;
          finished[w] = part;
          wake();
        }
      });
      worker.on('error', fail);
      worker.on('exit', (code) => {
        if (!stopping) fail(new Error(`a staging thread stopped before its end (exit code ${code})`));
      });
    }
    for (let next = await pieces.next(); next.done !== true; next = await pieces.next()) await send(next.value);
    await until(() => nextDecision === nextSeq && inFlight.every((n) => n === 0));
    for (const worker of workers) worker.postMessage({ kind: 'finish' } satisfies StagingRequest);
    await until(() => finished.every((part) => part !== undefined));
  } catch (error) {
    stopping = true;
    await Promise.all(workers.map((worker) => worker.terminate()));
    for (const directory of directories) removeStageDirectory(directory);
    throw error;
  }
  stopping = true;
  await Promise.all(workers.map((worker) => worker.terminate()));

  const parts = finished as CleaningTally[];
  const counts = { ...(parts[0] as CleaningTally).counts };
  const spellings = (parts[0] as CleaningTally).spellings;
  for (const part of parts.slice(1)) {
    for (const id of Object.keys(counts) as (keyof CleaningCounts)[]) counts[id] += part.counts[id];
    for (const field of Object.keys(spellings) as (keyof SpellingTally)[]) {
      for (const [value, count] of part.spellings[field]) spellings[field].set(value, (spellings[field].get(value) ?? 0) + count);
    }
  }
  const ranges = parts.flatMap((part) => (part.range === null ? [] : [part.range]));
  const latest = parts.flatMap((part) => (part.latestTimestamp === null ? [] : [part.latestTimestamp]));
  const jsonParts = parts.flatMap((part) => (part.jsonColumns === null ? [] : [part.jsonColumns]));
  return stagedExportOf({
    layout,
    format,
    header,
    examples: mergeRemovalExamples(parts.map((part) => part.examples)),
    jsonColumns:
      jsonParts.length === 0
        ? null
        : { held: [...new Set(jsonParts.flatMap((part) => part.held))] as ExportColumnName[], keys: [...new Set(jsonParts.flatMap((part) => part.keys))] },
    applyFilters,
    stages: directories.map((directory) => new CandidateStage(directory, 'finished')),
    counts,
    spellings,
    rawRowsRead: parts.reduce((sum, part) => sum + part.rawRowsRead, 0),
    latestTimestamp: latest.length === 0 ? null : latest.reduce((a, b) => (b > a ? b : a)),
    candidates: parts.reduce((sum, part) => sum + part.candidates, 0),
    range:
      ranges.length === 0
        ? null
        : { first: ranges.map((r) => r.first).reduce((a, b) => (b < a ? b : a)), last: ranges.map((r) => r.last).reduce((a, b) => (b > a ? b : a)) },
  });
}
