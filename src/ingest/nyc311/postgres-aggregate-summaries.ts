/**
 * The aggregate summaries (aggregate-summaries.ts) of a PostgreSQL snapshot, in the loading
 * transaction: built as the snapshot writer loads the rows (PostgresSummaryWriter, between its COPY
 * statements), or from the loaded rows of a snapshot written without them, read back in
 * (created_at, id) order through a cursor; inserted a batch at a time as arrays (unnest).
 */
import type pg from 'pg';
import {
  AggregateSummaryBuilder,
  SUMMARY_BUCKET_COLUMNS,
  SUMMARY_PAIR_COLUMNS,
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
  if (column === 'opened' || column === 'closed' || column === 'closed_within_14_days' || column === 'requests') return 'integer[]';
  if (column === 'low_middle' || column === 'high_middle' || column === 'p90_days_to_close') return 'double precision[]';
  return 'text[]';
}

async function insertRows(client: pg.ClientBase, table: string, columns: readonly string[], rows: Iterable<SummaryRow>): Promise<void> {
  const arrays = columns.map((column, i) => `$${i + 1}::${arrayTypeOf(column)}`).join(', ');
  const sql = `INSERT INTO ${table} (${columns.join(', ')}) SELECT * FROM unnest(${arrays})`;
  const insert = (batch: SummaryRow[]) => client.query(sql, columns.map((_, i) => batch.map((row) => row[i] ?? null)));
  let batch: SummaryRow[] = [];
  for (const row of rows) {
    batch.push(row);
    if (batch.length === INSERT_BATCH) {
      await insert(batch);
      batch = [];
    }
  }
  if (batch.length > 0) await insert(batch);
}

/**
 * The summary tables of the schema, filled as rows are added in created_at order: `flush` (between two
 * statements of the client: not during a COPY) stores the buckets closed so far, `finish` the rest,
 * then indexes and analyzes the tables. `create` drops any earlier tables and creates them.
 */
export class PostgresSummaryWriter {
  private readonly builder = new AggregateSummaryBuilder();

  private constructor(
    private readonly client: pg.ClientBase,
    private readonly schema: string,
  ) {}

  static async create(client: pg.ClientBase, schema: string): Promise<PostgresSummaryWriter> {
    for (const sql of createSummaryTablesSql('postgres', schema)) await client.query(sql);
    return new PostgresSummaryWriter(client, schema);
  }

  add(row: SummarySourceRow): void {
    this.builder.add(row);
  }

  async flush(): Promise<void> {
    const table = (name: string): string => tableName('postgres', name, this.schema);
    await insertRows(this.client, table('summary_buckets'), SUMMARY_BUCKET_COLUMNS, this.builder.takeBuckets());
    await insertRows(this.client, table('summary_pairs'), SUMMARY_PAIR_COLUMNS, this.builder.takePairs());
    await insertRows(this.client, table('summary_facets'), SUMMARY_FACET_TABLE_COLUMNS, this.builder.takeFacets());
  }

  async finish(): Promise<void> {
    this.builder.finish();
    await this.flush();
    for (const sql of indexSummaryTablesSql('postgres', this.schema)) await this.client.query(sql);
    for (const name of SUMMARY_TABLES) await this.client.query(`ANALYZE ${tableName('postgres', name, this.schema)}`);
  }
}

/** Creates and fills the summary tables of the schema from its loaded service_requests (inside the caller's transaction). */
export async function writePostgresAggregateSummaries(client: pg.ClientBase, schema: string): Promise<void> {
  const writer = await PostgresSummaryWriter.create(client, schema);
  await client.query(
    `DECLARE summary_source NO SCROLL CURSOR FOR SELECT ${summarySourceColumns()} FROM ${tableName('postgres', 'service_requests', schema)} ORDER BY created_at, id`,
  );
  for (;;) {
    const { rows } = await client.query<unknown[]>({ text: `FETCH ${READ_BATCH} FROM summary_source`, rowMode: 'array' });
    for (const row of rows) writer.add(row as SummarySourceRow);
    await writer.flush();
    if (rows.length < READ_BATCH) break;
  }
  await client.query('CLOSE summary_source');
  await writer.finish();
}
