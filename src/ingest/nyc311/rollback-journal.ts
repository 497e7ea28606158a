import type Database from 'better-sqlite3';

/**
 * Turns the rollback journal off on a database this process writes alone and throws away on any
 * failure. better-sqlite3 opens connections in SQLite's defensive mode, which refuses
 * `journal_mode = OFF` without an error (the mode stays `delete`): so it is allowed for this pragma
 * only. Without it, a `-journal` file sits beside the file for the whole write, and a command
 * stopped by a signal could leave it behind.
 */
export function turnOffRollbackJournal(db: Database.Database): void {
  db.unsafeMode(true);
  try {
    db.pragma('journal_mode = OFF');
  } finally {
    db.unsafeMode(false);
  }
}
