import autocannon from 'autocannon';
import { resolve } from 'node:path';
import pg from 'pg';
import { buildRequestsApp } from '../src/services/requests/app.js';
import { readRequestSettings } from '../src/services/requests/settings.js';
import { buildSnapshot } from '../src/ingest/nyc311/build-snapshot.js';
import { ensureSnapshot } from '../src/ingest/nyc311/ensure-snapshot.js';
import { PAGE_OF_1000_CASES, REPO_ROOT, cpuSeconds, encodedSize, keepAlive, keyedGet, sequentialLatency, startChild, walk, type PageCase } from './support.js';

/**
 * The dashboard additions (the dashboard API decisions), on the full synthetic snapshot:
 * - req/s and server CPU per request of a page of 1000 in JSON, CSV and GeoJSON, and of the JSON page
 *   with gzip and with brotli (target: CSV and GeoJSON >= 80% of JSON), with the bytes of each;
 * - the full export (109,915 rows, CSV and GeoJSON): time and the service's RSS growth (targets < 3 s,
 *   < 30 MB on SQLite);
 * - p50 of a page of 50 with each new filter on one connection, SQLite and PostgreSQL (target < 1 ms on
 *   SQLite).
 * The SQLite service runs from the compiled build in its own process (as `npm start` runs it), so that
 * its RSS and CPU are its own; the PostgreSQL figures come from the service in this process over a
 * schema of its own (dropped at the end). Load cases run in rounds, each figure the median round.
 * Usage: npx tsx bench/dashboard-api.ts [seconds per load case, default 2] [rounds, default 3]
 */
const seconds = Number(process.argv[2] ?? 2);
const rounds = Number(process.argv[3] ?? 3);
const KEY = 'bench-key-0123456789';
const postgresUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** One query per new filter (and the repeated and `none` forms), with values the snapshot has. */
const FILTER_QUERIES = [
  'channel=phone',
  'council_district=33',
  'incident_zip=11226',
  'descriptor=Pothole',
  'bbox=-74.0,40.70,-73.95,40.75',
  'borough=none',
  'borough=queens&borough=bronx',
];

interface CaseFigures {
  name: string;
  requestsPerSecond: number;
  cpuMicroseconds: number;
  bytes: number;
}

