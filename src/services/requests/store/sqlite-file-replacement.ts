import { statSync, type Stats } from 'node:fs';

const identityOf = (stats: Stats): string => `${stats.dev}:${stats.ino}`;

/**
 * Tells whether the path of an open SQLite file now names another file. A refresh never changes a
 * snapshot file: the snapshot command writes a new file and renames it onto the path
 * (sqlite-snapshot-writer.ts), so an open connection keeps reading the old snapshot, whole, until it
 * is opened again. The path is looked at (one stat) at most once per turn of the event loop: the
 * requests handled in the same turn see the same answer.
 */
export class SqliteFileReplacement {
  /** Device and inode of the file opened, as `dev:ino` (null when the path named no file). */
  private readonly identity: string | null;
  private checked: boolean | null = null;

  /** Call right after opening `path`. */
  constructor(private readonly path: string) {
    const opened = statSync(path, { throwIfNoEntry: false });
    this.identity = opened === undefined ? null : identityOf(opened);
  }

  /** True when the path names another file than the one opened (a missing path is a refresh under way: false). */
  replaced(): boolean {
    if (this.checked === null) {
      const now = statSync(this.path, { throwIfNoEntry: false });
      this.checked = now !== undefined && identityOf(now) !== this.identity;
      setImmediate(() => {
        this.checked = null;
      });
    }
    return this.checked;
  }
}
