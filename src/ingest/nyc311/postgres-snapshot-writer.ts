/**
 * Loads a snapshot into PostgreSQL: in one transaction, the snapshot's tables are created in a new
 * snapshot schema, the requests and daily numbers are loaded with COPY, the indexes are built after
 * the load, then ANALYZE, and the served schema is pointed at the new snapshot schema
 * (postgres-snapshot-pointer.ts). Readers see the old snapshot until the commit, and the new one,
 * whole, after it.
 *
 * The served schema is chosen with the `schema` query parameter of the URL
 * (`postgres://user@host/db?schema=nyc311`), default `public`.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import type { SnapshotContent, SnapshotStream, SnapshotSummaries, WriteProgress } from './snapshot-content.js';
import { snapshotMetaValues, streamOf } from './snapshot-content.js';
import { SNAPSHOT_META_COLUMNS, createIndexesSql, createTablesSql, tableName } from '../../snapshot/snapshot-schema.js';
import { beginSnapshotSchema, dropRetiredSnapshotSchemas, publishSnapshotSchema } from '../../snapshot/postgres-snapshot-pointer.js';
import { SERVICE_REQUEST_FIELDS, type ServiceRequest } from '../../snapshot/service-request.js';
import { PostgresSummaryWriter } from './postgres-aggregate-summaries.js';
import { PostgresRowColumnsWriter } from './postgres-row-columns.js';
import { SUMMARY_TABLES, summarySourceOf } from '../../snapshot/aggregate-summaries.js';
import { parsePostgresTarget, type PostgresTarget } from '../../shared/postgres-schema.js';

/** Rows per COPY statement: the summary rows of the buckets closed meanwhile are inserted between two. */
const ROWS_PER_COPY = 100_000;

function copyValue(value: string | number | null): string {
  if (value === null) return '\\N';
  if (typeof value === 'number') return String(value);
  return /[\\\t\n\r]/.test(value)
    ? value.replace(/\\/g, '\\\\').replace(/\t/g, '\\t').replace(/\n/g, '\\n').replace(/\r/g, '\\r')
    : value;
}

function* copyLines<T>(items: Iterable<T>, toValues: (item: T) => (string | number | null)[], onCount?: (n: number) => void): Generator<string> {
  const lines: string[] = [];
  let count = 0;
  for (const item of items) {
    lines.push(toValues(item).map(copyValue).join('\t'));
    count++;
    if (lines.length === 5000) {
      yield lines.join('\n') + '\n';
      lines.length = 0;
      onCount?.(count);
    }
  }
  if (lines.length > 0) yield lines.join('\n') + '\n';
  onCount?.(count);
}

async function copyInto<T>(
  client: pg.ClientBase,
  table: string,
  columns: readonly string[],
  items: Iterable<T>,
  toValues: (item: T) => (string | number | null)[],
  onCount?: (n: number) => void,
): Promise<void> {
  const stream = client.query(copyFrom(`COPY ${table} (${columns.join(', ')}) FROM STDIN`));
  await pipeline(Readable.from(copyLines(items, toValues, onCount)), stream);
}

/**
 * Load the snapshot through an open client into a new snapshot schema and publish it under the served
 * schema `servedSchema` (one transaction, which this function opens): the rows with COPY as they
 * come, the indexes, the post-load step (storeSummaries), then the pointer. Once committed, the
 * snapshot schemas older than the previous one are dropped. Returns the new snapshot schema.
 */
