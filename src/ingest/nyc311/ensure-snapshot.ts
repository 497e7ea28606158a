/**
 * ensureSnapshot(path): builds the synthetic snapshot at `path` when the file is absent, or was
 * written in another layout than this code's (another SNAPSHOT_SCHEMA_VERSION, or an index of
 * SERVICE_REQUEST_INDEXES missing: an older checkout's file lacks the indexes and summaries the
 * service reads) (used by the service's start command). Safe when several processes call it at once: one builds while the others
 * wait for the file (a lock file `path.lock`, created exclusively); the build goes to a temporary
 * file that is renamed into place, so the file at `path` is always complete. If the lock is stale (a
 * crashed builder) or the wait times out, the waiting process builds itself; a second rename of an
 * identical snapshot is harmless.
 */
import { closeSync, existsSync, mkdirSync, openSync, rmSync, statSync, writeSync } from 'node:fs';
import Database from 'better-sqlite3';
import { dirname, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { BuildSnapshotResult, SnapshotInput } from './build-snapshot.js';
import { repositoryRoot } from '../../shared/repository-root.js';
import { silentProgress, type ProgressReporter } from './progress-reporter.js';
import { SERVICE_REQUEST_INDEXES, SNAPSHOT_SCHEMA_VERSION } from '../../snapshot/snapshot-schema.js';
import { ROW_COLUMNS_TABLE } from '../../snapshot/row-columns.js';

/** The embedded snapshot, relative to the repository root. */
export const DEFAULT_SNAPSHOT_RELATIVE_PATH = 'data/service-requests.sqlite';

/** Absolute path of the embedded snapshot: the service's default database and the snapshot command's default output. */
export function defaultSnapshotPath(): string {
  return resolve(repositoryRoot(), DEFAULT_SNAPSHOT_RELATIVE_PATH);
}

export interface EnsureSnapshotOptions {
  progress?: ProgressReporter;
  /** How long to wait for another process's build before building here (default 120 s). */
  waitMs?: number;
  /** A lock older than this is considered left by a crashed build (default 10 min). */
  staleLockMs?: number;
  /** What to build when absent (default: the synthetic export with its fixed seed). */
  input?: SnapshotInput;
  /** Apply the DOT and period filters (default true). */
  applyFilters?: boolean;
}

export interface EnsureSnapshotResult {
  path: string;
  /** True when this call built the file. */
  built: boolean;
  build: BuildSnapshotResult | null;
}

function tryLock(lockPath: string): boolean {
  try {
    const fd = openSync(lockPath, 'wx');
    writeSync(fd, `${process.pid}\n`);
    closeSync(fd);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

/**
 * Whether a snapshot file of this code's layout is at `path` (absent, unreadable or older: false).
 * The indexes are checked by name besides the version because they derive from FILTERED_COLUMNS: a
 * filter added there makes a file without its index (and so without its value counts and summaries,
 * written by the same build) out of date with no version to bump. So does a file written before the
 * row columns (served, but its combinations walk the rows).
 */
export function isCurrentSnapshot(path: string): boolean {
  if (!existsSync(path)) return false;
  try {
    const db = new Database(path, { readonly: true, fileMustExist: true });
    try {
      if ((db.prepare('SELECT schema_version FROM snapshot_meta').pluck().get() as number | undefined) !== SNAPSHOT_SCHEMA_VERSION) return false;
      const indexes = new Set(db.prepare("SELECT name FROM sqlite_master WHERE type = 'index'").pluck().all());
      const tables = new Set(db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all());
      return Object.keys(SERVICE_REQUEST_INDEXES).every((name) => indexes.has(name)) && tables.has(ROW_COLUMNS_TABLE);
    } finally {
      db.close();
    }
  } catch {
    return false;
  }
}

export async function ensureSnapshot(path: string = defaultSnapshotPath(), options: EnsureSnapshotOptions = {}): Promise<EnsureSnapshotResult> {
  if (isCurrentSnapshot(path)) return { path, built: false, build: null };
  mkdirSync(dirname(path), { recursive: true });
  const lockPath = `${path}.lock`;
  const waitMs = options.waitMs ?? 120_000;
  const staleLockMs = options.staleLockMs ?? 600_000;
  const deadline = Date.now() + waitMs;
  let locked = tryLock(lockPath);
  while (!locked) {
    if (isCurrentSnapshot(path)) return { path, built: false, build: null };
    let lockAge: number;
    try {
      lockAge = Date.now() - statSync(lockPath).mtimeMs;
    } catch {
      // The lock vanished: the other build ended (or failed); try to take it.
      locked = tryLock(lockPath);
      continue;
    }
    if (lockAge > staleLockMs || Date.now() > deadline) break; // build here without the lock
    await sleep(100);
    locked = tryLock(lockPath);
  }
  try {
    if (isCurrentSnapshot(path)) return { path, built: false, build: null };
    // The builder (CSV reading, cleaning, the writers, pg) is loaded only when a snapshot is built, not
    // at every start of the service.
    const { buildSnapshot } = await import('./build-snapshot.js');
    const build = await buildSnapshot(options.input ?? { kind: 'synthetic' }, { kind: 'sqlite', path }, {
      progress: options.progress ?? silentProgress,
      ...(options.applyFilters !== undefined ? { applyFilters: options.applyFilters } : {}),
    });
    return { path, built: true, build };
  } finally {
    if (locked) rmSync(lockPath, { force: true });
  }
}