const sqlitePath = resolve(REPO_ROOT, 'data/service-requests.sqlite');
await ensureSnapshot(sqlitePath);
const service = await startChild('src/services/requests/main.ts', { API_KEY: KEY, DATABASE_URL: sqlitePath, LOG_LEVEL: 'warn' }, '/ready');
const lines: string[] = [];
try {
  const spread = await walk(service.url, '', 1000);
  const pagePaths = (query: string) =>
    ['', ...spread.cursors.map((cursor) => `&cursor=${cursor}`)].map((cursor) => `/v1/service-requests?limit=1000${query}${cursor}`);
  const cases = PAGE_OF_1000_CASES;
  const run = (c: PageCase, durationSeconds: number) =>
    autocannon({
      url: service.url,
      connections: 10,
      duration: durationSeconds,
      requests: pagePaths(c.query).map((path) => ({ method: 'GET' as const, path, headers: { 'x-api-key': KEY, ...c.headers } })),
    });
  for (const c of cases) await run(c, 1); // warm-up: every row's texts in every format
  const perCase = cases.map(() => [] as { requestsPerSecond: number; cpuMicroseconds: number }[]);
  for (let round = 0; round < rounds; round++) {
    for (const [i, c] of cases.entries()) {
      const before = cpuSeconds(service.child.pid!);
      const result = await run(c, seconds);
      const used = cpuSeconds(service.child.pid!) - before;
      perCase[i]!.push({ requestsPerSecond: result.requests.average, cpuMicroseconds: (used / Math.max(1, result.requests.total)) * 1e6 });
    }
  }
  const figures: CaseFigures[] = [];
  for (const [i, c] of cases.entries()) {
    const sorted = [...perCase[i]!].sort((a, b) => a.requestsPerSecond - b.requestsPerSecond);
    const middle = sorted[Math.floor(sorted.length / 2)]!;
    const bytes = await encodedSize(`${service.url}${pagePaths(c.query)[1]}`, KEY, c.headers);
    figures.push({ name: c.name, requestsPerSecond: Math.round(middle.requestsPerSecond), cpuMicroseconds: Math.round(middle.cpuMicroseconds), bytes });
  }
  const json = figures[0]!;
  lines.push('| SQLite, 10 connections | req/s | vs JSON | server CPU µs/request | bytes |', '|---|---:|---:|---:|---:|');
  for (const f of figures) {
    lines.push(`| ${f.name} | ${f.requestsPerSecond} | ${((f.requestsPerSecond / json.requestsPerSecond) * 100).toFixed(0)}% | ${f.cpuMicroseconds} | ${f.bytes} |`);
  }

  // The full export, streamed and discarded by the client; the service's RSS sampled while it runs.
  for (const format of ['csv', 'geojson', 'csv']) {
    const rssBefore = service.rssMb();
    let rssPeak = rssBefore;
    const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, service.rssMb())), 20);
    const started = performance.now();
    const response = await fetch(`${service.url}/v1/exports/service-requests?format=${format}`, { headers: { 'x-api-key': KEY } });
    let bytes = 0;
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) bytes += chunk.byteLength;
    const elapsed = (performance.now() - started) / 1000;
    clearInterval(sampler);
    lines.push(`- full export ${format}: ${(bytes / 1e6).toFixed(1)} MB in ${elapsed.toFixed(2)} s; service RSS ${rssBefore} MB before, peak ${rssPeak} MB (+${rssPeak - rssBefore} MB)`);
  }

  const latencies: string[] = [];
  for (const query of ['', ...FILTER_QUERIES]) {
    const { p50, p99 } = await sequentialLatency(service.url, await filterPaths(service.url, query), 1000, KEY);
    latencies.push(`| ${query || '(none)'} | ${p50} | ${p99} |`);
  }
  lines.push('', '| page of 50, one connection, SQLite | p50 ms | p99 ms |', '|---|---:|---:|', ...latencies);
} finally {
  await service.stop();
}

// PostgreSQL: the same filters, the service in this process.
const schema = `bench_dashboard_${process.pid}`;
const pgUrl = new URL(postgresUrl);
pgUrl.searchParams.set('schema', schema);
try {
  await buildSnapshot({ kind: 'synthetic' }, { kind: 'postgres', url: postgresUrl, schema });
  const app = await buildRequestsApp(readRequestSettings({ API_KEY: KEY, DATABASE_URL: pgUrl.toString(), CURSOR_SECRET: 'bench-cursor-secret-0123456789abcdef' }), {
    logger: false,
  });
  const base = await app.listen({ host: '127.0.0.1', port: 0 });
  try {
    const latencies: string[] = [];
    for (const query of ['', ...FILTER_QUERIES]) {
      const { p50, p99 } = await sequentialLatency(base, await filterPaths(base, query), 1000, KEY);
      latencies.push(`| ${query || '(none)'} | ${p50} | ${p99} |`);
    }
    lines.push('', '| page of 50, one connection, PostgreSQL | p50 ms | p99 ms |', '|---|---:|---:|', ...latencies);
    const started = performance.now();
    const exported = await keyedGet(base, '/v1/exports/service-requests', KEY);
    lines.push(`- full export csv on PostgreSQL: ${(exported.body.length / 1e6).toFixed(1)} MB in ${((performance.now() - started) / 1000).toFixed(2)} s (this process)`);
  } finally {
    await app.close();
  }
} finally {
  keepAlive.destroy();
  const client = new pg.Client({ connectionString: postgresUrl });
  await client.connect();
  await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await client.end();
}

console.log(lines.join('\n'));
console.log(`\nnode ${process.version}, ${rounds} rounds of ${seconds} s per load case (median shown); the load generator shares the machine`);

/** The first page of 50 of the filter and pages from cursors spread over its rows. */
async function filterPaths(base: string, query: string): Promise<string[]> {
  const filtered = await walk(base, query, 1000, KEY);
  const prefix = `/v1/service-requests?${query}${query ? '&' : ''}limit=50`;
  return [prefix, ...filtered.cursors.map((cursor) => `${prefix}&cursor=${cursor}`)];
}
