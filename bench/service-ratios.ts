import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { REALISTIC_TICKETS } from './realistic-tickets.js';
import { REPO_ROOT, load, startChild, type LoadResult } from './support.js';

/**
 * The issues' ratio targets measured as the services run in production: each service in its own
 * process from the compiled build, started as `npm run start:*` starts it (same V8 flags, logging on,
 * to /dev/null), an API key, autocannon here with 50 connections. Rounds alternate the cases so that
 * a change of the machine's load weighs on all alike; the median round is reported.
 * - the houses throughput target: POST /v1/estimates (the OpenAPI example house) >= 60% of POST /v1/classify's req/s;
 * - the requests throughput target: a page of 50 (without and with filters, SQLite) >= 50% of POST /v1/classify's req/s.
 * Usage: npx tsx bench/service-ratios.ts [seconds per case, default 5] [rounds, default 3]
 */
const seconds = Number(process.argv[2] ?? 5);
const rounds = Number(process.argv[3] ?? 3);
const KEY = 'bench-key-0123456789';
const json = { 'content-type': 'application/json', 'x-api-key': KEY };
const example = JSON.parse(readFileSync(resolve(REPO_ROOT, 'src/services/houses/openapi-example.json'), 'utf8')) as { estimate: { request: unknown } };

const tickets = await startChild('src/services/tickets/main.ts', { API_KEY: KEY });
const houses = await startChild('src/services/houses/main.ts', { API_KEY: KEY });
const requests = await startChild('src/services/requests/main.ts', { API_KEY: KEY });

const cases = {
  classify: { url: tickets.url, requests: REALISTIC_TICKETS.map((t) => ({ method: 'POST' as const, path: '/v1/classify', headers: json, body: JSON.stringify(t) })) },
  estimate: { url: houses.url, requests: [{ method: 'POST' as const, path: '/v1/estimates', headers: json, body: JSON.stringify(example.estimate.request) }] },
  page: { url: requests.url, requests: [{ method: 'GET' as const, path: '/v1/service-requests?limit=50', headers: { 'x-api-key': KEY } }] },
  filtered: { url: requests.url, requests: [{ method: 'GET' as const, path: '/v1/service-requests?limit=50&borough=brooklyn&status=closed', headers: { 'x-api-key': KEY } }] },
};
type Name = keyof typeof cases;
const run = (name: Name, durationSeconds: number) => load(name, { url: cases[name].url, connections: 50, durationSeconds, requests: cases[name].requests });

try {
  for (const name of Object.keys(cases) as Name[]) await run(name, 2); // warm-up
  const results: Record<Name, LoadResult>[] = [];
  for (let round = 0; round < rounds; round += 1) {
    const r = {} as Record<Name, LoadResult>;
    for (const name of Object.keys(cases) as Name[]) r[name] = await run(name, seconds);
    results.push(r);
  }
  const pct = (a: number, b: number) => (a / b) * 100;
  console.log('| round | classify req/s | estimate req/s (vs classify) | page of 50 req/s (vs classify) | filtered page req/s (vs classify) |');
  console.log('|---:|---:|---:|---:|---:|');
  results.forEach((r, i) =>
    console.log(
      `| ${i + 1} | ${r.classify.requestsPerSecond} | ${r.estimate.requestsPerSecond} (${pct(r.estimate.requestsPerSecond, r.classify.requestsPerSecond).toFixed(1)}%) | ${r.page.requestsPerSecond} (${pct(r.page.requestsPerSecond, r.classify.requestsPerSecond).toFixed(1)}%) | ${r.filtered.requestsPerSecond} (${pct(r.filtered.requestsPerSecond, r.classify.requestsPerSecond).toFixed(1)}%) |`,
    ),
  );
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  const ratio = (name: Name) => median(results.map((r) => pct(r[name].requestsPerSecond, r.classify.requestsPerSecond)));
  console.log(`\nmedian round: estimate ${ratio('estimate').toFixed(1)}% of classify (the houses throughput target >= 60%), page of 50 ${ratio('page').toFixed(1)}% and filtered ${ratio('filtered').toFixed(1)}% (the requests throughput target >= 50%)`);
  console.log(`node ${process.version}, ${rounds} rounds of ${seconds} s per case, 50 connections, each service in its own process`);
} finally {
  await Promise.all([tickets.stop(), houses.stop(), requests.stop()]);
}
