/**
 * Stores the row columns of a SQLite snapshot (row-columns-builder.ts) as the snapshot writer stores
 * the rows: each full chunk at once. When a value does not fit the format, the tables are dropped
 * and the snapshot has no row columns (its walks read the rows).
 */
import type Database from 'better-sqlite3';
import { ROW_COLUMN_VALUES_TABLE, ROW_COLUMNS_TABLE, createRowColumnTablesSql } from '../../snapshot/row-columns.js';
import type { ServiceRequest } from '../../snapshot/service-request.js';
import { RowColumnsBuilder } from './row-columns-builder.js';

export class SqliteRowColumnsWriter {
  private readonly builder = new RowColumnsBuilder();
  private readonly insertChunk: Database.Statement;

  constructor(private readonly db: Database.Database) {
    for (const sql of createRowColumnTablesSql('sqlite')) db.exec(sql);
    this.insertChunk = db.prepare(`INSERT INTO ${ROW_COLUMNS_TABLE} (column_name, chunk, row_count, bytes_per_row, data) VALUES (?, ?, ?, ?, ?)`);
  }

  /** The next row in list order. */
  add(row: ServiceRequest): void {
    this.builder.add(row);
    this.storeChunks();
  }

  private storeChunks(): void {
    for (const { column, chunk, rowCount, bytesPerRow, data } of this.builder.takeChunks()) this.insertChunk.run(column, chunk, rowCount, bytesPerRow, data);
  }

  /** Stores the last chunk and the values of the codes; without row columns when a value did not fit. */
  finish(): void {
    const values = this.builder.finish();
    if (values === null) {
      this.db.exec(`DROP TABLE ${ROW_COLUMNS_TABLE}`);
      this.db.exec(`DROP TABLE ${ROW_COLUMN_VALUES_TABLE}`);
      return;
    }
    this.storeChunks();
    const insertValue = this.db.prepare(`INSERT INTO ${ROW_COLUMN_VALUES_TABLE} (column_name, code, value) VALUES (?, ?, ?)`);
    for (const { column, code, value } of values) insertValue.run(column, code, value);
  }
}
