/**
 * Floods of one route at 20 connections (docs/reliability.md, "Work budgets"): for every route kind of
 * test/reliability/flood.ts, the longest /health answer, the median of the service's cheapest /v1
 * route, the flooded route's answers per second and its 503 overloaded answers.
 *
 *   npx tsx bench/flood.ts [--seconds 3] [--before DIR] [--only NAME]
 *
 * `--before DIR`: a checkout of another commit (`git worktree add DIR <commit>`, its node_modules a
 * link to this one's); each route is then flooded on that tree's service and on this one's, one after
 * the other, in the same run. Services run from their sources (tsx), requests on the full synthetic
 * snapshot (data/service-requests.sqlite, built when absent), their log lines dropped.
 */
import { resolve } from 'node:path';
import { ensureDefaultSnapshot } from '../src/services/requests/default-snapshot.js';
import { FLOOD_ROUTES, flood, floodTable, startFloodTarget, type FloodResult, type FloodTarget } from '../test/reliability/flood.js';
import { REPO_ROOT } from './support.js';

const KEY = 'flood-bench-key-0123';

function option(name: string): string | undefined {
  const at = process.argv.indexOf(name);
  return at >= 0 ? process.argv[at + 1] : undefined;
}

const seconds = Number(option('--seconds') ?? 3);
const before = option('--before');
const only = option('--only');
const snapshot = resolve(REPO_ROOT, 'data/service-requests.sqlite');
await ensureDefaultSnapshot(snapshot);

const trees = [...(before === undefined ? [] : [{ label: 'before', root: resolve(before) }]), { label: 'after', root: REPO_ROOT }];


const results = new Map<string, FloodResult[]>(trees.map(({ label }) => [label, []]));
for (const service of ['tickets', 'houses', 'requests'] as const) {
  const routes = FLOOD_ROUTES.filter((route) => route.service === service && (only === undefined || route.name.includes(only)));
  if (routes.length === 0) continue;
  const running = await Promise.all(trees.map(({ root }) => startFloodTarget(root, service, { API_KEY: KEY, DATABASE_URL: snapshot })));
  try {
    for (const route of routes) {
      for (const [index, { label }] of trees.entries()) {
        const result = await flood((running[index] as FloodTarget).baseUrl, route, KEY, seconds);
        results.get(label)?.push(result);
        process.stderr.write(`${label} ${service} ${route.name}: health max ${result.healthMaxMs.toFixed(1)} ms, cheap p50 ${result.cheapP50Ms.toFixed(1)} ms, ${result.floodedPerSecond.toFixed(0)} answers/s, ${result.ok} x 200, ${result.overloaded} x 503, ${result.unexpected} unexpected\n`);
      }
    }
  } finally {
    await Promise.all(running.map((one) => one.stop()));
  }
}

for (const { label, root } of trees) {
  console.log(`\n${label} (${root}), ${seconds} s per route:\n`);
  console.log(floodTable(results.get(label) ?? []));
}
