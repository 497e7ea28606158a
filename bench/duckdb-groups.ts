/**
 * DuckDB beside the data API (bench/full-history.ts runs it as a process of its own, so that its
 * memory is measured apart): the snapshot's rows in a DuckDB file with ENUM columns, and the same
 * group-by queries as `GET /v1/stats/groups` (bench/history-queries.ts) in SQL.
 *
 *   npx tsx bench/duckdb-groups.ts load SNAPSHOT.sqlite FILE.duckdb
 *   npx tsx bench/duckdb-groups.ts query FILE.duckdb QUERIES.json CONNECTIONS SECONDS
 *
 * load: the rows written as CSV beside FILE.duckdb by the sqlite3 command (Debian's `sqlite3`;
 * DuckDB's sqlite extension is not installed: it is downloaded at run time), read by read_csv into a
 * staging table, then typed in one statement: each text column an ENUM of its values, the times
 * TIMESTAMP; the CSV is removed. Prints `{seconds, exportSeconds, rows, peakRssMb}` (the peak RSS is
 * DuckDB's process's; the sqlite3 command's is apart).
 * query: the queries of QUERIES.json (a JSON array of GroupQuery) in turn on CONNECTIONS connections
 * of one instance until all are answered or SECONDS have passed; prints `{answered, errors, p50Ms,
 * p99Ms, maxMs, peakRssMb}`, the latency from the call to the last row read into JavaScript, and the
 * process's peak RSS (VmHWM) over the run, the file opened included.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, openSync, readFileSync, rmSync } from 'node:fs';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import type { GroupQuery, QueryFilters } from './history-queries.js';

const peakRssMb = (): number => Math.round(Number(/VmHWM:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 0) / 1024);

/** The typed table's columns: ENUMs for the text columns that group or filter, as the issue measured. */
const ENUM_COLUMNS = ['status', 'complaint_type', 'descriptor', 'location_type', 'borough', 'community_board', 'incident_zip', 'channel'] as const;
const TEXT_COLUMNS = ['created_at', 'closed_at', ...ENUM_COLUMNS] as const;
const NUMBER_COLUMNS = ['council_district', 'latitude', 'longitude', 'days_to_close'] as const;

async function load(sqlitePath: string, duckdbPath: string): Promise<void> {
  const started = performance.now();
  const csv = `${duckdbPath}.csv`;
  const columns = [...TEXT_COLUMNS, ...NUMBER_COLUMNS];
  // The sqlite3 command writes the rows as CSV (RFC 4180, null as an empty field) several times faster than rows read into JavaScript and appended.
  const fd = openSync(csv, 'w');
  try {
    execFileSync('sqlite3', ['-readonly', '-csv', '-header', sqlitePath, `SELECT ${columns.join(', ')} FROM service_requests`], { stdio: ['ignore', fd, 'inherit'] });
  } finally {
    closeSync(fd);
  }
  const exported = performance.now();
  const instance = await DuckDBInstance.create(duckdbPath);
  const connection = await instance.connect();
  const types = { ...Object.fromEntries(TEXT_COLUMNS.map((c) => [c, 'VARCHAR'])), council_district: 'INTEGER', latitude: 'DOUBLE', longitude: 'DOUBLE', days_to_close: 'DOUBLE' };
  await connection.run(`CREATE TABLE staging AS SELECT * FROM read_csv('${csv}', header = true, columns = ${JSON.stringify(types).replaceAll('"', "'")})`);
  rmSync(csv);
  const rows = Number((await connection.runAndReadAll('SELECT count(*) AS n FROM staging')).getRowObjects()[0]!.n);
  for (const column of ENUM_COLUMNS) await connection.run(`CREATE TYPE ${column}_enum AS ENUM (SELECT DISTINCT ${column} FROM staging WHERE ${column} IS NOT NULL ORDER BY 1)`);
  await connection.run(
    `CREATE TABLE requests AS SELECT created_at::TIMESTAMP AS created_at, closed_at::TIMESTAMP AS closed_at, ${ENUM_COLUMNS.map((c) => `${c}::${c}_enum AS ${c}`).join(', ')},
       council_district, latitude, longitude, days_to_close FROM staging`,
  );
  await connection.run('DROP TABLE staging');
  await connection.run('CHECKPOINT');
  connection.closeSync();
  instance.closeSync();
  process.stdout.write(`${JSON.stringify({ seconds: (performance.now() - started) / 1000, exportSeconds: (exported - started) / 1000, rows, peakRssMb: peakRssMb() })}\n`);
}

