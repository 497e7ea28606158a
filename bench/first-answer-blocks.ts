/**
 * The longest event-loop block around each path's first answer, asked one at a time: the compiled
 * service (dist/, as `npm start` runs it) serves the snapshot, bench/event-loop-probe.mjs reads the
 * loop's longest delay after each answer (and 50 ms of quiet), then the same path is asked again with
 * `Accept-Encoding: gzip` (answered from the kept body):
 *
 *   npx tsx bench/first-answer-blocks.ts SNAPSHOT PATH...
 *
 * A SNAPSHOT is a SQLite file or a `postgres://...?schema=NAME` URL. Before and after in one run: the
 * same command from the checkout of the earlier commit (its own `dist/`), alternating.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT, START_ENV, START_NODE_FLAGS, freePort } from './support.js';

const [snapshot, ...paths] = process.argv.slice(2);
if (snapshot === undefined || paths.length === 0) throw new Error('usage: npx tsx bench/first-answer-blocks.ts SNAPSHOT PATH...');
const KEY = 'bench-key';
const port = await freePort();
const probe = join(tmpdir(), `event-loop-${port}.txt`);
const child = spawn(process.execPath, [...START_NODE_FLAGS, '--import', join(REPO_ROOT, 'bench/event-loop-probe.mjs'), join(REPO_ROOT, 'dist/src/services/requests/main.js')], {
  cwd: REPO_ROOT,
  env: { ...process.env, ...START_ENV, HOST: '127.0.0.1', PORT: String(port), API_KEY: KEY, DATABASE_URL: snapshot, CURSOR_SECRET: 'bench-cursor-secret-0123456789abcdef', LOG_LEVEL: 'silent', EVENT_LOOP_PROBE_FILE: probe },
  stdio: ['ignore', 'ignore', 'inherit'],
});
const base = `http://127.0.0.1:${port}`;
const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The longest block since the last reading, in ms. */
async function longestBlock(): Promise<number> {
  child.kill('SIGUSR2');
  for (let i = 0; i < 3000 && !existsSync(probe); i += 1) await pause(10);
  await pause(30);
  const value = Number(readFileSync(probe, 'utf8'));
  rmSync(probe, { force: true });
  return value;
}

try {
  for (;;) {
    try {
      if ((await fetch(`${base}/ready`)).status === 200) break;
    } catch {
      // not listening yet
    }
    if (child.exitCode !== null) throw new Error('the service stopped');
    await pause(20);
  }
  await pause(500);
  await longestBlock();
  console.log('| path | encoding | status | bytes | ms | longest block ms |');
  console.log('|---|---|---:|---:|---:|---:|');
  for (const path of paths) {
    for (const encoding of ['identity', 'gzip']) {
      const sent = performance.now();
      const response = await fetch(`${base}${path}`, { headers: { 'x-api-key': KEY, 'accept-encoding': encoding } });
      const bytes = (await response.arrayBuffer()).byteLength;
      const ms = performance.now() - sent;
      await pause(50);
      console.log(`| \`${path}\` | ${encoding} | ${response.status} | ${bytes} | ${ms.toFixed(0)} | ${(await longestBlock()).toFixed(1)} |`);
    }
  }
} finally {
  child.kill('SIGTERM');
  await new Promise((resolve) => child.once('exit', resolve));
}
