import type { Worker } from 'node:worker_threads';
import { startModuleWorker } from '../../../shared/module-worker.js';
import { ApiError } from '../../../platform/error-registry.js';
import { OVERLOADED_RETRY_AFTER_SECONDS, awayFromPlace } from '../../../platform/work-budget.js';
import type { WhereClause } from '../store/filter-sql.js';
import type { PackedBuckets } from './period-stats.js';
import type { PackedGroups } from './group-scan.js';
import type { RowColumnBytes, RowColumnScan, ScannedPageSeconds, SharedRowColumns } from './row-column-scan.js';
import { releaseRowColumns } from './row-columns-memory.js';
import type { SummaryUnit } from '../../../snapshot/index.js';
import { DatabaseUnavailableError } from '../store/service-request-store.js';
import { expectedScanWork } from './expected-work.js';

/**
 * The SQLite walks over rows (count, facets, the buckets of the statistics, the list pages that
 * check the rows they walk) and the scans of the row columns (both backends) run in a small pool of
 * worker threads (sqlite-row-walk-worker.ts), each with its own read-only connection, never on the
 * service's event loop: a walk of millions of rows takes seconds, and every other request of the
 * process would wait behind it. The PostgreSQL store's pool has no file: it only scans.
 *
 * Bounded: at most `queue` jobs wait for a worker; one more is refused at once with 503 `overloaded`
 * (Retry-After), and so is a job not answered within `deadlineMs` of its arrival. SQLite cannot be
 * interrupted from another thread, so a worker whose job passed the deadline is ended and replaced.
 *
 * Cheapest first: a free worker takes the waiting scan whose plan expects the least work
 * (expected-work.ts), so that short questions are not answered after long ones that arrived just
 * before them; a job that has waited `cheapestFirstMs` is passed no more: the oldest such job goes
 * first. Statements (no plan to guess from) go in order of arrival, after the scans.
 */
export interface RowWalkPoolLimits {
  workers: number;
  queue: number;
  deadlineMs: number;
  cheapestFirstMs: number;
}

export const ROW_WALK_LIMITS: RowWalkPoolLimits = { workers: 2, queue: 32, deadlineMs: 5_000, cheapestFirstMs: 250 };

/**
 * What a worker is asked: a statement of sqlite-queries.ts and how to read its rows, or a scan of the
 * row columns (sqlite-row-columns.ts) for the same answer.
 */
export type RowWalkJob = { id: number; kind: 'ids' | 'page seconds' | 'count' | 'facet' | 'buckets' | 'cells' | 'groups'; unit?: SummaryUnit } & (
  | { sql: string; parameters: (string | number | null)[] }
  | { scan: RowColumnScan }
);

/** What a job reads: a statement, or a scan of the row columns. */
export type RowWalkWork = WhereClause | { scan: RowColumnScan };

/** What a worker is sent: a job, row columns to keep (the jobs' scans name them by `id`), or a question about its statements. */
export type RowWalkWorkerInput = RowWalkJob | { kind: 'columns'; id: number; columns: SharedRowColumns } | { kind: 'statements' };

/** The statements a worker keeps (sqlite-statements.ts, `stats`). */
export interface WorkerStatementStats {
  statements: number;
  chars: number;
  droppedChars: number;
}

export type RowWalkAnswer =
  | { kind: 'ids'; ids: number[] }
  | ({ kind: 'page seconds' } & ScannedPageSeconds)
  | { kind: 'count'; count: number }
  | { kind: 'facet'; rows: [string | number | null, number][] }
  | { kind: 'buckets'; buckets: PackedBuckets }
  | { kind: 'cells'; rows: [cell: number, count: number][] }
  | { kind: 'groups'; groups: PackedGroups };


export type RowWalkWorkerMessage =
  | { kind: 'ready' }
  | { kind: 'statements'; stats: WorkerStatementStats }
  | { kind: 'answer'; id: number; answer: RowWalkAnswer }
  | { kind: 'error'; id: number; message: string };

/** A scan named row columns that were retired meanwhile (a refresh): planned again on those in use. */
class RetiredRowColumnsError extends Error {}

/** A statement failed in a worker (missing table, unreadable file...). */
export class RowWalkError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RowWalkError';
  }
}

