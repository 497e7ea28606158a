import autocannon from 'autocannon';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { writeKeyFile } from '../src/platform/api-keys/key-file.js';
import { keyDigest, newKeyText } from '../src/platform/api-keys/key-text.js';
import { REALISTIC_TICKETS } from './realistic-tickets.js';
import { cpuMicrosPerRequest, startChild } from './support.js';

/**
 * What metrics, the rate limit and the key file cost per request: the server's CPU time per POST
 * /v1/classify (tickets, compiled build, normal logging), with neither (one key of API_KEY), with
 * METRICS_KEY, with METRICS_KEY and RATE_LIMIT (counted in the process), and with the key in
 * API_KEYS_FILE among 1 or 1,000 keys (each request with the file's last key), in alternating rounds;
 * with the folder of an earlier compiled build, also "neither" on that build (its tickets service).
 * Build first (npm run build).
 * Usage: npx tsx bench/operations-cost.ts [requests per case, default 20000] [rounds, default 2] [earlier build]
 */
const count = Number(process.argv[2] ?? 20_000);
const rounds = Number(process.argv[3] ?? 2);
const earlierBuild = process.argv[4];
const TICKETS = 'src/services/tickets/main.ts';
const KEY = 'bench-key-0123456789';
const body = JSON.stringify(REALISTIC_TICKETS[0]);
const directory = mkdtempSync(join(tmpdir(), 'operations-cost-'));

/** A key file of `size` keys (as `npm run keys -- create` writes them); the key of its last entry. */
async function keyFileOf(size: number): Promise<{ path: string; key: string }> {
  const path = join(directory, `keys-${size}.json`);
  const keys = Array.from({ length: size }, () => newKeyText());
  await writeKeyFile(path, {
    version: 1,
    keys: keys.map((key, n) => ({ id: `key_${n}`, name: `Client ${n}`, sha256: keyDigest(key), services: ['tickets', 'houses', 'requests'], rate_limit: null, expires_at: null, disabled: false })),
  });
  return { path, key: keys[size - 1] as string };
}
const [oneKey, thousandKeys] = [await keyFileOf(1), await keyFileOf(1_000)];

const cases: { name: string; env: Record<string, string>; key?: string; entry?: string }[] = [
  ...(earlierBuild === undefined ? [] : [{ name: 'neither, earlier build', env: {}, entry: resolve(earlierBuild, 'dist/src/services/tickets/main.js') }]),
  { name: 'neither', env: {} },
  { name: 'METRICS_KEY', env: { METRICS_KEY: 'bench-metrics-key-0123' } },
  { name: 'METRICS_KEY + RATE_LIMIT (local)', env: { METRICS_KEY: 'bench-metrics-key-0123', RATE_LIMIT: '100000000/minute' } },
  { name: 'API_KEYS_FILE, 1 key', env: { API_KEYS_FILE: oneKey.path }, key: oneKey.key },
  { name: 'API_KEYS_FILE, 1,000 keys', env: { API_KEYS_FILE: thousandKeys.path }, key: thousandKeys.key },
];

async function measure(env: Record<string, string>, key = KEY, entry = TICKETS): Promise<number> {
  const service = await startChild(entry, { API_KEY: KEY, ...env });
  const run = (amount: number) =>
    autocannon({ url: `${service.url}/v1/classify`, connections: 20, amount, method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body });
  const micros = await cpuMicrosPerRequest(service.child.pid!, count, run);
  await service.stop();
  return micros;
}

const results = new Map<string, number[]>();
for (let round = 0; round < rounds; round++) {
  for (const c of cases) {
    const micros = await measure(c.env, c.key, c.entry);
    results.set(c.name, [...(results.get(c.name) ?? []), micros]);
  }
}
console.log('| case | server CPU µs per request (each round) |\n|---|---|');
for (const [name, values] of results) console.log(`| ${name} | ${values.map((v) => v.toFixed(1)).join(', ')} |`);
rmSync(directory, { recursive: true, force: true });
