import { resolve } from 'node:path';
import pg from 'pg';
import { dropServedSchema } from '../src/snapshot/postgres-snapshot-pointer.js';
import { buildRequestsApp } from '../src/services/requests/app.js';
import { readRequestSettings } from '../src/services/requests/settings.js';
import { buildSnapshot } from '../src/ingest/nyc311/build-snapshot.js';
import { ensureSnapshot } from '../src/ingest/nyc311/ensure-snapshot.js';
import { buildTicketsApp } from '../src/services/tickets/app.js';
import { readTicketSettings } from '../src/services/tickets/settings.js';
import { REALISTIC_TICKETS } from './realistic-tickets.js';
import { REPO_ROOT, keepAlive, load, sequentialLatency, table, walk, type LoadResult, type Walk } from './support.js';

/**
 * Service-request API speed (the requests throughput target), in one run on loopback: the ticket classifier and this service
 * in this process (logger off), the snapshot on SQLite (data/service-requests.sqlite, built when
 * absent) and loaded into a PostgreSQL schema of its own (dropped at the end).
 * - req/s of POST /v1/classify vs a page of 50 without and with filters (target >= 50% of classify);
 *   the pages start at cursors spread over the whole snapshot;
 * - p50 of a page of 50 on one connection (target < 1 ms);
 * - a full walk of the 109,915 requests in pages of 1000 (target < 3 s).
 * The three load cases run in turns (rounds), and each figure is the median round, so that a busy
 * machine slows them alike.
 * Usage: npx tsx bench/requests.ts [seconds per load case, default 2] [rounds, default 5]
 * PostgreSQL: BENCH_DATABASE_URL, else TEST_DATABASE_URL, else postgres://postgres@127.0.0.1:5432/test.
 */
const seconds = Number(process.argv[2] ?? 2);
const rounds = Number(process.argv[3] ?? 5);
const connections = 10;
const KEY = 'bench-key-0123456789';
const FILTERS = 'borough=brooklyn&status=closed';
const postgresUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

interface BackendFigures {
  backend: string;
  loads: LoadResult[];
  oneConnection: { p50: number; p99: number };
  fullWalk: Walk;
}

/** The median run (by req/s) of several. */
function median(results: LoadResult[]): LoadResult {
  const sorted = [...results].sort((a, b) => a.requestsPerSecond - b.requestsPerSecond);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function measure(backend: string, databaseUrl: string): Promise<BackendFigures> {
  const settings = readRequestSettings({ API_KEY: KEY, DATABASE_URL: databaseUrl, CURSOR_SECRET: 'bench-cursor-secret-0123456789abcdef' });
  const app = await buildRequestsApp(settings, { logger: false });
  const base = await app.listen({ host: '127.0.0.1', port: 0 });
  try {
    // cursors spread over the snapshot (a cursor is not bound to limit)
    const spread = await walk(base, '', 1000);
    const filtered = await walk(base, FILTERS, 1000);
    const plainPaths = ['/v1/service-requests?limit=50', ...spread.cursors.map((c) => `/v1/service-requests?limit=50&cursor=${c}`)];
    const filteredPaths = [`/v1/service-requests?${FILTERS}&limit=50`, ...filtered.cursors.map((c) => `/v1/service-requests?${FILTERS}&limit=50&cursor=${c}`)];
    const asRequests = (paths: string[]) => paths.map((path) => ({ method: 'GET' as const, path, headers: { 'x-api-key': KEY } }));
    await load('warm-up', { url: base, connections, durationSeconds: 1, requests: asRequests(plainPaths) });
    // Rounds of the three cases one after the other, medians kept: a busy machine slows all three alike.
    const runs: LoadResult[][] = [[], [], []];
    for (let round = 0; round < rounds; round++) {
      runs[0]!.push(await load('POST /v1/classify (same run)', { url: ticketsBase, connections, durationSeconds: seconds, requests: classifyRequests }));
      runs[1]!.push(await load(`${backend}: page of 50, no filter`, { url: base, connections, durationSeconds: seconds, requests: asRequests(plainPaths) }));
      runs[2]!.push(await load(`${backend}: page of 50, ${FILTERS}`, { url: base, connections, durationSeconds: seconds, requests: asRequests(filteredPaths) }));
    }
    const loads = runs.map(median);
    const oneConnection = await sequentialLatency(base, plainPaths, 3000, KEY);
    const fullWalk = await walk(base, '', 1000);
    return { backend, loads, oneConnection, fullWalk };
  } finally {
    await app.close();
  }
}

const sqlitePath = resolve(REPO_ROOT, 'data/service-requests.sqlite');
await ensureSnapshot(sqlitePath);

const schema = `bench_requests_${process.pid}`;
const pgUrl = new URL(postgresUrl);
pgUrl.searchParams.set('schema', schema);
const loadStarted = performance.now();
await buildSnapshot({ kind: 'synthetic' }, { kind: 'postgres', url: postgresUrl, schema });
const pgLoadSeconds = (performance.now() - loadStarted) / 1000;

const tickets = await buildTicketsApp(readTicketSettings({ API_KEY: KEY }), { logger: false });
const ticketsBase = await tickets.listen({ host: '127.0.0.1', port: 0 });
const classifyRequests = REALISTIC_TICKETS.map((ticket) => ({
  method: 'POST' as const,
  path: '/v1/classify',
  headers: { 'content-type': 'application/json', 'x-api-key': KEY },
  body: JSON.stringify(ticket),
}));

const figures: BackendFigures[] = [];
try {
  await load('warm-up', { url: ticketsBase, connections, durationSeconds: 1, requests: classifyRequests });
  for (const [backend, url] of [
    ['SQLite', sqlitePath],
    ['PostgreSQL', pgUrl.toString()],
  ] as const) {
    figures.push(await measure(backend, url));
  }
} finally {
  await tickets.close();
  keepAlive.destroy();
  const client = new pg.Client({ connectionString: postgresUrl });
  await client.connect();
  await dropServedSchema(client, schema);
  await client.end();
}

for (const f of figures) {
  const [classify, plain, filtered] = f.loads as [LoadResult, LoadResult, LoadResult];
  const share = (r: LoadResult) => `${((r.requestsPerSecond / classify.requestsPerSecond) * 100).toFixed(0)}%`;
  console.log(`\n### ${f.backend}\n`);
  console.log(table(f.loads));
  console.log(`\n- page of 50 / classify: no filter ${share(plain)}, with filters ${share(filtered)} (target >= 50%)`);
  console.log(`- page of 50 on one connection: p50 ${f.oneConnection.p50} ms, p99 ${f.oneConnection.p99} ms (target p50 < 1 ms)`);
  console.log(`- full walk in pages of 1000: ${f.fullWalk.rows} requests, ${f.fullWalk.pages} pages, ${(f.fullWalk.ms / 1000).toFixed(2)} s (target < 3 s)`);
}
console.log(`\nPostgreSQL load of the synthetic snapshot (generate, clean, COPY, index): ${pgLoadSeconds.toFixed(1)} s`);
console.log(`node ${process.version}, ${rounds} rounds of ${seconds} s per load case (median shown), ${connections} connections, everything in one process on loopback`);
