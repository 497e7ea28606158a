/**
 * What a closed_at range costs: the app in this process over a SQLite snapshot file, random closed_at
 * ranges (an hour to a year, log-uniform, one in three open on one side; one in three with a
 * borough), each as a first page, a count and a grouping by borough per month, every URL different,
 * sent once by inject; the p50, p90 and max ms of each kind. In-process: no HTTP, no other client.
 *   npx tsx bench/investigations/closed-ranges.ts FILE [ranges=150]
 */
import { buildRequestsApp } from '../../src/services/requests/app.js';
import { readRequestSettings } from '../../src/services/requests/settings.js';
import { SeededRandom } from '../../src/ingest/nyc311/seeded-random.js';
import Database from 'better-sqlite3';

const [file, rangesText = '150'] = process.argv.slice(2);
if (file === undefined) throw new Error('usage: closed-ranges.ts FILE [ranges]');
const key = 'k'.repeat(32);
const settings = readRequestSettings({ DATABASE_URL: file, API_KEY: key, LOG_LEVEL: 'silent' });

const database = new Database(file, { readonly: true });
const { first, last } = database.prepare('SELECT min(closed_at) AS first, max(closed_at) AS last FROM service_requests').get() as { first: string; last: string };
database.close();
const firstMs = Date.parse(`${first}Z`);
const spanMs = Date.parse(`${last}Z`) - firstMs;
const text = (ms: number): string => new Date(ms).toISOString().slice(0, 19);

const random = new SeededRandom(7);
const HOUR = 3_600_000;
const BOROUGHS = ['bronx', 'brooklyn', 'manhattan', 'queens', 'staten_island'];
function closedRange(): string {
  const from = firstMs + Math.floor(random.next() * spanMs);
  const hours = Math.round(Math.exp(random.next() * Math.log(365 * 24)));
  const side = random.int(0, 5);
  const parts = [
    ...(side === 0 ? [] : [`closed_from=${text(from)}`]),
    ...(side === 1 ? [] : [`closed_to=${text(from + hours * HOUR)}`]),
    ...(random.chance(1 / 3) ? [`borough=${random.pick(BOROUGHS)}`] : []),
  ];
  return parts.join('&');
}

const app = await buildRequestsApp(settings);
await app.ready();
const times = new Map<string, number[]>();
const ranges = Number(rangesText);
for (let i = 0; i < ranges; i++) {
  const filters = closedRange();
  for (const [kind, path] of [
    ['first page', `/v1/service-requests?${filters}`],
    ['count', `/v1/service-requests/count?${filters}`],
    ['groups by borough per month', `/v1/stats/groups?by=borough&period=month&${filters}`],
  ] as const) {
    const start = performance.now();
    const answer = await app.inject({ method: 'GET', url: path, headers: { 'x-api-key': key } });
    const ms = performance.now() - start;
    if (answer.statusCode !== 200) throw new Error(`${answer.statusCode} ${path}: ${answer.body}`);
    times.set(kind, [...(times.get(kind) ?? []), ms]);
  }
}
await app.close();

const quantile = (list: number[], q: number): string => ([...list].sort((a, b) => a - b)[Math.min(list.length - 1, Math.floor(q * list.length))] ?? 0).toFixed(1);
console.log(`${ranges} closed_at ranges of ${file}\n\n| kind | p50 ms | p90 ms | max ms |\n|---|---:|---:|---:|`);
for (const [kind, list] of times) console.log(`| ${kind} | ${quantile(list, 0.5)} | ${quantile(list, 0.9)} | ${quantile(list, 1)} |`);
