/**
 * PostgreSQL table layouts for the volume, measured on a loaded snapshot (bench/README.md, "PostgreSQL
 * layout"): the service's own statements (postgres-queries.ts) against the snapshot's service_requests as
 * loaded, then after VACUUM (the visibility map that index-only scans need), then with a BRIN index on
 * created_at added, then on a copy partitioned by month of created_at with the same indexes.
 *
 *   npx tsx bench/postgres-layout.ts postgres://postgres@127.0.0.1:5432/pgrefresh_50x?schema=today
 *
 * One connection, statements one after the other (no concurrency: the layout's own cost), each run
 * `RUNS` times after one warm-up; p50 and p99 in milliseconds. Writes into the database (VACUUM, a
 * BRIN index, a partitioned copy in the schema `<served>_by_month`): for a benchmark database only.
 */
import pg from 'pg';
import { readServedSnapshot } from '../src/snapshot/postgres-snapshot-pointer.js';
import { createIndexesSql, createTablesSql } from '../src/snapshot/snapshot-schema.js';
import { SERVICE_REQUEST_FIELDS } from '../src/snapshot/service-request.js';
import { NO_FILTERS, type ListFilters } from '../src/services/requests/list-filters.js';
import { countQuery, listIdsQuery, numberPlaceholders } from '../src/services/requests/store/postgres-queries.js';
import type { TableLayout, WhereClause } from '../src/services/requests/store/filter-sql.js';
import { parsePostgresTarget, quoteIdentifier } from '../src/shared/postgres-schema.js';

const RUNS = Number(process.env.RUNS ?? 40);
const url = process.argv[2];
if (url === undefined) throw new Error('usage: npx tsx bench/postgres-layout.ts postgres://...?schema=SERVED');
const target = parsePostgresTarget(url);
const client = new pg.Client({ connectionString: target.connectionString });
await client.connect();
// A snapshot loaded before the pointer existed has its tables in the served schema itself.
const served = await readServedSnapshot(client, target.schema).catch(() => null);
const snapshotSchema = served?.schema ?? target.schema;

const { rows: bounds } = await client.query<{ min: string; max: string; n: string }>(
  `SELECT min(created_at), max(created_at), count(*) AS n FROM ${quoteIdentifier(snapshotSchema)}.service_requests`,
);
const { min, max, n } = bounds[0]!;
// Positions for deep pages: the row at the middle of the history.
const { rows: middleRows } = await client.query<{ created_at: string; id: number }>(
  `SELECT created_at, id FROM ${quoteIdentifier(snapshotSchema)}.service_requests ORDER BY created_at, id OFFSET $1 LIMIT 1`,
  [Math.floor(Number(n) / 2)],
);
const middle = middleRows[0]!;
const middleMonth = middle.created_at.slice(0, 7);
const monthStart = `${middleMonth}-01T00:00:00`;
const nextMonth = new Date(`${monthStart}Z`);
nextMonth.setUTCMonth(nextMonth.getUTCMonth() + 1);
const monthEnd = nextMonth.toISOString().slice(0, 19);
const yearStart = `${middle.created_at.slice(0, 4)}-01-01T00:00:00`;
const yearEnd = `${Number(middle.created_at.slice(0, 4)) + 1}-01-01T00:00:00`;
const filters = (changes: Partial<ListFilters>): ListFilters => ({ ...NO_FILTERS, ...changes });

const CASES: { name: string; query: (table: TableLayout) => WhereClause }[] = [
  { name: 'page 51, first', query: (t) => listIdsQuery({ filters: NO_FILTERS, after: null, fetch: 51 }, t) },
  { name: 'page 51, middle of the history', query: (t) => listIdsQuery({ filters: NO_FILTERS, after: middle, fetch: 51 }, t) },
  { name: 'page 51, borough, middle', query: (t) => listIdsQuery({ filters: filters({ borough: ['queens'] }), after: middle, fetch: 51 }, t) },
  { name: 'page 51, one month, middle', query: (t) => listIdsQuery({ filters: filters({ created_from: monthStart, created_to: monthEnd }), after: middle, fetch: 51 }, t) },
  { name: 'count, one month', query: (t) => countQuery(filters({ created_from: monthStart, created_to: monthEnd }), t) },
  { name: 'count, one year', query: (t) => countQuery(filters({ created_from: yearStart, created_to: yearEnd }), t) },
  { name: 'count, one month + borough', query: (t) => countQuery(filters({ borough: ['queens'], created_from: monthStart, created_to: monthEnd }), t) },
  { name: 'count, one year + status', query: (t) => countQuery(filters({ status: ['closed'], created_from: yearStart, created_to: yearEnd }), t) },
];

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function measure(layout: string, table: string): Promise<void> {
  for (const { name, query } of CASES) {
    const { sql, parameters } = query({ name: table, mapCells: false });
    const text = numberPlaceholders(sql);
    await client.query(text, [...parameters]);
    const times: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const started = performance.now();
      await client.query(text, [...parameters]);
      times.push(performance.now() - started);
    }
    times.sort((a, b) => a - b);
    console.log(`| ${layout} | ${name} | ${percentile(times, 50).toFixed(2)} | ${percentile(times, 99).toFixed(2)} |`);
  }
}