interface PendingJob {
  job: RowWalkJob;
  /** When it arrived (performance.now()) and the work its plan expects (infinity: a statement). */
  arrived: number;
  work: number;
  resolve: (answer: RowWalkAnswer) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

interface PoolWorker {
  thread: Worker;
  started: Promise<void>;
  running: PendingJob | null;
  /** The oldest row columns it was sent (infinity: none). */
  oldestColumns: number;
  /**
   * Given no job any more: it holds row columns no job names (ended once idle), or its job passed the
   * deadline (ended at once); replaced by a fresh worker when its exit is seen.
   */
  retiring: boolean;
  /** Those waiting for the worker's statement stats, in order. */
  statementAnswers: ((stats: WorkerStatementStats) => void)[];
}

/** A worker thread of the walks, on the snapshot at `path`. */
function startWorker(path: string | null): Worker {
  return startModuleWorker(import.meta.url, 'sqlite-row-walk-worker', { path });
}

function overloaded(): ApiError {
  return new ApiError('overloaded', { headers: { 'Retry-After': String(OVERLOADED_RETRY_AFTER_SECONDS) } });
}

export class RowWalkPool {
  private readonly workers: PoolWorker[] = [];
  private readonly waiting: PendingJob[] = [];
  private nextId = 1;
  private closed = false;
  private starting: Promise<void> | null = null;
  private isReady = false;
  /** The row columns sent last, sent again to a worker that replaces one. */
  private rowColumns: Extract<RowWalkWorkerInput, { kind: 'columns' }> | null = null;
  /** The row columns numbered below this are retired: the workers that held them were replaced. */
  private retiredBelow = 0;
  /** The bytes of the row columns sent and not retired, by number: released when retired or closed. */
  private readonly sharedBytes = new Map<number, RowColumnBytes>();

  /** `path`: the SQLite file the statements read; null for a pool that only scans row columns (PostgreSQL). */
  constructor(
    private readonly path: string | null,
    private readonly limits: RowWalkPoolLimits = ROW_WALK_LIMITS,
  ) {}

  /** Whether every worker runs (a walk would start at once). */
  get ready(): boolean {
    return this.isReady;
  }

  /** Jobs running and waiting (metrics, tests). */
  get load(): { running: number; waiting: number } {
    return { running: this.workers.filter((worker) => worker.running !== null).length, waiting: this.waiting.length };
  }

  /** Starts the workers (once); resolves when each runs, rejects when one cannot start. */
  start(): Promise<void> {
    if (this.closed) return Promise.reject(new Error('the row walk pool is closed'));
    this.starting ??= Promise.all(Array.from({ length: this.limits.workers }, () => this.spawn().started)).then(
      () => {
        this.isReady = true;
        this.recycleWorkers();
      },
      (error: unknown) => {
        // A thread that could not start: the next start tries again.
        this.starting = null;
        void this.stopWorkers();
        throw error;
      },
    );
    return this.starting;
  }

  /**
   * Sends row columns to every worker (and to those started later), once: a message that carries
   * shared memory costs milliseconds of this thread. Returns the number the scans name them by.
   */
  shareRowColumns(columns: SharedRowColumns): number {
    const { bytes, codes, created, daysToClose, closed, latitude, longitude, lateClosings } = columns;
    this.rowColumns = { kind: 'columns', id: (this.rowColumns?.id ?? 0) + 1, columns: { bytes, codes, created, daysToClose, closed, latitude, longitude, lateClosings } };
    this.sharedBytes.set(this.rowColumns.id, bytes);
    for (const worker of this.workers) {
      worker.thread.postMessage(this.rowColumns);
      worker.oldestColumns = Math.min(worker.oldestColumns, this.rowColumns.id);
    }
    this.recycleWorkers();
    return this.rowColumns.id;
  }

