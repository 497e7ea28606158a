/**
 * Count, facets and weekly / monthly statistics before and after the aggregate summaries, in one run:
 *
 *   npx tsx bench/investigations/summaries.ts --before /work/main --label 10x --first-year 2021 \
 *     --sqlite-before A.sqlite --sqlite-after B.sqlite --postgres-before URL --postgres-after URL [--seconds 3]
 *
 * "before" serves the snapshot without summaries with the code of the --before worktree (main);
 * "after" serves the same snapshot with its summaries (bench/investigations/add-aggregate-summaries.ts) with this
 * worktree's code. Both run from source (tsx) side by side; each case is loaded at 10 connections
 * for --seconds, before then after, and the table gives p50 / p99 in ms and the errors (timeouts
 * and non-2xx answers, 503 included).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { START_NODE_FLAGS, REPO_ROOT, freePort, load, type LoadResult } from '../support.js';

const { values } = parseArgs({
  options: {
    before: { type: 'string', default: '/work/main' },
    label: { type: 'string', default: '' },
    'first-year': { type: 'string', default: '2025' },
    'sqlite-before': { type: 'string' },
    'sqlite-after': { type: 'string' },
    'postgres-before': { type: 'string' },
    'postgres-after': { type: 'string' },
    seconds: { type: 'string', default: '3' },
  },
});
const seconds = Number(values.seconds);
const KEY = 'bench-key-0123456789';
const year = values['first-year'];

/** The cases the summaries cover: no filter, one filter, a range alone or with one filter. */
const CASES: [string, string][] = [
  ['count, no filter', '/v1/service-requests/count'],
  ['count, one filter', '/v1/service-requests/count?borough=bronx'],
  ['count, range + one filter', `/v1/service-requests/count?created_from=${year}-03-01&status=closed`],
  ['facets, no filter', '/v1/facets?field=complaint_type'],
  ['facets, one filter (2 values)', '/v1/facets?field=complaint_type&borough=bronx&borough=queens'],
  ['facets, range', `/v1/facets?field=borough&created_from=${year}-03-01`],
  ['weekly, no filter', '/v1/stats/weekly'],
  ['weekly, one filter', '/v1/stats/weekly?status=closed'],
  ['monthly, range + one filter', `/v1/stats/monthly?created_from=${year}-03-01&channel=phone`],
];

async function serve(worktree: string, databaseUrl: string): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(process.execPath, [...START_NODE_FLAGS, '--import', 'tsx', resolve(worktree, 'src/services/requests/main.ts')], {
    cwd: worktree,
    env: { ...process.env, HOST: '127.0.0.1', PORT: String(port), API_KEY: KEY, DATABASE_URL: databaseUrl, CURSOR_SECRET: 'bench-cursor-secret-0123456789abcdef', LOG_LEVEL: 'silent' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  const started = performance.now();
  // Ready when a count answers (the SQLite keyset index of the row path is read by then).
  for (;;) {
    try {
      const response = await fetch(`${url}/v1/service-requests/count?status=closed&borough=bronx`, { headers: { 'x-api-key': KEY } });
      if (response.status === 200) break;
    } catch {
      // not listening yet
    }
    if (child.exitCode !== null || performance.now() - started > 600_000) throw new Error(`the service of ${worktree} did not answer`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return { url, child };
}

async function stop(child: ChildProcess): Promise<void> {
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
}

const cell = (r: LoadResult): string => `${r.p50Ms} / ${r.p99Ms}${r.errors + r.non2xx > 0 ? ` (${r.errors + r.non2xx} err)` : ''}`;

const lines = [`| case (${values.label}) | backend | before p50 / p99 ms | after p50 / p99 ms |`, '|---|---|---:|---:|'];
for (const [backend, before, after] of [
  ['SQLite', values['sqlite-before'], values['sqlite-after']],
  ['PostgreSQL', values['postgres-before'], values['postgres-after']],
] as const) {
  if (before === undefined || after === undefined) continue;
  const servedBefore = await serve(values.before, before);
  const servedAfter = await serve(REPO_ROOT, after);
  try {
    for (const [name, path] of CASES) {
      const request = { method: 'GET' as const, path, headers: { 'x-api-key': KEY } };
      const loadOf = (url: string): Promise<LoadResult> => load(name, { url, connections: 10, durationSeconds: seconds, requests: [request] });
      const beforeResult = await loadOf(servedBefore.url);
      const afterResult = await loadOf(servedAfter.url);
      lines.push(`| ${name} | ${backend} | ${cell(beforeResult)} | ${cell(afterResult)} |`);
      process.stderr.write(`${lines.at(-1)}\n`);
    }
  } finally {
    await stop(servedBefore.child);
    await stop(servedAfter.child);
  }
}
process.stdout.write(`${lines.join('\n')}\n`);
