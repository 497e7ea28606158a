/**
 * The requests service's start on a large snapshot, as the start command runs it (dist/, the start
 * flags, logs off): from spawning it, the time until the first list page answers 200, until `/ready`
 * answers 200, and how long a count of two filters (no summary holds it: the row columns or the SQL
 * answer it) asked right after the first page takes. Every path is polled every 10 ms. With the
 * folder of an earlier build, the runs of the two builds alternate, so that before and after come
 * from the same minutes of the machine.
 *
 *   npx tsx bench/requests-start.ts SNAPSHOT [folder of the earlier build, compiled] [runs, default 5]
 *
 * A SNAPSHOT is a SQLite file or a `postgres://...?schema=NAME` URL.
 */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { REPO_ROOT, START_ENV, START_NODE_FLAGS, freePort } from './support.js';

const [snapshot, ...rest] = process.argv.slice(2);
if (snapshot === undefined) throw new Error('usage: npx tsx bench/requests-start.ts SNAPSHOT [folder of the earlier build] [runs]');
const beforeRoot = rest[0] !== undefined && !/^\d+$/.test(rest[0]) ? resolve(rest.shift() as string) : null;
const runs = Number(rest[0] ?? 5);
const KEY = 'bench-key-0123456789';
const COMBINATION = '/v1/service-requests/count?borough=bronx&borough=queens&status=closed';

const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface StartRun {
  firstPageS: number;
  readyS: number;
  combinationMs: number;
}

/** Polls `path` every 10 ms until it answers 200; the seconds since `started`. */
async function until200(base: string, path: string, started: number, alive: () => boolean): Promise<number> {
  for (;;) {
    try {
      if ((await fetch(`${base}${path}`, { headers: { 'x-api-key': KEY } })).status === 200) return (performance.now() - started) / 1000;
    } catch {
      // not listening yet
    }
    if (!alive()) throw new Error('the service stopped');
    await pause(10);
  }
}

async function startOnce(root: string): Promise<StartRun> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, [...START_NODE_FLAGS, resolve(root, 'dist/src/services/requests/main.js')], {
    cwd: root,
    env: { ...process.env, ...START_ENV, HOST: '127.0.0.1', PORT: String(port), API_KEY: KEY, DATABASE_URL: snapshot as string, CURSOR_SECRET: 'bench-cursor-secret-0123456789abcdef', LOG_LEVEL: 'silent' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  const alive = (): boolean => child.exitCode === null;
  try {
    const ready = until200(base, '/ready', started, alive);
    const firstPageS = await until200(base, '/v1/service-requests?limit=50', started, alive);
    const asked = performance.now();
    const combination = await fetch(`${base}${COMBINATION}`, { headers: { 'x-api-key': KEY } });
    if (combination.status !== 200) throw new Error(`the count answered ${combination.status}`);
    await combination.arrayBuffer();
    const combinationMs = performance.now() - asked;
    return { firstPageS, readyS: await ready, combinationMs };
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
}

const builds = beforeRoot === null ? [['this build', REPO_ROOT]] : [['before', beforeRoot], ['after', REPO_ROOT]];
const results = new Map<string, StartRun[]>(builds.map(([name]) => [name as string, []]));
// One untimed start of each build first (the file cache).
for (const [, root] of builds) await startOnce(root as string);
for (let run = 0; run < runs; run += 1) {
  const order = run % 2 === 0 ? builds : [...builds].reverse();
  for (const [name, root] of order) (results.get(name as string) as StartRun[]).push(await startOnce(root as string));
}
const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
const span = (values: number[], digits: number): string => `${median(values).toFixed(digits)} (${Math.min(...values).toFixed(digits)} to ${Math.max(...values).toFixed(digits)})`;
console.log(`${snapshot}, ${runs} runs each`);
console.log('| build | first page s | ready s | count of two filters after the first page ms |');
console.log('|---|---|---|---|');
for (const [name, values] of results) {
  console.log(`| ${name} | ${span(values.map((v) => v.firstPageS), 2)} | ${span(values.map((v) => v.readyS), 2)} | ${span(values.map((v) => v.combinationMs), 0)} |`);
}
