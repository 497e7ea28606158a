/**
 * Where a list page's time goes: the app in this process over a SQLite snapshot file, random unique
 * page URLs as bench/full-history.ts draws them (every filter operator), each sent once by inject; the
 * p50 and p90 of the whole request, of the store's parts (the page's ids, its rows) and of the walk
 * threads' jobs, for the pages whose ids were found on the event loop and for those that needed a
 * walk thread. In-process: no HTTP, no other client.
 *   npx tsx bench/investigations/page-parts.ts FILE [pages=400]
 */
import { buildRequestsApp } from '../../src/services/requests/app.js';
import { RowWalkPool } from '../../src/services/requests/engine/sqlite-row-walks.js';
import { readRequestSettings } from '../../src/services/requests/settings.js';
import { SqliteServiceRequestStore } from '../../src/services/requests/store/sqlite-store.js';
import { NEGATION_SYNTAXES, OPERATORS, QueryDraws, routePath, sampleRows, uniquePaths } from '../history-queries.js';

const [file, pagesText = '400'] = process.argv.slice(2);
if (file === undefined) throw new Error('usage: page-parts.ts FILE [pages]');
const key = 'k'.repeat(32);
const settings = readRequestSettings({ DATABASE_URL: file, API_KEY: key, LOG_LEVEL: 'silent' });

/** Milliseconds of each call of each timed method, by label. */
const calls = new Map<string, number[]>();
function timeCalls(target: object, name: string, label: string): void {
  const holder = target as Record<string, (...parameters: unknown[]) => Promise<unknown>>;
  const original = holder[name] as (...parameters: unknown[]) => Promise<unknown>;
  holder[name] = async function (this: unknown, ...parameters: unknown[]) {
    const start = performance.now();
    try {
      return await original.apply(this, parameters);
    } finally {
      calls.set(label, [...(calls.get(label) ?? []), performance.now() - start]);
    }
  };
}
timeCalls(RowWalkPool.prototype, 'run', 'a walk thread job');
timeCalls(SqliteServiceRequestStore.prototype, 'listIds', 'ids');
timeCalls(SqliteServiceRequestStore.prototype, 'rowsById', 'rows by id');

const app = await buildRequestsApp(settings);
await app.ready();
const draws = new QueryDraws(await sampleRows(file, 2000, 49), 7);
const accepted = { operators: new Set(OPERATORS), negation: NEGATION_SYNTAXES[1] ?? null };
const paths = uniquePaths(Number(pagesText), new Set(), () => routePath('pages', draws, accepted, { next: () => 1 }, '0.01'));
const byWay = new Map<string, { whole: number[]; ids: number[] }>();
for (const path of paths) {
  const jobsBefore = calls.get('a walk thread job')?.length ?? 0;
  const start = performance.now();
  const answer = await app.inject({ method: 'GET', url: path, headers: { 'x-api-key': key } });
  const whole = performance.now() - start;
  if (answer.statusCode !== 200) throw new Error(`${answer.statusCode} ${path}: ${answer.body}`);
  const way = (calls.get('a walk thread job')?.length ?? 0) > jobsBefore ? 'a walk thread' : 'the event loop';
  const figures = byWay.get(way) ?? { whole: [], ids: [] };
  figures.whole.push(whole);
  figures.ids.push(calls.get('ids')?.at(-1) ?? 0);
  byWay.set(way, figures);
}
await app.close();

const quantile = (list: number[], q: number): string => ([...list].sort((a, b) => a - b)[Math.min(list.length - 1, Math.floor(q * list.length))] ?? 0).toFixed(2);
const line = (label: string, list: number[]): string => `| ${label} | ${list.length} | ${quantile(list, 0.5)} | ${quantile(list, 0.9)} |`;
console.log(`${paths.length} pages of ${file}\n\n| part | calls | p50 ms | p90 ms |\n|---|---:|---:|---:|`);
console.log(line('every page, whole', [...byWay.values()].flatMap((figures) => figures.whole)));
for (const [way, figures] of byWay) console.log(`${line(`whole page, ids found on ${way}`, figures.whole)}\n${line(`its ids, found on ${way}`, figures.ids)}`);
for (const [label, list] of calls) console.log(line(label, list));