  /**
   * Once no job waiting or running names row columns older than those sent last (a refresh), each
   * worker that holds older ones is replaced by a fresh one, which holds the new ones only: a worker
   * that merely forgot the old ones would keep their memory until its next full collection, which an
   * idle worker may never run. A busy worker is replaced when its job ends; nothing is replaced
   * before the pool is ready. A scan planned on the old ones later is refused
   * (RetiredRowColumnsError) and planned again by `scan`.
   */
  private recycleWorkers(): void {
    const current = this.rowColumns?.id;
    if (current === undefined || !this.isReady || (this.sharedBytes.size === 1 && this.workers.every((worker) => worker.oldestColumns >= current))) return;
    const named = (pending: PendingJob | null): boolean => pending !== null && 'scan' in pending.job && pending.job.scan.columns < current;
    if (this.waiting.some(named) || this.workers.some((worker) => named(worker.running))) return;
    this.retiredBelow = current;
    // No job reads them any more, and none can be sent them (RetiredRowColumnsError).
    for (const [id, bytes] of this.sharedBytes) {
      if (id >= current) continue;
      releaseRowColumns(bytes);
      this.sharedBytes.delete(id);
    }
    for (const worker of this.workers) {
      if (worker.oldestColumns >= current) continue;
      worker.retiring = true;
      if (worker.running === null) void worker.thread.terminate();
    }
  }

  private spawn(): PoolWorker {
    const thread = startWorker(this.path);
    // Messages wait for the thread to run: the columns come before any job.
    if (this.rowColumns !== null) thread.postMessage(this.rowColumns);
    let settleStart: { resolve: () => void; reject: (error: Error) => void } | null = null;
    const started = new Promise<void>((resolve, reject) => {
      settleStart = { resolve, reject };
    });
    const worker: PoolWorker = { thread, started, running: null, oldestColumns: this.rowColumns?.id ?? Number.POSITIVE_INFINITY, retiring: false, statementAnswers: [] };
    thread.on('message', (message: RowWalkWorkerMessage) => {
      if (message.kind === 'ready') settleStart?.resolve();
      else if (message.kind === 'statements') worker.statementAnswers.shift()?.(message.stats);
      else this.finish(worker, message);
    });
    thread.on('error', (error) => {
      settleStart?.reject(error);
      this.replace(worker, error);
    });
    thread.on('exit', () => {
      settleStart?.reject(new RowWalkError('the worker stopped before it was ready'));
      this.replace(worker, new RowWalkError('the worker stopped'));
    });
    this.workers.push(worker);
    return worker;
  }

  /** A worker that stopped: its job fails, a new worker takes its place (unless the pool is closing). */
  private replace(worker: PoolWorker, error: Error): void {
    const at = this.workers.indexOf(worker);
    if (at < 0) return;
    this.workers.splice(at, 1);
    const job = worker.running;
    worker.running = null;
    if (job !== null) {
      clearTimeout(job.timer);
      job.reject(error);
    }
    if (this.closed || !this.isReady) return;
    const fresh = this.spawn();
    fresh.started.then(
      () => this.dispatch(),
      () => undefined,
    );
  }

  private finish(worker: PoolWorker, message: Extract<RowWalkWorkerMessage, { id: number }>): void {
    const job = worker.running;
    if (job === null || job.job.id !== message.id) return;
    worker.running = null;
    clearTimeout(job.timer);
    if (message.kind === 'answer') job.resolve(message.answer);
    else job.reject(new RowWalkError(message.message));
    this.recycleWorkers();
    if (worker.retiring) void worker.thread.terminate();
    this.dispatch();
  }

  /** Runs a statement or a scan in a worker; rejects with 503 overloaded past the queue or the deadline. */
  run(kind: RowWalkJob['kind'], work: RowWalkWork, unit?: SummaryUnit): Promise<RowWalkAnswer> {
    if (this.closed) return Promise.reject(new Error('the row walk pool is closed'));
    if (this.waiting.length >= this.limits.queue) return Promise.reject(overloaded());
    // The build that asked gives its work budget's place back while the job waits and runs (WorkBudget.holding).
    return awayFromPlace(this.start().then(
      () =>
        new Promise<RowWalkAnswer>((resolve, reject) => {
          if ('scan' in work && work.scan.columns < this.retiredBelow) {
            reject(new RetiredRowColumnsError(`the row columns ${work.scan.columns} were retired`));
            return;
          }
          const read = 'scan' in work ? { scan: work.scan } : { sql: work.sql, parameters: work.parameters as (string | number | null)[] };
          const job: RowWalkJob = { id: this.nextId++, kind, ...read, ...(unit === undefined ? {} : { unit }) };
          const expected = 'scan' in work ? expectedScanWork(kind, work.scan) : Number.POSITIVE_INFINITY;
          const pending: PendingJob = { job, arrived: performance.now(), work: expected, resolve, reject, timer: setTimeout(() => this.expire(pending), this.limits.deadlineMs) };
          this.waiting.push(pending);
          this.dispatch();
        }),
    ));
  }