async function sizes(layout: string, schema: string): Promise<void> {
  const { rows } = await client.query<{ heap: string; indexes: string; brin: string | null }>(
    `SELECT sum(pg_table_size(c.oid))::bigint AS heap, sum(pg_indexes_size(c.oid))::bigint AS indexes,
            (SELECT sum(pg_relation_size(i.oid)) FROM pg_class i WHERE i.relnamespace = $1::regnamespace AND i.relname LIKE '%brin%') AS brin
     FROM pg_class c WHERE c.relnamespace = $1::regnamespace AND c.relkind = 'r' AND c.relname LIKE 'service_requests%'`,
    [schema],
  );
  const mb = (bytes: string | null): string => (Number(bytes ?? 0) / 2 ** 20).toFixed(0);
  console.log(`| ${layout} | size | table ${mb(rows[0]!.heap)} MB, indexes ${mb(rows[0]!.indexes)} MB, of which BRIN ${mb(rows[0]!.brin)} MB | |`);
}

const table = `${quoteIdentifier(snapshotSchema)}.service_requests`;
console.log(`${n} rows, ${min} to ${max}; middle ${middle.created_at}; month ${monthStart}..${monthEnd}; year ${yearStart}..${yearEnd}; ${RUNS} runs`);
console.log('| layout | statement | p50 ms | p99 ms |\n|---|---|---|---|');
// ALREADY_VACUUMED: the table was vacuumed by an earlier run, so it can no longer be measured as loaded.
if (process.env.ALREADY_VACUUMED === undefined) {
  await measure('as loaded', table);
  await sizes('as loaded', snapshotSchema);
}
{
  let started = performance.now();
  await client.query(`VACUUM (ANALYZE) ${table}`);
  console.log(`| VACUUM | took ${((performance.now() - started) / 1000).toFixed(1)} s | | |`);
  await measure('+ VACUUM', table);
  started = performance.now();
  await client.query(`CREATE INDEX IF NOT EXISTS service_requests_created_at_brin ON ${table} USING brin (created_at)`);
  await client.query(`ANALYZE ${table}`);
  console.log(`| BRIN | built in ${((performance.now() - started) / 1000).toFixed(1)} s | | |`);
  await measure('+ VACUUM + BRIN(created_at)', table);
  await sizes('+ BRIN', snapshotSchema);
  await client.query(`DROP INDEX ${quoteIdentifier(snapshotSchema)}.service_requests_created_at_brin`);
}

// Partitioned by month: the same columns and indexes (created on the parent: one per partition).
const partitioned = `${target.schema}_by_month`;
await client.query(`DROP SCHEMA IF EXISTS ${quoteIdentifier(partitioned)} CASCADE`);
await client.query(`CREATE SCHEMA ${quoteIdentifier(partitioned)}`);
const create = createTablesSql('postgres', partitioned)[0]!.replace('id integer PRIMARY KEY', 'id integer NOT NULL');
await client.query(`${create} PARTITION BY RANGE (created_at)`);
const first = new Date(`${min.slice(0, 7)}-01T00:00:00Z`);
const last = new Date(`${max.slice(0, 7)}-01T00:00:00Z`);
for (const month = first; month <= last; month.setUTCMonth(month.getUTCMonth() + 1)) {
  const from = month.toISOString().slice(0, 19);
  const to = new Date(month);
  to.setUTCMonth(to.getUTCMonth() + 1);
  const name = `service_requests_${from.slice(0, 7).replace('-', '_')}`;
  await client.query(
    `CREATE TABLE ${quoteIdentifier(partitioned)}.${name} PARTITION OF ${quoteIdentifier(partitioned)}.service_requests FOR VALUES FROM ('${from}') TO ('${to.toISOString().slice(0, 19)}')`,
  );
}
const started = performance.now();
await client.query(
  `INSERT INTO ${quoteIdentifier(partitioned)}.service_requests (${SERVICE_REQUEST_FIELDS.join(', ')}) SELECT ${SERVICE_REQUEST_FIELDS.join(', ')} FROM ${table} ORDER BY created_at, id`,
);
// The primary key becomes (id, created_at) on a partitioned table: a unique id needs the partition key.
await client.query(`ALTER TABLE ${quoteIdentifier(partitioned)}.service_requests ADD PRIMARY KEY (id, created_at)`);
for (const sql of createIndexesSql('postgres', partitioned)) await client.query(sql);
await client.query(`VACUUM (ANALYZE) ${quoteIdentifier(partitioned)}.service_requests`);
console.log(`| by month | copied, indexed and vacuumed in ${((performance.now() - started) / 1000).toFixed(1)} s | | |`);
await measure('by month (+ VACUUM)', `${quoteIdentifier(partitioned)}.service_requests`);
await sizes('by month', partitioned);
await client.query(`DROP SCHEMA ${quoteIdentifier(partitioned)} CASCADE`);
await client.end();
