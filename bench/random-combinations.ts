/**
 * Count, facets and statistics of random filter combinations (two or three equality filters, values
 * drawn from the snapshot, seeded) at 10 connections: every request a different combination, so none
 * is answered from a summary or a kept answer; each is a walk of the rows or a scan of the row
 * columns. For each SQLite snapshot file given, in turn, the compiled service (dist/, as `npm start`
 * runs it) serves the file; the bench reports the start to `/ready`, the statuses, p50 / p90 / p99 /
 * max latency, the longest event-loop block of the service (bench/event-loop-probe.mjs) and its RSS
 * when it turns ready and after the requests:
 *
 *   npx tsx bench/random-combinations.ts [--requests 60] [--connections 10] [--seeds 1,2,3] [--values FILE.sqlite] SNAPSHOT...
 *
 * A SNAPSHOT is a SQLite file or a `postgres://...?schema=NAME` URL; the values are drawn from
 * --values (a SQLite file or a PostgreSQL URL of the same rows), or from the snapshot served: a SQLite
 * file's filter_value_counts, a PostgreSQL snapshot's row_column_values.
 *
 * Before and after in one run: the same build serving a file with row columns and a copy without them
 * (`DROP TABLE row_columns; DROP TABLE row_column_values`), a PostgreSQL snapshot with its row_columns
 * table and with it renamed (`ALTER TABLE row_columns RENAME TO ...`), or a file written by the
 * snapshot command of an earlier commit.
 */
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import pg from 'pg';
import { SeededRandom } from '../src/ingest/nyc311/seeded-random.js';
import { FILTERED_COLUMNS } from '../src/snapshot/snapshot-schema.js';
import { probedRequestsService } from './support.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    requests: { type: 'string', default: '60' },
    connections: { type: 'string', default: '10' },
    seeds: { type: 'string', default: '1,2,3' },
    values: { type: 'string' },
  },
});
const KEY = 'bench-key-0123456789';
const ROUTES = { count: '/v1/service-requests/count', facets: '/v1/facets', daily: '/v1/stats/daily', weekly: '/v1/stats/weekly', monthly: '/v1/stats/monthly' };
const FACET_FIELDS = ['borough', 'status', 'channel', 'complaint_type'];

/**
 * The values of each filtered column: the filter_value_counts of a SQLite file, or the
 * row_column_values of a PostgreSQL snapshot (through the served schema's view).
 */
async function filterValuesOf(source: string): Promise<Map<string, string[]>> {
  let rows: { column_name: string; value: string | number }[];
  if (source.startsWith('postgres://')) {
    const url = new URL(source);
    const schema = url.searchParams.get('schema') ?? 'public';
    url.searchParams.delete('schema');
    const client = new pg.Client({ connectionString: url.toString() });
    await client.connect();
    rows = (await client.query(`SELECT column_name, value FROM "${schema}".row_column_values ORDER BY column_name, code`)).rows;
    await client.end();
  } else {
    const db = new Database(source, { readonly: true });
    rows = db.prepare('SELECT column_name, value FROM filter_value_counts WHERE value IS NOT NULL').all() as typeof rows;
    db.close();
  }
  const valuesOf = new Map<string, string[]>();
  for (const { column_name, value } of rows) valuesOf.set(column_name, [...(valuesOf.get(column_name) ?? []), String(value)]);
  return valuesOf;
}

/** Random paths: a route, two or three equality filters, one value each (of those the snapshot holds). */
async function randomPaths(source: string, seed: number, count: number): Promise<string[]> {
  const valuesOf = await filterValuesOf(source);
  const random = new SeededRandom(seed);
  return Array.from({ length: count }, () => {
    const route = random.pick(Object.keys(ROUTES) as (keyof typeof ROUTES)[]);
    const columns = [...FILTERED_COLUMNS].sort(() => random.next() - 0.5).slice(0, random.int(2, 3));
    const query = columns.map((column) => `${column}=${encodeURIComponent(random.pick(valuesOf.get(column) ?? ['']))}`);
    if (route === 'facets') query.unshift(`field=${random.pick(FACET_FIELDS)}`);
    return `${ROUTES[route]}?${query.join('&')}`;
  });
}

async function serveAndLoad(file: string, seed: number): Promise<string> {
  const service = await probedRequestsService(file, KEY);
  const { base } = service;
  try {
    await service.untilReady();
    const readySeconds = (performance.now() - service.started) / 1000;
    const readyRss = service.rssMb();
    await service.longestBlock();
    const paths = await randomPaths(values.values ?? file, seed, Number(values.requests));
    const latencies: number[] = [];
    const statuses = new Map<number, number>();
    let next = 0;
    await Promise.all(
      Array.from({ length: Number(values.connections) }, async () => {
        for (let i = next++; i < paths.length; i = next++) {
          const sent = performance.now();
          const response = await fetch(`${base}${paths[i] as string}`, { headers: { 'x-api-key': KEY } });
          await response.arrayBuffer();
          latencies.push(performance.now() - sent);
          statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
        }
      }),
    );
    latencies.sort((a, b) => a - b);
    const at = (share: number): string => (latencies[Math.min(latencies.length - 1, Math.floor(share * latencies.length))] as number).toFixed(0);
    const block = await service.longestBlock();
    return `| ${file.startsWith('postgres://') ? `PostgreSQL ${new URL(file).searchParams.get('schema') ?? ''}` : file.split('/').at(-1)} | ${seed} | ${readySeconds.toFixed(2)} | ${[...statuses].map(([status, n]) => `${n} x ${status}`).join(', ')} | ${at(0.5)} / ${at(0.9)} / ${at(0.99)} / ${(latencies.at(-1) as number).toFixed(0)} | ${block.toFixed(1)} | ${readyRss} / ${service.rssMb()} |`;
  } finally {
    await service.stop();
  }
}

console.log('| file | seed | start to ready s | statuses | p50 / p90 / p99 / max ms | longest block ms | RSS at ready / after MB |');
console.log('|---|---:|---:|---|---|---:|---:|');
for (const seed of values.seeds.split(',').map(Number)) {
  for (const file of positionals) console.log(await serveAndLoad(file, seed));
}
