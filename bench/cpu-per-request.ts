import autocannon from 'autocannon';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { REALISTIC_TICKETS } from './realistic-tickets.js';
import { REPO_ROOT, cpuMicrosPerRequest, startChild } from './support.js';

/**
 * CPU time of the server process per request, for each service against the bare node:http server:
 * less sensitive to the machine's noise than req/s, since it does not depend on how the two cores
 * are shared with the load generator. Each server runs from the compiled build in its own process,
 * with its normal logging (to /dev/null); 20 connections; a warm-up of a third of the count first.
 * Usage: npx tsx bench/cpu-per-request.ts [requests per case, default 60000]
 */
const count = Number(process.argv[2] ?? 60_000);
const KEY = 'bench-key-0123456789';
const json = { 'content-type': 'application/json', 'x-api-key': KEY };
const example = JSON.parse(readFileSync(resolve(REPO_ROOT, 'src/services/houses/openapi-example.json'), 'utf8')) as { estimate: { request: unknown } };

interface Case {
  name: string;
  entry: string;
  path: string;
  method: 'GET' | 'POST';
  body?: string;
}

async function measure(c: Case): Promise<number> {
  const service = await startChild(c.entry, { API_KEY: KEY }, c.entry.endsWith('.mjs') ? '/' : '/health');
  const run = (amount: number) => autocannon({ url: `${service.url}${c.path}`, connections: 20, amount, method: c.method, headers: json, body: c.body });
  const micros = await cpuMicrosPerRequest(service.child.pid!, count, run);
  await service.stop();
  return micros;
}

const cases: Case[] = [
  { name: 'bare node:http, same JSON (POST)', entry: 'bench/bare-server.mjs', path: '/v1/classify', method: 'POST', body: JSON.stringify(REALISTIC_TICKETS[0]) },
  { name: 'tickets GET /health', entry: 'src/services/tickets/main.ts', path: '/health', method: 'GET' },
  { name: 'tickets POST /v1/classify', entry: 'src/services/tickets/main.ts', path: '/v1/classify', method: 'POST', body: JSON.stringify(REALISTIC_TICKETS[0]) },
  { name: 'houses POST /v1/estimates', entry: 'src/services/houses/main.ts', path: '/v1/estimates', method: 'POST', body: JSON.stringify(example.estimate.request) },
  { name: 'requests GET /v1/service-requests?limit=50', entry: 'src/services/requests/main.ts', path: '/v1/service-requests?limit=50', method: 'GET' },
];
const results = new Map<string, number>();
console.log('| case | server CPU µs per request | vs bare | vs classify |\n|---|---:|---:|---:|');
for (const c of cases) {
  const us = await measure(c);
  results.set(c.name, us);
  const bare = results.get(cases[0]!.name)!;
  const classify = results.get(cases[2]!.name);
  console.log(`| ${c.name} | ${us.toFixed(1)} | ${((bare / us) * 100).toFixed(0)}% | ${classify ? `${((classify / us) * 100).toFixed(0)}%` : '-'} |`);
}
console.log('\n"vs bare" and "vs classify" are the req/s a single core would reach relative to that case (ratio of CPU per request).');