const literal = (value: string | number): string => (typeof value === 'number' ? String(value) : `'${value.replaceAll("'", "''")}'`);
const timestamp = (text: string): string => `TIMESTAMP '${text.replace('T', ' ')}'`;

/** The values of the columns `q` searches, as the ENUM types hold them. */
type SearchValues = Record<'complaint_type' | 'descriptor' | 'location_type', string[]>;

/** The filters as a WHERE clause (the service's semantics: null matches a negation; `q` resolved to values first). */
function whereOf(filters: QueryFilters, search: SearchValues): string {
  const terms: string[] = [];
  for (const [column, values] of filters.equal) {
    const known = values.filter((v): v is string | number => v !== null);
    const parts = [...(known.length > 0 ? [`${column} IN (${known.map(literal).join(', ')})`] : []), ...(known.length < values.length ? [`${column} IS NULL`] : [])];
    terms.push(`(${parts.join(' OR ')})`);
  }
  for (const [column, value] of filters.not) terms.push(`${column} IS DISTINCT FROM ${literal(value)}`);
  if (filters.createdFrom !== undefined) terms.push(`created_at >= ${timestamp(filters.createdFrom)}`);
  if (filters.createdTo !== undefined) terms.push(`created_at < ${timestamp(filters.createdTo)}`);
  if (filters.bbox !== undefined) {
    const [w, s, e, n] = filters.bbox;
    terms.push(`longitude BETWEEN ${w} AND ${e} AND latitude BETWEEN ${s} AND ${n}`);
  }
  if (filters.closed !== undefined) terms.push(`closed_at IS ${filters.closed ? 'NOT ' : ''}NULL`);
  if (filters.closedFrom !== undefined) terms.push(`closed_at >= ${timestamp(filters.closedFrom)}`);
  if (filters.closedTo !== undefined) terms.push(`closed_at < ${timestamp(filters.closedTo)}`);
  if (filters.daysToCloseMin !== undefined) terms.push(`days_to_close >= ${filters.daysToCloseMin}`);
  if (filters.daysToCloseMax !== undefined) terms.push(`days_to_close <= ${filters.daysToCloseMax}`);
  if (filters.near !== undefined) {
    const { latitude, longitude, radiusM } = filters.near;
    // A box around the circle first, then the exact great-circle distance (haversine, mean Earth radius).
    const dLat = radiusM / 111_000 + 0.001;
    const dLong = dLat / Math.cos((latitude * Math.PI) / 180);
    terms.push(
      `latitude BETWEEN ${latitude - dLat} AND ${latitude + dLat} AND longitude BETWEEN ${longitude - dLong} AND ${longitude + dLong}`,
      `2 * 6371008.8 * asin(sqrt(pow(sin(radians(latitude - ${latitude}) / 2), 2) + cos(radians(${latitude})) * cos(radians(latitude)) * pow(sin(radians(longitude - ${longitude}) / 2), 2))) <= ${radiusM}`,
    );
  }
  if (filters.q !== undefined) {
    const q = filters.q.toLowerCase();
    const parts = (Object.keys(search) as (keyof SearchValues)[]).flatMap((column) => {
      const matching = search[column].filter((value) => value.toLowerCase().includes(q));
      return matching.length === 0 ? [] : [`${column} IN (${matching.map(literal).join(', ')})`];
    });
    terms.push(parts.length === 0 ? 'false' : `(${parts.join(' OR ')})`);
  }
  return terms.length === 0 ? '' : `WHERE ${terms.join(' AND ')}`;
}

const PERIOD_SQL: Record<string, string> = {
  day: 'CAST(created_at AS DATE)',
  week: "date_trunc('week', created_at)",
  month: "date_trunc('month', created_at)",
  year: "date_trunc('year', created_at)",
};

/** The measures of a group of rows of `f`. */
const MEASURES = `count(*) AS opened, count(closed_at) AS closed, count(*) FILTER (WHERE days_to_close <= 14) AS closed_within_14_days,
  round(count(*) FILTER (WHERE days_to_close <= 14) / count(*), 4) AS share_closed_within_14_days,
  round(quantile_cont(days_to_close, 0.5), 2) AS median_days_to_close, quantile_disc(days_to_close, 0.9) AS p90_days_to_close`;

