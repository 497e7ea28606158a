/**
 * The requests service's RSS under page traffic: the compiled service (dist/, as `npm start` runs it)
 * serves the snapshot; each page kind is flooded at 10 connections for 4 s (autocannon), then ten
 * clients walk pages of 100 by their cursors (200 pages each, ten different filters), and the RSS is
 * read after each, with the longest event-loop block (bench/event-loop-probe.mjs), and 5 s later:
 *
 *   npx tsx bench/traffic-memory.ts SNAPSHOT
 *
 * A SNAPSHOT is a SQLite file or a `postgres://...?schema=NAME` URL (a 50x history: 2016 to 2025).
 */
import { load, probedRequestsService } from './support.js';

const [snapshot] = process.argv.slice(2);
if (snapshot === undefined) throw new Error('usage: npx tsx bench/traffic-memory.ts SNAPSHOT');
const KEY = 'bench-key-0123456789';
const PAGES = [
  '/v1/service-requests?limit=50',
  '/v1/service-requests?limit=50&borough=bronx',
  '/v1/service-requests?limit=50&created_from=2016-06-01T00:00:00&status=open',
  '/v1/service-requests?limit=50&borough=bronx&channel=online',
  '/v1/service-requests?limit=50&bbox=-73.96,40.67,-73.95,40.68',
  '/v1/service-requests?limit=1000',
  '/v1/service-requests?limit=200&format=csv',
];
const WALK_FILTERS = ['', 'borough=bronx', 'borough=queens', 'status=closed', 'channel=phone', 'borough=brooklyn', 'channel=online', 'status=open', 'borough=manhattan', 'complaint_type=Street%20Condition'];
const WALK_PAGES = 200;

/** Follows next_cursor from the first page of 100 of `filter`, at most WALK_PAGES pages; the pages read. */
async function walk(base: string, filter: string): Promise<number> {
  let cursor: string | null = null;
  let pages = 0;
  while (pages < WALK_PAGES) {
    const query: string = ['limit=100', filter, cursor === null ? '' : `cursor=${encodeURIComponent(cursor)}`].filter(Boolean).join('&');
    const response: Response = await fetch(`${base}/v1/service-requests?${query}`, { headers: { 'x-api-key': KEY } });
    if (response.status !== 200) throw new Error(`a cursor walk got ${response.status}`);
    pages += 1;
    cursor = ((await response.json()) as { next_cursor: string | null }).next_cursor;
    if (cursor === null) break;
  }
  return pages;
}

const service = await probedRequestsService(snapshot, KEY);
try {
  await service.untilReady();
  console.log(`start to ready ${((performance.now() - service.started) / 1000).toFixed(2)} s, RSS ${service.rssMb()} MB`);
  await service.longestBlock();
  console.log('| traffic | pages/s | p50 / p99 ms | non-2xx | longest block ms | RSS after MB |');
  console.log('|---|---:|---|---:|---:|---:|');
  for (const path of PAGES) {
    const result = await load(path, { url: service.base, connections: 10, durationSeconds: 4, requests: [{ method: 'GET', path, headers: { 'x-api-key': KEY } }] });
    console.log(`| \`${path}\` | ${result.requestsPerSecond} | ${result.p50Ms} / ${result.p99Ms} | ${result.non2xx} | ${(await service.longestBlock()).toFixed(1)} | ${service.rssMb()} |`);
  }
  const started = performance.now();
  const pages = (await Promise.all(WALK_FILTERS.map((filter) => walk(service.base, filter)))).reduce((a, b) => a + b, 0);
  const perSecond = Math.round(pages / ((performance.now() - started) / 1000));
  console.log(`| cursor walks: ${pages} pages of 100, 10 clients | ${perSecond} | | 0 | ${(await service.longestBlock()).toFixed(1)} | ${service.rssMb()} |`);
  await new Promise((resolve) => setTimeout(resolve, 5000));
  console.log(`RSS 5 s later: ${service.rssMb()} MB`);
} finally {
  await service.stop();
}
