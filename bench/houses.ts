import autocannon from 'autocannon';
import { readFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { PlatformApp } from '../src/platform/platform-app.js';
import { buildHousesApp } from '../src/services/houses/app.js';
import { readHouseSettings } from '../src/services/houses/settings.js';
import { buildTicketsApp } from '../src/services/tickets/app.js';
import { percentile, postOnce } from './support.js';
import { readTicketSettings } from '../src/services/tickets/settings.js';

/**
 * House-price service speed (the houses throughput target), in one run on this machine, loopback only, bounded in time:
 * 1. requests/second of POST /v1/classify (ticket classifier) vs POST /v1/estimates (one house),
 *    both services built in this process with the logger off and the same API key, autocannon in a
 *    worker thread; target: estimates >= 60% of classify;
 * 2. latency of POST /v1/estimates/batch with 100 houses on one keep-alive connection, one request
 *    at a time; target: p50 < 5 ms.
 * Usage: npx tsx bench/houses.ts [seconds per throughput case, default 5]; about 45 s in all
 */
const seconds = Number(process.argv[2] ?? 5);
const ROUNDS = 3;
const connections = 10;
const BATCH_ROUNDS = 1000;
const KEY = 'bench-key-0123456789';
const headers = { 'content-type': 'application/json', 'x-api-key': KEY };

const root = resolve(import.meta.dirname, '..');
const golden = JSON.parse(readFileSync(resolve(root, 'test/fixtures/houses/golden-houses.json'), 'utf8')) as { houses: { house: unknown }[] };
const houses = golden.houses.map((entry) => entry.house);
const tickets = [
  { subject: 'I was charged twice for my invoice', body: 'Please refund the second payment.' },
  { subject: 'Cannot log in', body: 'Password reset link does not work, locked out since this morning.' },
  { subject: 'Where is my parcel?', body: 'The tracking number shows no delivery update for a week.' },
  { subject: 'Question', body: 'How do I change the email address of my account?' },
];

async function start(app: PlatformApp): Promise<string> {
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  if (typeof address !== 'object' || address === null) throw new Error('no address');
  return `http://127.0.0.1:${address.port}`;
}

async function requestsPerSecond(url: string, path: string, bodies: unknown[], durationSeconds: number) {
  const result = await autocannon({
    url,
    connections,
    duration: durationSeconds,
    workers: 1,
    requests: bodies.map((body) => ({ method: 'POST' as const, path, headers, body: JSON.stringify(body) })),
  });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${path}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return { rps: Math.round(result.requests.average), p50: result.latency.p50, p99: result.latency.p99 };
}

async function batchLatency(url: string) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const target = new URL('/v1/estimates/batch', url);
  const body = JSON.stringify({ houses: Array.from({ length: 100 }, (_, index) => houses[index % houses.length]) });
  for (let i = 0; i < 300; i++) await postOnce(agent, target, body, headers); // warm-up
  const times: number[] = [];
  for (let i = 0; i < BATCH_ROUNDS; i++) {
    const started = performance.now();
    const status = await postOnce(agent, target, body, headers);
    times.push(performance.now() - started);
    if (status !== 200) throw new Error(`batch answered ${status}`);
  }
  agent.destroy();
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p90: percentile(times, 90), p99: percentile(times, 99), bytes: body.length };
}

const ticketsApp = await buildTicketsApp(readTicketSettings({ API_KEY: KEY }), { logger: false });
const housesApp = await buildHousesApp(readHouseSettings({ API_KEY: KEY }), { logger: false });
try {
  const ticketsUrl = await start(ticketsApp);
  const housesUrl = await start(housesApp);
  // The batch latency first, on a quiet process (no load generator running).
  const batch = await batchLatency(housesUrl);
  // warm-up of both
  await requestsPerSecond(ticketsUrl, '/v1/classify', tickets, 2);
  await requestsPerSecond(housesUrl, '/v1/estimates', houses, 2);
  // Paired rounds (classify then estimates, back to back); the ratio is taken per round and the
  // median round is reported, so that a burst of load from elsewhere on the machine counts once.
  const rounds: { c: Awaited<ReturnType<typeof requestsPerSecond>>; e: Awaited<ReturnType<typeof requestsPerSecond>>; ratio: number }[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const c = await requestsPerSecond(ticketsUrl, '/v1/classify', tickets, seconds);
    const e = await requestsPerSecond(housesUrl, '/v1/estimates', houses, seconds);
    rounds.push({ c, e, ratio: (e.rps / c.rps) * 100 });
  }
  console.log('| round | POST /v1/classify req/s (p50/p99 ms) | POST /v1/estimates req/s (p50/p99 ms) | estimates / classify |');
  console.log('|---:|---:|---:|---:|');
  rounds.forEach(({ c, e, ratio }, index) =>
    console.log(`| ${index + 1} | ${c.rps} (${c.p50}/${c.p99}) | ${e.rps} (${e.p50}/${e.p99}) | ${ratio.toFixed(1)}% |`),
  );
  const ratios = rounds.map((round) => round.ratio).sort((a, b) => a - b);
  const ratio = ratios[Math.floor(ratios.length / 2)] ?? NaN;
  console.log(`\nestimates / classify, median of ${ROUNDS} rounds = ${ratio.toFixed(1)}% (target >= 60%): ${ratio >= 60 ? 'met' : 'NOT met'}`);
  console.log(
    `batch of 100 houses (${batch.bytes} bytes), one connection, ${BATCH_ROUNDS} requests: p50 ${batch.p50.toFixed(2)} ms, ` +
      `p90 ${batch.p90.toFixed(2)} ms, p99 ${batch.p99.toFixed(2)} ms (target p50 < 5 ms): ${batch.p50 < 5 ? 'met' : 'NOT met'}`,
  );
  console.log(`${ROUNDS} rounds x ${seconds} s per service, ${connections} connections, autocannon in a worker thread; node ${process.version}`);
} finally {
  await ticketsApp.close();
  await housesApp.close();
}
