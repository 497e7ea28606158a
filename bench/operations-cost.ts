import autocannon from 'autocannon';
import { REALISTIC_TICKETS } from './realistic-tickets.js';
import { cpuMicrosPerRequest, startChild } from './support.js';

/**
 * What metrics and the rate limit cost per request: the server's CPU time per POST /v1/classify
 * (tickets, compiled build, normal logging), with neither, with METRICS_KEY, and with METRICS_KEY and
 * RATE_LIMIT (counted in the process), in alternating rounds. Build first (npm run build).
 * Usage: npx tsx bench/operations-cost.ts [requests per case, default 20000] [rounds, default 2]
 */
const count = Number(process.argv[2] ?? 20_000);
const rounds = Number(process.argv[3] ?? 2);
const KEY = 'bench-key-0123456789';
const body = JSON.stringify(REALISTIC_TICKETS[0]);

const cases: { name: string; env: Record<string, string> }[] = [
  { name: 'neither', env: {} },
  { name: 'METRICS_KEY', env: { METRICS_KEY: 'bench-metrics-key-0123' } },
  { name: 'METRICS_KEY + RATE_LIMIT (local)', env: { METRICS_KEY: 'bench-metrics-key-0123', RATE_LIMIT: '100000000/minute' } },
];

async function measure(env: Record<string, string>): Promise<number> {
  const service = await startChild('src/services/tickets/main.ts', { API_KEY: KEY, ...env });
  const run = (amount: number) =>
    autocannon({ url: `${service.url}/v1/classify`, connections: 20, amount, method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': KEY }, body });
  const micros = await cpuMicrosPerRequest(service.child.pid!, count, run);
  await service.stop();
  return micros;
}

const results = new Map<string, number[]>();
for (let round = 0; round < rounds; round++) {
  for (const c of cases) {
    const micros = await measure(c.env);
    results.set(c.name, [...(results.get(c.name) ?? []), micros]);
  }
}
console.log('| case | server CPU µs per request (each round) |\n|---|---|');
for (const [name, values] of results) console.log(`| ${name} | ${values.map((v) => v.toFixed(1)).join(', ')} |`);
