/**
 * The data API at several sizes of the snapshot, both backends side by side, in one run:
 *
 *   npx tsx bench/scale.ts [--scales 1,10,50] [--dir /tmp/scale-bench] [--seconds 3] [--before /tmp/before-worktree]
 *                          [--backends sqlite,postgres] [--reuse] [--layout portal-csv|api-csv|api-json]
 *
 * Scale 1 is the synthetic export (109,915 requests, DOT January to June 2025, filters on); scale k > 1
 * is a synthetic history of k x 109,915 requests (2021 to 2025 up to 10x, 2016 to 2025 beyond), loaded
 * without the filters. Exports are written once into --dir and reused when present (prepared files).
 * For each scale and backend: the snapshot command in a child process (wall time, peak RSS from
 * /usr/bin/time, rows/s), the SQLite file or the PostgreSQL tables' size, the service started as
 * `npm start` runs it (start to the first data answer, RSS after it), then p50/p99 at 10 connections
 * for every route and filter kind, the longest event-loop block of the service during each case and
 * under a flood of statistics that walk rows (perf_hooks.monitorEventLoopDelay, through
 * bench/event-loop-probe.mjs; in brackets the same without the time the event loop's thread waited
 * for a core; each turn over 20 ms is explained in --dir/event-loop-<port>.txt.turns), and the RSS at
 * the end. With --before, the snapshot command of that worktree (a build of an earlier
 * commit, with its dist/ built) is timed on the same files first, and on SQLite its service serves
 * its own snapshot beside this one's, for the before/after of the same run. --reuse keeps SQLite
 * snapshots already in --dir (snapshot-Nx.sqlite, snapshot-Nx-before.sqlite) instead of building them.
 * --layout writes the exports in that layout of the snapshot command (default the portal's CSV), so
 * that the ingestion of the API's CSV and JSON is measured at every scale too.
 * PostgreSQL: $TEST_DATABASE_URL, a schema per scale, dropped at the end.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { REPO_ROOT, dropPostgresSnapshot, postgresSnapshotBytes, START_ENV, START_NODE_FLAGS, freePort, load, rssMb, scaleCases, snapshotCli, timedSnapshotCommand, TSX, type Ingest, type LoadResult } from './support.js';

const { values } = parseArgs({
  options: {
    scales: { type: 'string', default: '1,10' },
    dir: { type: 'string', default: '/tmp/scale-bench' },
    seconds: { type: 'string', default: '3' },
    before: { type: 'string' },
    backends: { type: 'string', default: 'sqlite,postgres' },
    reuse: { type: 'boolean', default: false },
    layout: { type: 'string', default: 'portal-csv' },
  },
});
const scales = values.scales.split(',').map(Number);
const seconds = Number(values.seconds);
const databaseUrl = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const KEY = 'bench-key-0123456789';
const BASE_ROWS = 109_915;
mkdirSync(values.dir, { recursive: true });


/** The export of a scale: written once (the generator is not timed). */
function exportFile(scale: number): string {
  const layout = values.layout === 'portal-csv' ? '' : `-${values.layout}`;
  const extension = values.layout === 'api-json' ? 'json' : 'csv';
  const file = join(values.dir, scale === 1 ? `synthetic-1x${layout}.${extension}` : `history-${scale}x${layout}.${extension}`);
  if (!existsSync(file)) {
    const history = scale === 1 ? [] : ['--rows', String(BASE_ROWS * scale), '--from', scale > 10 ? '2016' : '2021', '--to', '2025'];
    const written = [...history, '--layout', values.layout, '--write-synthetic-export', file];
    execFileSync(TSX, [snapshotCli(REPO_ROOT), ...written], { cwd: REPO_ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  }
  return file;
}

/** The snapshot command of `root` (this worktree or --before) on `file` into `target` (--output FILE or --database URL --schema S). */
function timed(root: string, scale: number, file: string, target: string[]): Ingest {
  return timedSnapshotCommand(root, ['--input', file, ...(scale === 1 ? [] : ['--no-filter']), ...target, '--quiet'], join(values.dir, 'time.txt'));
}

interface Served {
  startSeconds: number;
  /** Start to /ready 200 (the schemas compiled: a request answers at full speed), s. */
  readySeconds: number;
  /** The longest event-loop block while statistics that walk rows flood the service. */
  floodBlocks: Blocks;
  /** The longest event-loop block during the cases (every route and filter kind). */
  casesBlocks: Blocks;
  /** The longest event-loop block during each case, in the order of the cases. */
  caseBlocks: Blocks[];
  rssAfterStartMb: number;
  rssAfterLoadMb: number;
  loads: LoadResult[];
}


/** A combination no summary answers: the statistics walk the matching rows. */
const FLOOD_PATH = '/v1/stats/weekly?borough=queens&status=closed&complaint_type=Street%20Light%20Condition';

/** The longest event-loop block of the child since the last call, and the longest of its own making (bench/event-loop-probe.mjs). */
interface Blocks {
  /** As monitorEventLoopDelay measures it, ms. */
  maxMs: number;
  /** Without the time the event loop's thread waited for a core, ms. */
  ownMaxMs: number;
}

async function eventLoopBlocks(child: ReturnType<typeof spawn>, probeFile: string): Promise<Blocks> {
  child.kill('SIGUSR2');
  // The signal is handled when the loop turns: after the block in progress, if any.
  for (let i = 0; i < 6000 && !existsSync(probeFile); i += 1) await new Promise((r) => setTimeout(r, 10));
  await new Promise((r) => setTimeout(r, 50));
  if (!existsSync(probeFile)) return { maxMs: Number.NaN, ownMaxMs: Number.NaN };
  const read = (path: string): number => (existsSync(path) ? Number(readFileSync(path, 'utf8')) : Number.NaN);
  const blocks = { maxMs: read(probeFile), ownMaxMs: read(`${probeFile}.own`) };
  rmSync(probeFile, { force: true });
  rmSync(`${probeFile}.own`, { force: true });
  return blocks;
}

/** The requests service of `root` (this worktree, or --before) serving the snapshot. */
async function serve(root: string, databaseUrlOrPath: string, firstYear: string, lastYear: string): Promise<Served> {
  const port = await freePort();
  const probeFile = join(values.dir, `event-loop-${port}.txt`);
  const started = performance.now();
  const child = spawn(process.execPath, [...START_NODE_FLAGS, '--import', join(REPO_ROOT, 'bench/event-loop-probe.mjs'), join(root, 'dist/src/services/requests/main.js')], {
    cwd: root,
    env: {
      ...process.env,
      ...START_ENV,
      HOST: '127.0.0.1',
      PORT: String(port),
      API_KEY: KEY,
      DATABASE_URL: databaseUrlOrPath,
      CURSOR_SECRET: 'bench-cursor-secret-0123456789abcdef',
      LOG_LEVEL: 'silent',
      EVENT_LOOP_PROBE_FILE: probeFile,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  try {
    for (;;) {
      try {
        const response = await fetch(`${base}/v1/service-requests?limit=1`, { headers: { 'x-api-key': KEY } });
        if (response.status === 200) break;
      } catch {
        // not listening yet
      }
      if (child.exitCode !== null || performance.now() - started > 300_000) throw new Error('the service did not answer');
      await new Promise((r) => setTimeout(r, 20));
    }
    const startSeconds = (performance.now() - started) / 1000;
    const rssAfterStartMb = rssMb(child.pid!);
    // A replica takes traffic once ready: the blocks measured from then on are those clients meet.
    while ((await fetch(`${base}/ready`)).status !== 200) {
      if (child.exitCode !== null || performance.now() - started > 300_000) throw new Error('the service did not become ready');
      await new Promise((r) => setTimeout(r, 20));
    }
    const readySeconds = (performance.now() - started) / 1000;
    // The start's own blocks (loading modules, opening the snapshot, compiling the schemas) are not a request's: reset.
    await eventLoopBlocks(child, probeFile);
    const loads: LoadResult[] = [];
    const caseBlocks: Blocks[] = [];
    for (const [name, path] of scaleCases(firstYear, lastYear)) {
      loads.push(await load(name, { url: base, connections: 10, durationSeconds: seconds, requests: [{ method: 'GET', path, headers: { 'x-api-key': KEY } }] }));
      caseBlocks.push(await eventLoopBlocks(child, probeFile));
    }
    const casesBlocks = { maxMs: Math.max(...caseBlocks.map((b) => b.maxMs)), ownMaxMs: Math.max(...caseBlocks.map((b) => b.ownMaxMs)) };
    loads.push(await load('stats flood (weekly, combination)', { url: base, connections: 10, durationSeconds: seconds, requests: [{ method: 'GET', path: FLOOD_PATH, headers: { 'x-api-key': KEY } }] }));
    const floodBlocks = await eventLoopBlocks(child, probeFile);
    return { startSeconds, readySeconds, floodBlocks, casesBlocks, caseBlocks, rssAfterStartMb, rssAfterLoadMb: rssMb(child.pid!), loads };
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
}

const mb = (bytes: number): string => `${Math.round(bytes / 1e6)} MB`;
const lines: string[] = [];
const ingestLines: string[] = ['| scale | backend | build | rows | wall s | rows/s | CPU s | rows per CPU s | peak RSS MB |', '|---|---|---|---:|---:|---:|---:|---:|---:|'];
const ingestLine = (scale: number, backend: string, build: string, i: Ingest): string =>
  `| ${scale}x | ${backend} | ${build} | ${i.rows.toLocaleString('en-US')} | ${i.seconds} | ${i.rowsPerSecond.toLocaleString('en-US')} | ${i.cpuSeconds.toFixed(1)} | ${Math.round(i.rows / i.cpuSeconds).toLocaleString('en-US')} | ${i.peakRssMb} |`;
const servedBy = new Map<string, Served>();
const sizeLines: string[] = [
  '| scale | backend | size | start to first answer s | start to ready s | RSS after start MB | RSS after the load MB | max event-loop block during the cases ms (own) | max event-loop block under a stats flood ms (own) |',
  '|---|---|---|---:|---:|---:|---:|---:|---:|',
];
/** A block as monitorEventLoopDelay measures it, with the part of the service's own making in brackets. */
const blocksCell = (b: Blocks): string => `${b.maxMs.toFixed(1)} (${b.ownMaxMs.toFixed(1)})`;
const sizeLine = (scale: number, backend: string, size: number, served: Served): string =>
  `| ${scale}x | ${backend} | ${mb(size)} | ${served.startSeconds.toFixed(2)} | ${served.readySeconds.toFixed(2)} | ${served.rssAfterStartMb} | ${served.rssAfterLoadMb} | ${blocksCell(served.casesBlocks)} | ${blocksCell(served.floodBlocks)} |`;
const wanted = new Set(values.backends.split(','));

// The service runs from the compiled build, as `npm start` runs it.
execFileSync(process.execPath, [join(REPO_ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd: REPO_ROOT });
for (const scale of scales) {
  const file = exportFile(scale);
  const firstYear = scale === 1 ? '2025' : scale > 10 ? '2016' : '2021';
  const lastYear = '2025';
  const sqlitePath = join(values.dir, `snapshot-${scale}x.sqlite`);
  const schema = `scale_bench_${scale}x`;
  const backends: [string, string, string[], string][] = [
    ['sqlite', 'SQLite', ['--output', sqlitePath], sqlitePath],
    ['postgres', 'PostgreSQL', ['--database', databaseUrl, '--schema', schema], `${databaseUrl}?schema=${schema}`],
  ];
  for (const [option, backend, target, serveUrl] of backends) {
    if (!wanted.has(option)) continue;
    const sqlite = backend === 'SQLite';
    if (values.before !== undefined) {
      // SQLite: the earlier build's own file, served by the earlier build beside this one's.
      const beforePath = join(values.dir, `snapshot-${scale}x-before.sqlite`);
      if (!(sqlite && values.reuse && existsSync(beforePath))) {
        ingestLines.push(ingestLine(scale, backend, 'before', timed(values.before, scale, file, sqlite ? ['--output', beforePath] : target)));
      }
      if (sqlite) {
        const served = await serve(values.before, beforePath, firstYear, lastYear);
        servedBy.set(`${scale}x ${backend} before`, served);
        sizeLines.push(sizeLine(scale, `${backend} before`, statSync(beforePath).size, served));
      }
    }
    if (!(sqlite && values.reuse && existsSync(sqlitePath))) ingestLines.push(ingestLine(scale, backend, 'after', timed(REPO_ROOT, scale, file, target)));
    const size = sqlite ? statSync(sqlitePath).size : await postgresSnapshotBytes(databaseUrl, schema);
    const served = await serve(REPO_ROOT, serveUrl, firstYear, lastYear);
    servedBy.set(`${scale}x ${backend}`, served);
    sizeLines.push(sizeLine(scale, backend, size, served));
    if (backend === 'PostgreSQL') await dropPostgresSnapshot(databaseUrl, schema);
    process.stderr.write(`${scale}x ${backend} done\n`);
  }
}

lines.push(`Files: ${values.dir}; ${seconds} s per case at 10 connections; Node ${process.version}.`, '', '### Ingestion', '', ...ingestLines, '', '### Size, start and memory', '', ...sizeLines, '');
const keys = [...servedBy.keys()];
lines.push('### p50 / p99 ms at 10 connections (errors + non-2xx)', '', `| case | ${keys.join(' | ')} |`, `|---|${keys.map(() => '---:').join('|')}|`);
const caseNames = servedBy.get(keys[0]!)?.loads.map((l) => l.name) ?? [];
caseNames.forEach((name, i) => {
  const cells = keys.map((key) => {
    const l = servedBy.get(key)!.loads[i]!;
    const bad = l.errors + l.non2xx;
    if (l.requestsPerSecond === 0 && l.p50Ms === 0) return `no answer in ${seconds} s`;
    return `${l.p50Ms} / ${l.p99Ms}${bad > 0 ? ` (${bad})` : ''}`;
  });
  lines.push(`| ${name} | ${cells.join(' | ')} |`);
});
lines.push(
  '',
  '### Longest event-loop block during each case, ms (in brackets: without the time its thread waited for a core)',
  '',
  `| case | ${keys.join(' | ')} |`,
  `|---|${keys.map(() => '---:').join('|')}|`,
);
caseNames.forEach((name, i) => {
  const cells = keys.map((key) => servedBy.get(key)!.caseBlocks[i]);
  if (cells.every((cell) => cell !== undefined)) lines.push(`| ${name} | ${cells.map((cell) => blocksCell(cell)).join(' | ')} |`);
});
process.stdout.write(`${lines.join('\n')}\n`);
