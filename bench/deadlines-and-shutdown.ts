import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { request } from 'node:http';
import { resolve } from 'node:path';
import { startPrivateRedis } from '../test/support/private-redis.js';
import { freePort, percentile, REPO_ROOT } from './support.js';

/**
 * Dependencies with deadlines and bounded shutdown, this build against an earlier one in the same run
 * (bench/README.md, "Dependencies with deadlines and bounded shutdown"). Each service runs in its own
 * process from its TypeScript sources (node --import tsx), loopback only:
 * (r) the tickets service with RATE_LIMIT_REDIS_URL on a private redis-server (a free port, never the
 *     shared one): 40 sequential POST /v1/classify with Redis answering, 40 while it is stopped
 *     (SIGSTOP), then SIGCONT, 5 s, and 40 more: per-request latency (median, max);
 * (s) the requests service on the default snapshot (data/service-requests.sqlite of this folder,
 *     `npm run snapshot`): a client reads the CSV export at about 300 KB/s; 2 s later
 *     SIGTERM; the time until the process exits (given up after 45 s), on the default settings. A
 *     reader much slower than that is cut by the pipelining guard after 10 s without progress
 *     (connection-backpressure.ts: the kernel's socket buffers then take bytes only in large steps).
 *
 * Usage: npx tsx bench/deadlines-and-shutdown.ts <folder of the earlier build> (with node_modules;
 * `git worktree add --detach /tmp/before <commit>` and a link to node_modules). About 2 minutes.
 */
const beforeRoot = resolve(process.argv[2] ?? '');
const SNAPSHOT = resolve(REPO_ROOT, 'data/service-requests.sqlite');
if (!process.argv[2] || !existsSync(resolve(beforeRoot, 'src/services/tickets/main.ts')) || !existsSync(SNAPSHOT)) {
  console.error('usage: npx tsx bench/deadlines-and-shutdown.ts <folder of the earlier build>; run npm run snapshot here first');
  process.exit(2);
}
const KEY = 'bench-key-0123456789';
const READER_BYTES_PER_SECOND = 300_000;
const sleep = (ms: number) => new Promise((wait) => setTimeout(wait, ms));

interface Service {
  child: ChildProcess;
  url: string;
  exited: Promise<void>;
}

async function startService(root: string, entry: string, env: Record<string, string>): Promise<Service> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', resolve(root, entry)], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', HOST: '127.0.0.1', PORT: String(port), API_KEY: KEY, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'ignore', 'ignore'],
  });
  const exited = new Promise<void>((resolveExit) => child.once('exit', () => resolveExit()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      if ((await fetch(`${url}/health`)).status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`${entry} did not start in ${root}`);
    await sleep(100);
  }
  return { child, url, exited };
}

async function classifyLatencies(url: string, count: number): Promise<{ medianMs: number; maxMs: number }> {
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    const response = await fetch(`${url}/v1/classify`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': KEY },
      body: '{"subject":"My parcel is lost"}',
    });
    await response.arrayBuffer();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return { medianMs: Math.round(percentile(times, 50) * 10) / 10, maxMs: Math.round((times.at(-1) ?? 0) * 10) / 10 };
}

async function redisHang(root: string): Promise<Record<string, unknown>> {
  const redis = await startPrivateRedis();
  const service = await startService(root, 'src/services/tickets/main.ts', { RATE_LIMIT: '1000000/day', RATE_LIMIT_REDIS_URL: redis.url });
  try {
    await classifyLatencies(service.url, 20);
    const answering = await classifyLatencies(service.url, 40);
    redis.hang();
    const hung = await classifyLatencies(service.url, 40);
    redis.resume();
    await sleep(5_000);
    const after = await classifyLatencies(service.url, 40);
    return { answering, hung, after };
  } finally {
    service.child.kill('SIGKILL');
    await service.exited;
    await redis.stop();
  }
}

async function sigtermWithSlowReader(root: string): Promise<Record<string, unknown>> {
  const service = await startService(root, 'src/services/requests/main.ts', { DATABASE_URL: SNAPSHOT, CURSOR_SECRET: 'bench-cursor-secret-0123456789abcdef' });
  let bytes = 0;
  let complete: boolean | undefined;
  const req = request(`${service.url}/v1/exports/service-requests`, { headers: { 'x-api-key': KEY } }, (response) => {
    response.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      response.pause();
      setTimeout(() => response.resume(), (chunk.length / READER_BYTES_PER_SECOND) * 1_000);
    });
    response.on('close', () => (complete = response.complete));
    response.on('error', () => undefined);
  });
  req.on('error', () => undefined);
  req.end();
  await sleep(2_000);
  const signalled = Date.now();
  service.child.kill('SIGTERM');
  const exitedInTime = await Promise.race([service.exited.then(() => true), sleep(45_000).then(() => false)]);
  const exitSeconds = exitedInTime ? Math.round((Date.now() - signalled) / 100) / 10 : '> 45 (killed)';
  if (!exitedInTime) service.child.kill('SIGKILL');
  await service.exited;
  req.destroy();
  return { exitSeconds, readerBytes: bytes, readerComplete: complete ?? 'still reading' };
}

const results: Record<string, unknown> = {};
for (const [name, root] of [['before', beforeRoot], ['after', REPO_ROOT]] as const) {
  results[`${name} redis hang`] = await redisHang(root);
  results[`${name} SIGTERM, slow export reader`] = await sigtermWithSlowReader(root);
}
console.log(JSON.stringify(results, null, 2));
