import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { SAMPLE_HOUSE } from '../src/services/houses/house.js';
import { REALISTIC_TICKETS } from './realistic-tickets.js';
import { START_NODE_FLAGS, REPO_ROOT, freePort, load, type LoadResult } from './support.js';

/**
 * Throughput of this build against an earlier build, in the same run, so that a change of the
 * machine's speed weighs on both alike: POST /v1/classify, POST /v1/estimates and a page of 50
 * (SQLite), each service of each build in its own process from its compiled build, as `npm start`
 * runs it (same V8 flag, logs discarded), autocannon with 50 connections. Each round runs every case
 * on both builds, the order of the builds alternating from round to round; the median round is
 * reported with the ratio after / before.
 *
 * Usage: npx tsx bench/before-after.ts <folder of the earlier build> [seconds per case, default 5] [rounds, default 3]
 * The folder is a checkout of the earlier commit with its node_modules and its build
 * (`git worktree add --detach ../before <commit> && cd ../before && npm ci && npx tsc -p tsconfig.build.json`).
 * Both builds must already be compiled (`npx tsc -p tsconfig.build.json` here too).
 */
const beforeRoot = resolve(process.argv[2] ?? '');
const seconds = Number(process.argv[3] ?? 5);
const rounds = Number(process.argv[4] ?? 3);
if (!process.argv[2] || !existsSync(resolve(beforeRoot, 'dist/src/services/tickets/main.js'))) {
  console.error('usage: npx tsx bench/before-after.ts <folder of the earlier build, compiled> [seconds] [rounds]');
  process.exit(2);
}
if (!existsSync(resolve(REPO_ROOT, 'dist/src/services/tickets/main.js'))) {
  console.error('compile this build first: npx tsc -p tsconfig.build.json');
  process.exit(2);
}

const KEY = 'bench-key-0123456789';
const ENV = { API_KEY: KEY, CURSOR_SECRET: 'before-after-cursor-secret-0123456789', LOG_LEVEL: 'info' };
const HOUSE = SAMPLE_HOUSE;

interface Service { child: ChildProcess; url: string }

async function startService(root: string, name: string): Promise<Service> {
  const port = await freePort();
  const child = spawn(process.execPath, [...START_NODE_FLAGS, resolve(root, `dist/src/services/${name}/main.js`)], {
    cwd: root,
    env: { ...process.env, ...ENV, HOST: '127.0.0.1', PORT: String(port) },
    stdio: ['ignore', 'ignore', 'ignore'],
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      if ((await fetch(`${url}/ready`)).status === 200) return { child, url };
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`${root}: ${name} did not start`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function startBuild(root: string): Promise<Record<string, Service>> {
  return { tickets: await startService(root, 'tickets'), houses: await startService(root, 'houses'), requests: await startService(root, 'requests') };
}

const json = { 'content-type': 'application/json', 'x-api-key': KEY };
const cases = {
  classify: (b: Record<string, Service>) => ({ url: b.tickets!.url, requests: REALISTIC_TICKETS.map((t) => ({ method: 'POST' as const, path: '/v1/classify', headers: json, body: JSON.stringify(t) })) }),
  estimate: (b: Record<string, Service>) => ({ url: b.houses!.url, requests: [{ method: 'POST' as const, path: '/v1/estimates', headers: json, body: JSON.stringify(HOUSE) }] }),
  page: (b: Record<string, Service>) => ({ url: b.requests!.url, requests: [{ method: 'GET' as const, path: '/v1/service-requests?limit=50', headers: { 'x-api-key': KEY } }] }),
};
type CaseName = keyof typeof cases;

const builds = { before: await startBuild(beforeRoot), after: await startBuild(REPO_ROOT) };
const run = (build: 'before' | 'after', name: CaseName, duration: number) =>
  load(`${name} ${build}`, { ...cases[name](builds[build]), connections: 50, durationSeconds: duration });

try {
  for (const name of Object.keys(cases) as CaseName[]) {
    await run('before', name, 1);
    await run('after', name, 1);
  }
  const results: Record<string, LoadResult>[] = [];
  for (let round = 0; round < rounds; round += 1) {
    const order: ('before' | 'after')[] = round % 2 === 0 ? ['before', 'after'] : ['after', 'before'];
    const r: Record<string, LoadResult> = {};
    for (const name of Object.keys(cases) as CaseName[]) for (const build of order) r[`${name} ${build}`] = await run(build, name, seconds);
    results.push(r);
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  console.log('| case | before req/s (rounds) | after req/s (rounds) | after / before, median of the rounds | errors or non-2xx |');
  console.log('|---|---|---|---:|---:|');
  for (const name of Object.keys(cases) as CaseName[]) {
    const before = results.map((r) => r[`${name} before`]!);
    const after = results.map((r) => r[`${name} after`]!);
    const ratios = results.map((_, i) => after[i]!.requestsPerSecond / before[i]!.requestsPerSecond);
    const bad = [...before, ...after].reduce((sum, x) => sum + x.errors + x.non2xx, 0);
    console.log(`| ${name} | ${before.map((x) => x.requestsPerSecond).join(' / ')} | ${after.map((x) => x.requestsPerSecond).join(' / ')} | ${(median(ratios) * 100).toFixed(1)}% | ${bad} |`);
  }
  console.log(`\nnode ${process.version}, ${rounds} rounds of ${seconds} s per case and build, 50 connections, before = ${beforeRoot}`);
} finally {
  for (const build of Object.values(builds)) for (const service of Object.values(build)) service.child.kill('SIGTERM');
}
