/**
 * Writes the row columns of a SQLite snapshot (src/snapshot/row-columns.ts) as the snapshot writer
 * stores the rows, in list order: one chunk of every array is held, and stored when it is full. When a
 * value does not fit the format, the tables are dropped and the snapshot has no row columns (its walks
 * read the rows).
 */
import type Database from 'better-sqlite3';
import {
  CODED_COLUMNS,
  CREATED_SECONDS,
  DAYS_TO_CLOSE_HUNDREDTHS,
  MAX_CODE,
  NULL_HUNDREDTHS,
  ROW_COLUMN_CHUNK,
  ROW_COLUMN_VALUES_TABLE,
  ROW_COLUMNS_TABLE,
  createRowColumnTablesSql,
  createdSecondsOf,
} from '../../snapshot/row-columns.js';
import type { ServiceRequest } from '../../snapshot/service-request.js';

type Value = string | number;

export class SqliteRowColumnsWriter {
  private readonly codes = CODED_COLUMNS.map(() => new Uint16Array(ROW_COLUMN_CHUNK));
  private readonly codeOf = CODED_COLUMNS.map(() => new Map<Value, number>());
  private readonly created = new Uint32Array(ROW_COLUMN_CHUNK);
  private readonly daysToClose = new Int32Array(ROW_COLUMN_CHUNK);
  private readonly insertChunk: Database.Statement;
  private filled = 0;
  private chunk = 0;
  private fits = true;

  constructor(private readonly db: Database.Database) {
    for (const sql of createRowColumnTablesSql()) db.exec(sql);
    this.insertChunk = db.prepare(`INSERT INTO ${ROW_COLUMNS_TABLE} (column_name, chunk, row_count, bytes_per_row, data) VALUES (?, ?, ?, ?, ?)`);
  }

  /** The next row in list order. */
  add(row: ServiceRequest): void {
    if (!this.fits) return;
    const seconds = createdSecondsOf(row.created_at);
    if (seconds === null) {
      this.fits = false;
      return;
    }
    const at = this.filled;
    for (let c = 0; c < CODED_COLUMNS.length; c++) {
      const value = row[CODED_COLUMNS[c] as (typeof CODED_COLUMNS)[number]];
      let code = 0;
      if (value !== null) {
        const codes = this.codeOf[c] as Map<Value, number>;
        const known = codes.get(value);
        if (known !== undefined) code = known;
        else if (codes.size < MAX_CODE) codes.set(value, (code = codes.size + 1));
        else {
          this.fits = false;
          return;
        }
      }
      (this.codes[c] as Uint16Array)[at] = code;
    }
    this.created[at] = seconds;
    this.daysToClose[at] = row.days_to_close === null ? NULL_HUNDREDTHS : Math.round(row.days_to_close * 100);
    this.filled = at + 1;
    if (this.filled === ROW_COLUMN_CHUNK) this.storeChunk();
  }

  private storeChunk(): void {
    const rows = this.filled;
    if (rows === 0) return;
    CODED_COLUMNS.forEach((column, c) => {
      const codes = (this.codes[c] as Uint16Array).subarray(0, rows);
      // One byte a row when every code of the chunk fits in one.
      let narrow = true;
      for (let i = 0; i < rows && narrow; i++) narrow = (codes[i] as number) < 256;
      const data = narrow ? Buffer.from(Uint8Array.from(codes)) : bytesOf(codes);
      this.insertChunk.run(column, this.chunk, rows, narrow ? 1 : 2, data);
    });
    this.insertChunk.run(CREATED_SECONDS, this.chunk, rows, 4, bytesOf(this.created.subarray(0, rows)));
    this.insertChunk.run(DAYS_TO_CLOSE_HUNDREDTHS, this.chunk, rows, 4, bytesOf(this.daysToClose.subarray(0, rows)));
    this.chunk += 1;
    this.filled = 0;
  }

  /** Stores the last chunk and the values of the codes; without row columns when a value did not fit. */
  finish(): void {
    if (!this.fits) {
      this.db.exec(`DROP TABLE ${ROW_COLUMNS_TABLE}`);
      this.db.exec(`DROP TABLE ${ROW_COLUMN_VALUES_TABLE}`);
      return;
    }
    this.storeChunk();
    const insertValue = this.db.prepare(`INSERT INTO ${ROW_COLUMN_VALUES_TABLE} (column_name, code, value) VALUES (?, ?, ?)`);
    CODED_COLUMNS.forEach((column, c) => {
      for (const [value, code] of this.codeOf[c] as Map<Value, number>) insertValue.run(column, code, value);
    });
  }
}

/** The bytes of a typed array (the platform's order: little-endian on every platform Node runs on). */
function bytesOf(array: Uint16Array | Uint32Array | Int32Array): Buffer {
  return Buffer.from(array.buffer, array.byteOffset, array.byteLength);
}
