/**
 * CPU per answer of the SQLite store (the event loop's time: better-sqlite3 and the keyset index run on
 * it), before and after the aggregate summaries, in one process: the same snapshot without and with
 * its summaries (bench/add-aggregate-summaries.ts). CPU time, unlike latency, does not count the
 * waits for a loaded machine's cores:
 *
 *   npx tsx bench/summaries-cpu.ts --before A.sqlite --after B.sqlite --first-year 2023 [--repeat 5]
 */
import { parseArgs } from 'node:util';
import { readListFilters, type FilterQuery, type ListFilters } from '../src/services/requests/list-filters.js';
import { periodNumbersOf } from '../src/services/requests/engine/summary-answers.js';
import type { ServiceRequestStore } from '../src/services/requests/store/service-request-store.js';
import { SqliteServiceRequestStore } from '../src/services/requests/store/sqlite-store.js';

const { values } = parseArgs({
  options: { before: { type: 'string' }, after: { type: 'string' }, 'first-year': { type: 'string', default: '2025' }, repeat: { type: 'string', default: '5' } },
});
if (values.before === undefined || values.after === undefined) throw new Error('--before and --after are required');
const year = values['first-year'];
const repeat = Number(values.repeat);

const range = `${year}-03-01`;
const CASES: [string, FilterQuery, (store: ServiceRequestStore, filters: ListFilters) => Promise<unknown>][] = [
  ['count, no filter', {}, (store, filters) => store.count(filters)],
  ['count, one filter', { borough: ['bronx'] }, (store, filters) => store.count(filters)],
  ['count, range + one filter', { created_from: range, status: ['closed'] }, (store, filters) => store.count(filters)],
  ['facets, no filter', {}, (store, filters) => store.facet('complaint_type', filters)],
  ['facets, one filter (2 values)', { borough: ['bronx', 'queens'] }, (store, filters) => store.facet('complaint_type', filters)],
  ['facets, range', { created_from: range }, (store, filters) => store.facet('borough', filters)],
  ['weekly, no filter', {}, (store, filters) => weekly(store, filters)],
  ['weekly, one filter', { status: ['closed'] }, (store, filters) => weekly(store, filters)],
  ['monthly, range + one filter', { created_from: range, channel: ['phone'] }, (store, filters) => weekly(store, filters, 'month')],
];

/** What the route does for /v1/stats/weekly (or monthly). */
async function weekly(store: ServiceRequestStore, filters: ListFilters, unit: 'week' | 'month' = 'week'): Promise<unknown> {
  const dataset = await store.dataset();
  return periodNumbersOf(store, filters, unit, { start: dataset.period.start, end: dataset.period.end, snapshotDate: dataset.snapshot_date });
}

/** The median CPU milliseconds of the call (after one call to warm it up). */
async function cpuMs(run: () => Promise<unknown>): Promise<number> {
  await run();
  const samples: number[] = [];
  for (let i = 0; i < repeat; i += 1) {
    const start = process.cpuUsage();
    await run();
    const used = process.cpuUsage(start);
    samples.push((used.user + used.system) / 1000);
  }
  samples.sort((a, b) => a - b);
  return samples[samples.length >> 1] as number;
}

const before = new SqliteServiceRequestStore(values.before);
const after = new SqliteServiceRequestStore(values.after);
await before.warmUp();
const lines = ['| case | CPU ms before | CPU ms after |', '|---|---:|---:|'];
for (const [name, query, call] of CASES) {
  const filters = readListFilters(query);
  const cpuBefore = await cpuMs(() => call(before, filters));
  const cpuAfter = await cpuMs(() => call(after, filters));
  lines.push(`| ${name} | ${cpuBefore.toFixed(1)} | ${cpuAfter.toFixed(2)} |`);
}
process.stdout.write(`${lines.join('\n')}\n`);
await before.close();
await after.close();
