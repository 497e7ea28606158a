/**
 * Stores the row columns of a PostgreSQL snapshot (row-columns-builder.ts) in the loading
 * transaction, as the snapshot writer loads the rows: `flush`, between two of its COPY statements,
 * inserts the chunks completed meanwhile; `finish` the last one and the values of the codes. When a
 * value does not fit the format, the tables are dropped and the snapshot has no row columns (its
 * count, facets and statistics are read by SQL).
 */
import type pg from 'pg';
import { ROW_COLUMN_VALUES_TABLE, ROW_COLUMNS_TABLE, createRowColumnTablesSql } from '../../snapshot/row-columns.js';
import { tableName } from '../../snapshot/snapshot-schema.js';
import type { ServiceRequest } from '../../snapshot/service-request.js';
import { RowColumnsBuilder } from './row-columns-builder.js';

export class PostgresRowColumnsWriter {
  private readonly builder = new RowColumnsBuilder();

  private constructor(
    private readonly client: pg.ClientBase,
    private readonly schema: string,
  ) {}

  static async create(client: pg.ClientBase, schema: string): Promise<PostgresRowColumnsWriter> {
    for (const sql of createRowColumnTablesSql('postgres', schema)) await client.query(sql);
    return new PostgresRowColumnsWriter(client, schema);
  }

  /** The next row in list order. */
  add(row: ServiceRequest): void {
    this.builder.add(row);
  }

  /** Inserts the chunks completed since the last flush (between two statements of the client: not during a COPY). */
  async flush(): Promise<void> {
    const chunks = this.builder.takeChunks();
    if (chunks.length === 0) return;
    await this.client.query(
      `INSERT INTO ${tableName('postgres', ROW_COLUMNS_TABLE, this.schema)} (column_name, chunk, row_count, bytes_per_row, data)
       SELECT * FROM unnest($1::text[], $2::integer[], $3::integer[], $4::integer[], $5::bytea[])`,
      [chunks.map((c) => c.column), chunks.map((c) => c.chunk), chunks.map((c) => c.rowCount), chunks.map((c) => c.bytesPerRow), chunks.map((c) => c.data)],
    );
  }

  /** Stores the last chunk and the values of the codes; without row columns when a value did not fit. */
  async finish(): Promise<void> {
    const values = this.builder.finish();
    const table = (name: string): string => tableName('postgres', name, this.schema);
    if (values === null) {
      await this.client.query(`DROP TABLE ${table(ROW_COLUMNS_TABLE)}, ${table(ROW_COLUMN_VALUES_TABLE)}`);
      return;
    }
    await this.flush();
    await this.client.query(
      `INSERT INTO ${table(ROW_COLUMN_VALUES_TABLE)} (column_name, code, value) SELECT * FROM unnest($1::text[], $2::integer[], $3::jsonb[])`,
      [values.map((v) => v.column), values.map((v) => v.code), values.map((v) => JSON.stringify(v.value))],
    );
  }
}
