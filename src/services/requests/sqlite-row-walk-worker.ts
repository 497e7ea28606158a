/**
 * A worker thread of the SQLite row walks (sqlite-row-walks.ts): it opens the snapshot read-only and
 * runs the statements it is sent, one at a time, so that walks over millions of rows never hold the
 * service's event loop. It answers `ready` once it runs (the loading of a thread is the slow part of
 * its start; the file is opened at the first job), then one answer per job.
 */
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import type { RowWalkAnswer, RowWalkJob, RowWalkWorkerMessage } from './sqlite-row-walks.js';
import { SqliteFileReplacement } from './sqlite-file-replacement.js';

const port = parentPort;
if (port === null) throw new Error('sqlite-row-walk-worker runs as a worker thread');
const send = (message: RowWalkWorkerMessage, transfer: ArrayBuffer[] = []): void => port.postMessage(message, transfer);

const path = (workerData as { path: string }).path;
let database: Database.Database | null = null;
let replacement: SqliteFileReplacement | null = null;

/**
 * The file, opened at the first job (and again after a failure: a missing file may appear later), and
 * again when a refresh renamed a new snapshot onto the path.
 */
function open(): Database.Database {
  if (database?.open === true && replacement?.replaced() === true) database.close();
  if (database === null || !database.open) {
    statements.clear();
    database = new Database(path, { readonly: true, fileMustExist: true });
    replacement = new SqliteFileReplacement(path);
    database.pragma('query_only = ON');
    // The walks read the file once each: a small page cache, the rest from the OS's file cache.
    database.pragma('cache_size = -8192');
  }
  return database;
}

const statements = new Map<string, Database.Statement>();
function statement(sql: string): Database.Statement {
  const connection = open();
  let found = statements.get(sql);
  if (found === undefined) {
    found = connection.prepare(sql).raw();
    statements.set(sql, found);
  }
  return found;
}

/** The day groups of openingsSql's rows: days, openings, and each day's days_to_close as a Float64Array. */
function openingsOf(rows: Iterable<unknown[]>): Extract<RowWalkAnswer, { kind: 'openings' }> {
  const byDay = new Map<string, { opened: number; closeDays: number[] }>();
  for (const [day, daysToClose] of rows as Iterable<[string, number | null]>) {
    let group = byDay.get(day);
    if (group === undefined) {
      group = { opened: 0, closeDays: [] };
      byDay.set(day, group);
    }
    group.opened += 1;
    if (daysToClose !== null) group.closeDays.push(daysToClose);
  }
  const days = [...byDay.keys()];
  const groups = [...byDay.values()];
  return { kind: 'openings', days, opened: groups.map((group) => group.opened), closeDays: groups.map((group) => Float64Array.from(group.closeDays)) };
}

function answerOf(job: RowWalkJob): RowWalkAnswer {
  const run = statement(job.sql);
  switch (job.kind) {
    case 'ids':
      return { kind: 'ids', ids: (run.all(...job.parameters) as [number, string][]).map((row) => row[0]) };
    case 'count':
      return { kind: 'count', count: (run.get(...job.parameters) as [number])[0] };
    case 'facet':
      return { kind: 'facet', rows: run.all(...job.parameters) as [string | number | null, number][] };
    case 'openings':
      return openingsOf(run.iterate(...job.parameters) as Iterable<unknown[]>);
  }
}

send({ kind: 'ready' });

port.on('message', (job: RowWalkJob) => {
  try {
    const answer = answerOf(job);
    // The day arrays are moved, not copied: the service receives them without work on its event loop.
    send({ kind: 'answer', id: job.id, answer }, answer.kind === 'openings' ? answer.closeDays.map((days) => days.buffer as ArrayBuffer) : []);
  } catch (error) {
    send({ kind: 'error', id: job.id, message: error instanceof Error ? error.message : String(error) });
  }
});
