/**
 * The aggregate summaries (aggregate-summaries.ts) of a PostgreSQL snapshot, written into its schema
 * from its loaded rows, in the loading transaction: read back in (created_at, id) order through a
 * cursor, summarised, inserted a batch at a time as arrays (unnest).
 */
import type pg from 'pg';
import {
  AggregateSummaryBuilder,
  SUMMARY_BUCKET_COLUMNS,
  SUMMARY_FACET_TABLE_COLUMNS,
  SUMMARY_TABLES,
  createSummaryTablesSql,
  indexSummaryTablesSql,
  summarySourceColumns,
  type SummaryRow,
  type SummarySourceRow,
} from '../../snapshot/aggregate-summaries.js';
import { tableName } from '../../snapshot/snapshot-schema.js';

/** Rows fetched from the cursor per round trip. */
const READ_BATCH = 20_000;
/** Rows per INSERT (one array parameter per column). */
const INSERT_BATCH = 50_000;

/** The SQL type of each column's array parameter, by the column's name. */
function arrayTypeOf(column: string): string {
  if (column === 'opened' || column === 'closed_within_14_days' || column === 'requests') return 'integer[]';
  if (column === 'low_middle' || column === 'high_middle') return 'double precision[]';
  return 'text[]';
}

async function insertRows(client: pg.ClientBase, table: string, columns: readonly string[], rows: SummaryRow[]): Promise<void> {
  const arrays = columns.map((column, i) => `$${i + 1}::${arrayTypeOf(column)}`).join(', ');
  const sql = `INSERT INTO ${table} (${columns.join(', ')}) SELECT * FROM unnest(${arrays})`;
  for (let start = 0; start < rows.length; start += INSERT_BATCH) {
    const batch = rows.slice(start, start + INSERT_BATCH);
    await client.query(sql, columns.map((_, i) => batch.map((row) => row[i] ?? null)));
  }
}

/** Creates and fills the summary tables of the schema from its service_requests (inside the caller's transaction). */
export async function writePostgresAggregateSummaries(client: pg.ClientBase, schema: string): Promise<void> {
  const table = (name: string): string => tableName('postgres', name, schema);
  for (const sql of createSummaryTablesSql('postgres', schema)) await client.query(sql);
  await client.query(
    `DECLARE summary_source NO SCROLL CURSOR FOR SELECT ${summarySourceColumns()} FROM ${table('service_requests')} ORDER BY created_at, id`,
  );
  const builder = new AggregateSummaryBuilder();
  const write = async (): Promise<void> => {
    await insertRows(client, table('summary_buckets'), SUMMARY_BUCKET_COLUMNS, builder.takeBuckets());
    await insertRows(client, table('summary_facets'), SUMMARY_FACET_TABLE_COLUMNS, builder.takeFacets());
  };
  for (;;) {
    const { rows } = await client.query<unknown[]>({ text: `FETCH ${READ_BATCH} FROM summary_source`, rowMode: 'array' });
    for (const row of rows) builder.add(row as SummarySourceRow);
    await write();
    if (rows.length < READ_BATCH) break;
  }
  await client.query('CLOSE summary_source');
  builder.finish();
  await write();
  for (const sql of indexSummaryTablesSql('postgres', schema)) await client.query(sql);
  for (const name of SUMMARY_TABLES) await client.query(`ANALYZE ${table(name)}`);
}