export async function writePostgresSnapshotWithClient(
  client: pg.ClientBase,
  servedSchema: string,
  content: SnapshotContent | SnapshotStream,
  onProgress?: WriteProgress,
): Promise<string> {
  const { rows, rowsExpected, summaries } = streamOf(content);
  await client.query('BEGIN');
  let schema: string;
  try {
    schema = await beginSnapshotSchema(client, servedSchema);
    const t = (name: string): string => tableName('postgres', name, schema);
    for (const sql of createTablesSql('postgres', schema)) await client.query(sql);
    // The aggregate summaries and the row columns are built as the rows pass (in list order); their rows
    // are inserted between COPY statements of ROWS_PER_COPY rows each.
    const summaryWriter = await PostgresSummaryWriter.create(client, schema);
    const rowColumns = await PostgresRowColumnsWriter.create(client, schema);
    const remaining = rows[Symbol.iterator]();
    let written = 0;
    const source = { exhausted: false };
    function* nextRows(): Generator<ServiceRequest> {
      for (let n = 0; n < ROWS_PER_COPY; n += 1) {
        const next = remaining.next();
        if (next.done === true) {
          source.exhausted = true;
          return;
        }
        summaryWriter.add(summarySourceOf(next.value));
        rowColumns.add(next.value);
        yield next.value;
      }
    }
    while (!source.exhausted) {
      const before = written;
      await copyInto(client, t('service_requests'), SERVICE_REQUEST_FIELDS, nextRows(), (r) => SERVICE_REQUEST_FIELDS.map((f) => r[f]), (n) => {
        written = before + n;
        onProgress?.(written, Math.max(written, rowsExpected));
      });
      await summaryWriter.flush();
      await rowColumns.flush();
    }
    onProgress?.(written, written);
    for (const sql of createIndexesSql('postgres', schema)) await client.query(sql);
    await summaryWriter.finish();
    await rowColumns.finish();
    const complete = summaries();
    await storeSummaries(client, schema, complete);
    await publishSnapshotSchema(client, servedSchema, schema, complete.meta.snapshot_id);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
  // The visibility map, which index-only scans (counts, list ids) need to skip the table: set now rather
  // than whenever autovacuum comes (VACUUM cannot run inside the loading transaction). A standby
  // receives it with the WAL.
  // The summary tables too: their covering indexes answer without reading the tables then.
  for (const name of ['service_requests', ...SUMMARY_TABLES]) await client.query(`VACUUM ${tableName('postgres', name, schema)}`);
  await dropRetiredSnapshotSchemas(client, servedSchema);
  return schema;
}

/**
 * The post-load step, once the rows, their indexes and the aggregate summaries are in: the summary
 * tables (daily numbers, complaint-type counts), the cleaning rules, the metadata, then the planner's statistics.
 */
async function storeSummaries(client: pg.ClientBase, schema: string, { dailyStats, complaintTypeCounts, meta }: SnapshotSummaries): Promise<void> {
  const t = (name: string): string => tableName('postgres', name, schema);
  await copyInto(
    client,
    t('daily_stats'),
    ['borough', 'complaint_type', 'day', 'opened', 'closed_within_14_days', 'share_closed_within_14_days', 'median_days_to_close'],
    dailyStats,
    (d) => [d.borough, d.complaint_type, d.day, d.opened, d.closed_within_14_days, d.share_closed_within_14_days, d.median_days_to_close],
  );
  await copyInto(client, t('complaint_type_counts'), ['complaint_type', 'request_count'], complaintTypeCounts, (c) => [c.complaint_type, c.count]);
  await copyInto(
    client,
    t('cleaning_rules'),
    ['position', 'id', 'kind', 'description', 'rows_removed', 'values_changed', 'applied'],
    meta.cleaning_rules.map((rule, i) => ({ rule, position: i + 1 })),
    ({ rule, position }) => [position, rule.id, rule.kind, rule.description, rule.rows_removed, rule.values_changed, rule.applied ? 1 : 0],
  );
  await client.query(
    `INSERT INTO ${t('snapshot_meta')} (id, ${SNAPSHOT_META_COLUMNS.join(', ')}) VALUES (1, ${SNAPSHOT_META_COLUMNS.map((_, i) => `$${i + 1}`).join(', ')})`,
    snapshotMetaValues(meta),
  );
  for (const name of ['service_requests', 'daily_stats', 'complaint_type_counts']) await client.query(`ANALYZE ${t(name)}`);
}

/** Connect to `url` (schema from its `schema` parameter, or `schemaOverride`) and load the snapshot. */
export async function writePostgresSnapshot(
  url: string,
  content: SnapshotContent | SnapshotStream,
  options: { schema?: string; onProgress?: WriteProgress } = {},
): Promise<PostgresTarget> {
  const target = parsePostgresTarget(url, options.schema);
  const client = new pg.Client({ connectionString: target.connectionString });
  await client.connect();
  try {
    await writePostgresSnapshotWithClient(client, target.schema, content, options.onProgress);
  } finally {
    await client.end();
  }
  return target;
}