  /** A job past its deadline: out of the queue, or its worker ended (and replaced). */
  private expire(pending: PendingJob): void {
    const at = this.waiting.indexOf(pending);
    if (at >= 0) {
      this.waiting.splice(at, 1);
      pending.reject(overloaded());
      return;
    }
    const worker = this.workers.find((candidate) => candidate.running === pending);
    if (worker === undefined) return;
    worker.running = null;
    // Until its exit is seen (then it is replaced), dispatch must not give it the next job.
    worker.retiring = true;
    pending.reject(overloaded());
    void worker.thread.terminate();
    this.recycleWorkers();
  }

  private dispatch(): void {
    for (const worker of this.workers) {
      if (this.waiting.length === 0) return;
      if (worker.running !== null || worker.retiring) continue;
      const [pending] = this.waiting.splice(this.nextWaiting(), 1) as [PendingJob];
      worker.running = pending;
      worker.thread.postMessage(pending.job);
    }
  }

  /** The waiting job to run next: the oldest when it has waited cheapestFirstMs, else the least expected work (the first of equals). */
  private nextWaiting(): number {
    const oldest = this.waiting[0] as PendingJob;
    if (performance.now() - oldest.arrived >= this.limits.cheapestFirstMs) return 0;
    let next = 0;
    for (let at = 1; at < this.waiting.length; at++) if ((this.waiting[at] as PendingJob).work < (this.waiting[next] as PendingJob).work) next = at;
    return next;
  }

  private async stopWorkers(): Promise<void> {
    const workers = this.workers.splice(0);
    await Promise.all(workers.map((worker) => worker.thread.terminate()));
  }

  /** Runs a job as `run`; a failure other than 503 overloaded becomes DatabaseUnavailableError. */
  async answer<K extends RowWalkAnswer['kind']>(kind: K, work: RowWalkWork, unit?: SummaryUnit): Promise<Extract<RowWalkAnswer, { kind: K }>> {
    try {
      return (await this.run(kind, work, unit)) as Extract<RowWalkAnswer, { kind: K }>;
    } catch (error) {
      throw error instanceof ApiError ? error : new DatabaseUnavailableError(error);
    }
  }

  /**
   * Runs the scan that `plan` makes of the row columns in use, with its answer; null when `plan` has
   * none (the caller walks or asks SQL). A plan whose columns were retired meanwhile (a refresh) is
   * made again, once: on the columns in use then.
   */
  async scan<K extends RowWalkAnswer['kind'], P extends { scan: RowColumnScan }>(
    kind: K,
    plan: () => Promise<P | null>,
    unit?: SummaryUnit,
  ): Promise<{ plan: P; answer: Extract<RowWalkAnswer, { kind: K }> } | null> {
    for (let attempt = 1; ; attempt += 1) {
      const planned = await plan();
      if (planned === null) return null;
      try {
        return { plan: planned, answer: (await this.run(kind, { scan: planned.scan }, unit)) as Extract<RowWalkAnswer, { kind: K }> };
      } catch (error) {
        if (error instanceof RetiredRowColumnsError && attempt === 1) continue;
        throw error instanceof ApiError ? error : new DatabaseUnavailableError(error);
      }
    }
  }

  /** The statements each worker keeps (answered between its jobs; tests). */
  statementStats(): Promise<WorkerStatementStats[]> {
    return Promise.all(
      this.workers.map(
        (worker) =>
          new Promise<WorkerStatementStats>((resolve) => {
            worker.statementAnswers.push(resolve);
            worker.thread.postMessage({ kind: 'statements' } satisfies RowWalkWorkerInput);
          }),
      ),
    );
  }

  /** Ends the workers; waiting and running jobs fail. */
  async close(): Promise<void> {
    this.closed = true;
    this.isReady = false;
    for (const pending of this.waiting.splice(0)) {
      clearTimeout(pending.timer);
      pending.reject(new Error('the row walk pool is closed'));
    }
    await this.stopWorkers();
    for (const bytes of this.sharedBytes.values()) releaseRowColumns(bytes);
    this.sharedBytes.clear();
  }
}
