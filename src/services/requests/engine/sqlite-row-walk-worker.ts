/**
 * A worker thread of the SQLite row walks (sqlite-row-walks.ts): it opens the snapshot read-only and
 * runs the statements it is sent (or scans the row columns it was sent and keeps), one at a time, so that walks over millions of rows never hold the
 * service's event loop. It answers `ready` once it runs (the loading of a thread is the slow part of
 * its start; the file is opened at the first job), then one answer per job.
 */
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import type { RowWalkAnswer, RowWalkJob, RowWalkWorkerInput, RowWalkWorkerMessage } from './sqlite-row-walks.js';
import { SqliteFileReplacement } from '../store/sqlite-file-replacement.js';
import { SQLITE_STATEMENT_CHARS, SqliteStatements } from '../store/sqlite-statements.js';
import { registerFilterFunctions } from '../store/sqlite-functions.js';
import { BUCKET_KEY_OF, bucketSummaryOf, packBuckets } from './period-stats.js';
import type { SummaryUnit } from '../../../snapshot/index.js';
import { scanBuckets, scanCells, scanCount, scanFacet, scanPageSeconds, type SharedRowColumns } from './row-column-scan.js';
import { scanGroups } from './group-scan.js';
import { jobEnded, jobStarted } from './walk-thread-garbage.js';

const port = parentPort;
if (port === null) throw new Error('sqlite-row-walk-worker runs as a worker thread');
const send = (message: RowWalkWorkerMessage): void => {
  // The buckets' numbers are moved, not copied.
  const moved: ArrayBuffer[] = [];
  if (message.kind === 'answer' && message.answer.kind === 'buckets') moved.push(message.answer.buckets.numbers.buffer);
  if (message.kind === 'answer' && message.answer.kind === 'groups') moved.push(message.answer.groups.codes.buffer, message.answer.groups.numbers.buffer, message.answer.groups.others.buffer);
  port.postMessage(message, moved);
};

/**
 * The nice value of a walk thread. Walks keep a core busy for up to seconds; on a machine with as many
 * cores as walk threads, the event loop's thread would wait for the scheduler behind them (blocks of
 * 5 to 25 ms measured at 50x, with 2 cores). A higher nice value gives the loop the core whenever it
 * has work; the walks take what is left.
 */
const WALK_THREAD_NICE = 10;

/** Lowers this thread's priority alone (Linux: setpriority of the thread's own id); elsewhere, or when refused, nothing. */
function yieldToTheEventLoop(): void {
  try {
    const threadId = Number(readlinkSync('/proc/thread-self').split('/').at(-1));
    if (Number.isInteger(threadId) && threadId > 0) setPriority(threadId, WALK_THREAD_NICE);
  } catch {
    // Not Linux, or not allowed: the walks keep the default priority.
  }
}
yieldToTheEventLoop();

/** The SQLite file; null in a pool that only scans row columns. */
const path = (workerData as { path: string | null }).path;
let replacement: SqliteFileReplacement | null = null;

/** Opens the file read-only (at the first job, and again after a failure, a refresh or a recycling of the statements). */
function connect(): Database.Database {
  if (path === null) throw new Error('this worker only scans row columns');
  const database = new Database(path, { readonly: true, fileMustExist: true });
  replacement = new SqliteFileReplacement(path);
  database.pragma('query_only = ON');
  // The walks read the file once each: a small page cache, the rest from the OS's file cache.
  database.pragma('cache_size = -8192');
  registerFilterFunctions(database);
  return database;
}

/** The statements of this thread, on its own connection, bounded (sqlite-statements.ts); rows read raw. */
const statements = new SqliteStatements(connect, SQLITE_STATEMENT_CHARS, (prepared) => prepared.raw());

/** The statement of `sql`; a refresh that renamed a new snapshot onto the path is seen first. */
function statement(sql: string): Database.Statement {
  if (replacement?.replaced() === true) statements.close();
  return statements.statement(sql);
}

/** The numbers per bucket of the unit of bucketRowsSql's rows (the local day of created_at, days_to_close). */
function bucketsOf(rows: Iterable<unknown[]>, unit: SummaryUnit): Extract<RowWalkAnswer, { kind: 'buckets' }> {
  const keyOf = BUCKET_KEY_OF[unit];
  const keyOfDay = new Map<string, string>();
  const byBucket = new Map<string, { opened: number; closeDays: number[] }>();
  for (const [day, daysToClose] of rows as Iterable<[string, number | null]>) {
    let key = keyOfDay.get(day);
    if (key === undefined) keyOfDay.set(day, (key = keyOf(day)));
    let group = byBucket.get(key);
    if (group === undefined) byBucket.set(key, (group = { opened: 0, closeDays: [] }));
    group.opened += 1;
    if (daysToClose !== null) group.closeDays.push(daysToClose);
  }
  return { kind: 'buckets', buckets: packBuckets([...byBucket].map(([key, group]) => [key, bucketSummaryOf(group.opened, Float64Array.from(group.closeDays))])) };
}

/** The row columns sent (after a refresh, the pool replaces the worker once no job names the old ones). */
const rowColumns = new Map<number, SharedRowColumns>();

function answerOf(job: RowWalkJob): RowWalkAnswer {
  if ('scan' in job) {
    const columns = rowColumns.get(job.scan.columns);
    if (columns === undefined) throw new Error(`no row columns ${job.scan.columns}`);
    switch (job.kind) {
      case 'count':
        return { kind: 'count', count: scanCount(columns, job.scan) };
      case 'facet':
        return { kind: 'facet', rows: scanFacet(columns, job.scan) };
      case 'buckets':
        return { kind: 'buckets', buckets: scanBuckets(columns, job.scan, job.unit ?? 'day') };
      case 'cells':
        return { kind: 'cells', rows: scanCells(columns, job.scan) };
      case 'groups':
        if (job.scan.groups === undefined) throw new Error('a groups scan needs its grouping');
        return { kind: 'groups', groups: scanGroups(columns, job.scan, job.scan.groups) };
      case 'page seconds':
        return { kind: 'page seconds', ...scanPageSeconds(columns, job.scan) };
      case 'ids':
        throw new Error('a page is not a scan');
    }
  }
  const run = statement(job.sql);
  switch (job.kind) {
    case 'ids':
      return { kind: 'ids', ids: (run.all(...job.parameters) as [number, string][]).map((row) => row[0]) };
    case 'count':
      return { kind: 'count', count: (run.get(...job.parameters) as [number])[0] };
    case 'facet':
      return { kind: 'facet', rows: run.all(...job.parameters) as [string | number | null, number][] };
    case 'cells':
      return { kind: 'cells', rows: run.all(...job.parameters) as [number, number][] };
    case 'buckets':
      return bucketsOf(run.iterate(...job.parameters) as Iterable<unknown[]>, job.unit ?? 'day');
    case 'groups':
      throw new Error('groups are counted from the row columns only');
    case 'page seconds':
      throw new Error('page seconds are found in the row columns only');
  }
}

send({ kind: 'ready' });

port.on('message', (job: RowWalkWorkerInput) => {
  if (job.kind === 'columns') {
    rowColumns.set(job.id, job.columns);
    return;
  }
  if (job.kind === 'statements') {
    send({ kind: 'statements', stats: statements.stats() });
    return;
  }
  jobStarted();
  try {
    const answer = answerOf(job);
    send({ kind: 'answer', id: job.id, answer });
  } catch (error) {
    send({ kind: 'error', id: job.id, message: error instanceof Error ? error.message : String(error) });
  } finally {
    jobEnded();
  }
});
