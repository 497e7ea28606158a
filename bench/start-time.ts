import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { request } from 'node:http';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { START_NODE_FLAGS, REPO_ROOT, freePort } from './support.js';

/**
 * Warm start time (the warm-start decision: "a warm start under 2 s"): the time from spawning the start command
 * until all three services (tickets, houses, requests, one process) answer `GET /health` 200, each
 * polled every 10 ms, and until the first list page (`GET /v1/service-requests?limit=50`, asked
 * once they do) is answered 200: it needs the requests service's snapshot file open. Two commands: `npm start` (its build check included) and
 * `node` with the start flags (START_NODE_FLAGS) and `dist/src/main.js` alone. API_KEY=dev-key-0123456789, free ports through
 * TICKETS_PORT, HOUSES_PORT and REQUESTS_PORT, logs discarded; the process group is stopped after each
 * run (SIGTERM, SIGKILL after 5 s). One untimed start of each command first (file cache, build check).
 * With the folder of an earlier build, the runs of the two builds alternate (the first build of each
 * round alternating too), so that before and after come from the same minutes of the machine.
 *
 * Usage: npx tsx bench/start-time.ts [folder of the earlier build] [runs, default 7]
 * The folder is a checkout of the earlier commit with its node_modules and its build
 * (`git worktree add ../before <commit> && cp -al node_modules ../before/ && cd ../before && npm run build`).
 * Both builds must already be compiled and up to date (`npm run build`), or the first `npm start`
 * compiles.
 */
const args = process.argv.slice(2);
const beforeRoot = args[0] !== undefined && !/^\d+$/.test(args[0]) ? resolve(args.shift() as string) : null;
const runs = Number(args[0] ?? 7);
for (const root of beforeRoot === null ? [REPO_ROOT] : [beforeRoot, REPO_ROOT]) {
  if (!existsSync(resolve(root, 'dist/src/main.js'))) {
    console.error(`${root}: no dist/src/main.js; compile it first (npm run build)`);
    console.error('usage: npx tsx bench/start-time.ts [folder of the earlier build, compiled] [runs, default 7]');
    process.exit(2);
  }
}

const SERVICES = ['TICKETS_PORT', 'HOUSES_PORT', 'REQUESTS_PORT'] as const;
const COMMANDS = {
  'npm start': ['npm', ['start']],
  'node dist/src/main.js': [process.execPath, [...START_NODE_FLAGS, 'dist/src/main.js']],
} as const satisfies Record<string, readonly [string, readonly string[]]>;
type CommandName = keyof typeof COMMANDS;

/** One GET (/health by default): its status, or 0 when nothing answers yet. */
function healthStatus(port: number, path = '/health', headers: Record<string, string> = {}): Promise<number> {
  return new Promise((done) => {
    const call = request({ host: '127.0.0.1', port, path, headers, agent: false, timeout: 10_000 }, (response) => {
      response.resume();
      done(response.statusCode ?? 0);
    });
    call.on('error', () => done(0));
    call.on('timeout', () => call.destroy());
    call.end();
  });
}

async function stopGroup(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  const kill = (signal: NodeJS.Signals) => {
    try {
      process.kill(-(child.pid as number), signal); // the whole group: npm and its node child
    } catch {
      // already gone
    }
  };
  kill('SIGTERM');
  const timer = setTimeout(() => kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
  kill('SIGKILL'); // anything of the group left behind
}

/**
 * Milliseconds from the spawn until the three services answer /health 200, and until the first list
 * page (asked right then) is answered 200: it needs the requests service's snapshot file open.
 */
async function startOnce(root: string, name: CommandName): Promise<{ health: number; page: number }> {
  const ports = await Promise.all(SERVICES.map(() => freePort()));
  const env: Record<string, string | undefined> = { ...process.env, API_KEY: 'dev-key-0123456789', HOST: '127.0.0.1' };
  delete env.PORT;
  SERVICES.forEach((variable, index) => (env[variable] = String(ports[index])));
  const [command, commandArgs] = COMMANDS[name];
  const started = performance.now();
  const child = spawn(command, commandArgs, { cwd: root, env, detached: true, stdio: ['ignore', 'ignore', 'ignore'] });
  try {
    const waiting = new Set(ports);
    while (waiting.size > 0) {
      if (child.exitCode !== null) throw new Error(`${root}: ${name} exited with ${child.exitCode}`);
      if (performance.now() - started > 60_000) throw new Error(`${root}: ${name} did not start within 60 s`);
      const answers = await Promise.all([...waiting].map(async (port) => [port, await healthStatus(port)] as const));
      const elapsed = performance.now() - started;
      for (const [port, status] of answers) if (status === 200) waiting.delete(port);
      if (waiting.size === 0) {
        const status = await healthStatus(ports[2] as number, '/v1/service-requests?limit=50', { 'x-api-key': 'dev-key-0123456789' });
        if (status !== 200) throw new Error(`${root}: the first page answered ${status}`);
        return { health: elapsed, page: performance.now() - started };
      }
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error('unreachable');
  } finally {
    await stopGroup(child);
  }
}

type BuildName = 'before' | 'after';
const builds: Partial<Record<BuildName, string>> = beforeRoot === null ? { after: REPO_ROOT } : { before: beforeRoot, after: REPO_ROOT };
const order = Object.keys(builds) as BuildName[];
const rootOf = (build: BuildName): string => builds[build] as string;
const times = new Map<string, number[]>();
const key = (build: BuildName, name: CommandName, measure: 'health' | 'page') => `${name} | ${build} | ${measure}`;

const loadAtStart = loadavg();
for (const name of Object.keys(COMMANDS) as CommandName[]) {
  for (const build of order) await startOnce(rootOf(build), name); // untimed
  for (let run = 0; run < runs; run += 1) {
    const builds_ = run % 2 === 0 ? order : [...order].reverse();
    for (const build of builds_) {
      const { health, page } = await startOnce(rootOf(build), name);
      for (const [measure, ms] of [['health', health], ['page', page]] as const) {
        const list = times.get(key(build, name, measure)) ?? [];
        list.push(ms);
        times.set(key(build, name, measure), list);
      }
      process.stderr.write(`${name} (${build}) run ${run + 1}: /health ${(health / 1000).toFixed(3)} s, first page ${(page / 1000).toFixed(3)} s\n`);
    }
  }
}
const loadAtEnd = loadavg();

const seconds = (ms: number) => (ms / 1000).toFixed(2);
for (const measure of ['health', 'page'] as const) {
  const what = measure === 'health' ? 'all three /health 200' : 'the first list page 200 (asked once /health answers)';
  console.log(`\nWarm start to ${what}, ${runs} runs each, seconds`);
  console.log(`load average at start ${loadAtStart.map((x) => x.toFixed(2)).join(' ')}, at end ${loadAtEnd.map((x) => x.toFixed(2)).join(' ')}\n`);
  console.log('| command | build | min | median | max |');
  console.log('|---|---|---:|---:|---:|');
  for (const name of Object.keys(COMMANDS) as CommandName[]) {
    for (const build of order) {
      const sorted = [...(times.get(key(build, name, measure)) ?? [])].sort((a, b) => a - b);
      const median = sorted.length % 2 ? sorted[sorted.length >> 1]! : (sorted[sorted.length / 2 - 1]! + sorted[sorted.length / 2]!) / 2;
      const where = build === 'before' ? `before (${beforeRoot})` : 'this build';
      console.log(`| \`${name}\` | ${where} | ${seconds(sorted[0]!)} | ${seconds(median)} | ${seconds(sorted.at(-1)!)} |`);
    }
  }
}