/**
 * A group-by query as SQL: the measures of every key (and period), the `limit` keys first by `order`
 * over the whole range, and `others`: the same measures over the rows of every key left out (per
 * period with a period). The median is the mean of the two middle values (quantile_cont 0.5), p90 by
 * nearest rank (quantile_disc 0.9).
 */
export function groupSql(query: GroupQuery, search: SearchValues): string {
  const by = query.by;
  const descending = query.order.startsWith('-');
  const measure = query.order.replace(/^-/, '');
  const same = by.map((c) => `f.${c} IS NOT DISTINCT FROM top.${c}`).join(' AND ');
  const period = query.period === null ? '' : `, ${PERIOD_SQL[query.period]!} AS period`;
  const head = `WITH f AS (SELECT ${by.join(', ')}, created_at, closed_at, days_to_close${period} FROM requests ${whereOf(query.filters, search)}),
  m AS (SELECT ${by.join(', ')}, ${MEASURES} FROM f GROUP BY ALL),
  top AS (SELECT ${by.join(', ')} FROM m ORDER BY ${measure} ${descending ? 'DESC' : 'ASC'} NULLS LAST, ${by.join(', ')} LIMIT ${query.limit})`;
  if (query.period === null) {
    return `${head}
  SELECT true AS kept, m.* FROM m SEMI JOIN top ON ${same.replaceAll('f.', 'm.')}
  UNION ALL SELECT false, ${by.map(() => 'NULL').join(', ')}, ${MEASURES} FROM f ANTI JOIN top ON ${same}`;
  }
  return `${head}
  SELECT t.kept IS NOT NULL AS kept, ${by.map((c) => `CASE WHEN t.kept THEN f.${c} END AS ${c}`).join(', ')}, period, ${MEASURES}
  FROM f LEFT JOIN (SELECT *, true AS kept FROM top) AS t ON ${same.replaceAll('top.', 't.')}
  GROUP BY ALL`;
}

async function query(duckdbPath: string, queriesFile: string, connections: number, seconds: number): Promise<void> {
  const queries = JSON.parse(readFileSync(queriesFile, 'utf8')) as GroupQuery[];
  const instance = await DuckDBInstance.create(duckdbPath, { access_mode: 'READ_ONLY' });
  const first = await instance.connect();
  const search = {} as SearchValues;
  for (const column of ['complaint_type', 'descriptor', 'location_type'] as const) {
    const reader = await first.runAndReadAll(`SELECT unnest(enum_range(NULL::${column}_enum)) AS v`);
    search[column] = reader.getRowObjects().map((row) => String(row.v));
  }
  const pool: DuckDBConnection[] = [first, ...(await Promise.all(Array.from({ length: connections - 1 }, () => instance.connect())))];
  const latencies: number[] = [];
  let errors = 0;
  let firstError = '';
  let next = 0;
  const deadline = performance.now() + seconds * 1000;
  await Promise.all(
    pool.map(async (connection) => {
      for (let i = next++; i < queries.length && performance.now() < deadline; i = next++) {
        const sent = performance.now();
        try {
          const reader = await connection.runAndReadAll(groupSql(queries[i]!, search));
          reader.getRows();
          latencies.push(performance.now() - sent);
        } catch (error) {
          errors++;
          firstError ||= error instanceof Error ? error.message : String(error);
        }
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  const at = (share: number): number => Math.round((latencies[Math.min(latencies.length - 1, Math.ceil(share * latencies.length) - 1)] ?? Number.NaN) * 10) / 10;
  for (const connection of pool) connection.closeSync();
  instance.closeSync();
  process.stdout.write(
    `${JSON.stringify({ answered: latencies.length, errors, firstError, p50Ms: at(0.5), p99Ms: at(0.99), maxMs: at(1), peakRssMb: peakRssMb() })}\n`,
  );
}

const [mode, ...args] = process.argv.slice(2);
if (mode === 'load' && args.length === 2) await load(args[0]!, args[1]!);
else if (mode === 'query' && args.length === 4) await query(args[0]!, args[1]!, Number(args[2]), Number(args[3]));
else throw new Error('usage: duckdb-groups.ts load SNAPSHOT.sqlite FILE.duckdb | query FILE.duckdb QUERIES.json CONNECTIONS SECONDS');
