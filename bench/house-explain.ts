import { readFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { buildHousesApp } from '../src/services/houses/app.js';
import { readHouseSettings } from '../src/services/houses/settings.js';
import { REPO_ROOT, percentile, postOnce } from './support.js';

/**
 * Explained estimates (the explained-estimates decisions) beside plain ones: latency on one keep-alive connection, one request
 * at a time, of POST /v1/estimates and /v1/estimates/explain (one house, the 25 golden houses in turn),
 * and of the two batch routes with 100 houses. Targets: one explanation < 1 ms at p50; a batch of 100
 * explanations < 50 ms at p50. The service runs in this process, shipped model, logger off.
 * Usage: npx tsx bench/house-explain.ts [requests per case, default 400]; about 30 s on a quiet machine.
 */
const ROUNDS = Number(process.argv[2] ?? 400);
const headers = { 'content-type': 'application/json' };
const golden = JSON.parse(readFileSync(resolve(REPO_ROOT, 'test/fixtures/houses/golden-houses.json'), 'utf8')) as { houses: { house: unknown }[] };
const houses = golden.houses.map((entry) => JSON.stringify(entry.house));
const batch = JSON.stringify({ houses: Array.from({ length: 100 }, (_, i) => golden.houses[i % golden.houses.length]?.house) });

async function latency(agent: Agent, url: URL, bodies: string[], rounds: number) {
  for (let i = 0; i < Math.min(100, rounds); i++) await postOnce(agent, url, bodies[i % bodies.length] as string, headers); // warm-up
  const times: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const started = performance.now();
    const status = await postOnce(agent, url, bodies[i % bodies.length] as string, headers);
    times.push(performance.now() - started);
    if (status !== 200) throw new Error(`${url.pathname} answered ${status}`);
  }
  times.sort((a, b) => a - b);
  return `p50 ${percentile(times, 50).toFixed(2)} ms, p90 ${percentile(times, 90).toFixed(2)} ms, p99 ${percentile(times, 99).toFixed(2)} ms`;
}

const app = await buildHousesApp(readHouseSettings({}), { logger: false });
try {
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  if (typeof address !== 'object' || address === null) throw new Error('no address');
  const base = `http://127.0.0.1:${address.port}`;
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const cases: [string, string, string[], number][] = [
    ['POST /v1/estimates (1 house)', '/v1/estimates', houses, ROUNDS],
    ['POST /v1/estimates/explain (1 house)', '/v1/estimates/explain', houses, ROUNDS],
    ['POST /v1/estimates/batch (100 houses)', '/v1/estimates/batch', [batch], Math.ceil(ROUNDS / 4)],
    ['POST /v1/estimates/explain/batch (100 houses)', '/v1/estimates/explain/batch', [batch], Math.ceil(ROUNDS / 4)],
  ];
  console.log('| request | latency, one connection |\n|---|---|');
  for (const [name, path, bodies, rounds] of cases) console.log(`| ${name} | ${await latency(agent, new URL(path, base), bodies, rounds)} |`);
  agent.destroy();
  console.log(`\n${ROUNDS} single requests, ${Math.ceil(ROUNDS / 4)} batches per case; node ${process.version}`);
} finally {
  await app.close();
}
