import autocannon from 'autocannon';
import { readFileSync } from 'node:fs';
import { REALISTIC_TICKETS } from './realistic-tickets.js';
import { startChild } from './support.js';

/**
 * CPU time of the server process per request: less sensitive to the machine's noise than req/s,
 * since it does not depend on how the two cores are shared with the load generator.
 * Usage: npx tsx bench/cpu-per-request.ts [requests, default 60000]
 */
const count = Number(process.argv[2] ?? 60_000);
const json = { 'content-type': 'application/json', 'x-api-key': 'bench-key' };
const body = JSON.stringify(REALISTIC_TICKETS[0]);

function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

async function measure(name: string, entry: string, path: string, method: 'GET' | 'POST') {
  const service = await startChild(entry, { API_KEY: 'bench-key', ...(process.env.BENCH_LOG_LEVEL ? { LOG_LEVEL: process.env.BENCH_LOG_LEVEL } : {}) }, entry.endsWith('.mjs') ? '/' : '/health');
  const run = (amount: number) => autocannon({ url: `${service.url}${path}`, connections: 20, amount, method, headers: json, body: method === 'POST' ? body : undefined });
  await run(Math.round(count / 3));
  const before = cpuSeconds(service.child.pid!);
  await run(count);
  const used = cpuSeconds(service.child.pid!) - before;
  await service.stop();
  const us = (used / count) * 1e6;
  console.log(`| ${name} | ${us.toFixed(1)} |`);
  return us;
}

console.log('| case | server CPU µs per request |\n|---|---:|');
const bare = await measure('bare node:http, same JSON (POST)', 'bench/bare-server.mjs', '/v1/classify', 'POST');
await measure('tickets GET /health', 'src/services/tickets/main.ts', '/health', 'GET');
const classify = await measure('tickets POST /v1/classify', 'src/services/tickets/main.ts', '/v1/classify', 'POST');
console.log(`\nclassify costs ${(classify / bare).toFixed(2)}x the bare server's CPU per request (the bare server's req/s ceiling over this is ${((bare / classify) * 100).toFixed(0)}%)`);
