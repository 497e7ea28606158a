import type Database from 'better-sqlite3';
import { closeSync, openSync, readSync } from 'node:fs';

const HEADER_BYTES = 28;
const WRITE_VERSION_OFFSET = 18; // 1: rollback journal, 2: WAL
const WAL = 2;
const CHANGE_COUNTER_OFFSET = 24;

/**
 * Tells cheaply whether another connection has changed a SQLite file: `version()` changes when the
 * file's content does. In rollback-journal mode (the snapshot's), every write transaction increments
 * the file change counter, header bytes 24 to 27: reading it is one pread, where `PRAGMA data_version`
 * takes SQLite's file locks, several times the cost and more under load (bench/README.md, "Figures
 * behind source comments").
 * In WAL mode (header byte 18 is 2) the counter is not kept up, and data_version is asked instead.
 * The file is read at most once per turn of the event loop: the requests handled in the same turn
 * see the same version (a change made meanwhile is concurrent with them), every later one sees the
 * change. Under load that is one read for several requests.
 */
export class SqliteFileChanges {
  private readonly fd: number;
  private readonly header = Buffer.alloc(HEADER_BYTES);
  private readonly dataVersion: Database.Statement;

  /** `path` is the file `database` has open. */
  constructor(path: string, database: Database.Database) {
    this.dataVersion = database.prepare('PRAGMA data_version').pluck();
    this.fd = openSync(path, 'r');
  }

  private current: number | null = null;

  version(): number {
    if (this.current === null) {
      this.current = this.readVersion();
      setImmediate(() => {
        this.current = null;
      });
    }
    return this.current;
  }

  private readVersion(): number {
    const read = readSync(this.fd, this.header, 0, HEADER_BYTES, 0);
    if (read === HEADER_BYTES && this.header[WRITE_VERSION_OFFSET] !== WAL) return this.header.readUInt32BE(CHANGE_COUNTER_OFFSET);
    // WAL (or a file too short to hold a header): SQLite's own counter, kept apart from the file's.
    return -1 - (this.dataVersion.get() as number);
  }

  close(): void {
    closeSync(this.fd);
  }
}
