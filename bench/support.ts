import autocannon from 'autocannon';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { Agent, request } from 'node:http';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { quoteIdentifier } from '../src/shared/postgres-schema.js';
import { dropServedSchema } from '../src/snapshot/postgres-snapshot-pointer.js';
import { freePort } from '../test/support/free-port.js';

/** Shared pieces of the benchmarks: a free loopback port, a service in a child process, autocannon. */
export const REPO_ROOT = resolve(import.meta.dirname, '..');

export { freePort };

/** CPU time (user + system, seconds) a process has used so far, from /proc. */
export function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** The resident memory of a process now, MB (VmRSS, from /proc). */
export const rssMb = (pid: number): number => Math.round(Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024);

export const TSX = join(REPO_ROOT, 'node_modules/.bin/tsx');
/** The snapshot command's source in the checkout `root`. */
export const snapshotCli = (root: string): string => join(root, 'src/ingest/nyc311/cli.ts');

/** The figures of one run of the snapshot command. */
export interface Ingest {
  seconds: number;
  /** CPU time of the command (user + system), without the database server's. */
  cpuSeconds: number;
  peakRssMb: number;
  rows: number;
  rowsPerSecond: number;
}

/**
 * The figures of a run of the snapshot command: `timeFile` as /usr/bin/time -f '%e %M %U %S' writes
 * it (wall s, peak RSS KiB, user s, system s), `summary` the command's stdout (its last line is the
 * summary object).
 */
export function ingestFigures(timeFile: string, summary: string): Ingest {
  const [wall = 0, kb = 0, user = 0, system = 0] = readFileSync(timeFile, 'utf8').trim().split('\n').pop()!.split(' ').map(Number);
  const rows = (JSON.parse(summary.trim().split('\n').pop() ?? '{}') as { row_count?: number }).row_count ?? 0;
  return { seconds: wall, cpuSeconds: user + system, peakRssMb: Math.round(kb / 1024), rows, rowsPerSecond: Math.round(rows / wall) };
}

/** The snapshot command of the checkout `root` with `args`, under /usr/bin/time (writing `timeFile`). */
export function timedSnapshotCommand(root: string, args: string[], timeFile: string): Ingest {
  const stdout = execFileSync('/usr/bin/time', ['-f', '%e %M %U %S', '-o', timeFile, TSX, snapshotCli(root), ...args], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 1 << 26,
  });
  return ingestFigures(timeFile, stdout);
}

/** The bytes of a served PostgreSQL snapshot: the tables of the snapshot schema its pointer names (its own views hold nothing). */
export async function postgresSnapshotBytes(databaseUrl: string, schema: string): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const result = await client.query(
      `SELECT coalesce(sum(pg_total_relation_size(format('%I.%I', schemaname, tablename))), 0) AS bytes FROM pg_tables
       WHERE schemaname = (SELECT schema_name FROM ${quoteIdentifier(schema)}.snapshot_pointer WHERE id = 1)`,
    );
    return Number((result.rows[0] as { bytes: string }).bytes);
  } finally {
    await client.end();
  }
}

/** Drops a served PostgreSQL snapshot: the schema and the snapshot schemas it points to. */
export async function dropPostgresSnapshot(databaseUrl: string, schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await dropServedSchema(client, schema);
  } finally {
    await client.end();
  }
}

/**
 * The server's CPU µs per request: a warm-up of a third of `count` requests, then `count` requests,
 * the process's CPU time (from /proc) measured around the second run only.
 */
export async function cpuMicrosPerRequest(pid: number, count: number, run: (amount: number) => Promise<unknown>): Promise<number> {
  await run(Math.round(count / 3));
  const before = cpuSeconds(pid);
  await run(count);
  return ((cpuSeconds(pid) - before) / count) * 1e6;
}

export interface ChildService {
  child: ChildProcess;
  url: string;
  rssMb(): number;
  stop(): Promise<void>;
}

let built = false;

/** The compiled build, as `npm start` runs it (`tsc` once per benchmark run). */
function compiledEntry(entry: string): string {
  if (!entry.endsWith('.ts')) return resolve(REPO_ROOT, entry);
  if (!built) {
    execFileSync(process.execPath, [resolve(REPO_ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd: REPO_ROOT, stdio: 'inherit' });
    built = true;
  }
  return resolve(REPO_ROOT, 'dist', entry.replace(/\.ts$/, '.js'));
}

/**
 * Starts an entry point in its own process, as in production: a `src/...ts` entry runs from the
 * compiled build; logs are discarded. Resolves once it answers `readyPath`.
 */
/**
 * How the npm start scripts (package.json) and the image run a service: V8's young generation capped,
 * and glibc's allocator giving blocks of 64 KB and more their own mappings (docs/decisions.md, "Memory").
 */
export const START_NODE_FLAGS = ['--max-semi-space-size=4', '--max-old-space-size=1024', '--single-threaded-gc'];
export const START_ENV = { MALLOC_MMAP_THRESHOLD_: '65536' };

export async function startChild(entry: string, env: Record<string, string> = {}, readyPath = '/health'): Promise<ChildService> {
  const port = await freePort();
  const child = spawn(process.execPath, [...START_NODE_FLAGS, compiledEntry(entry)], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...START_ENV, HOST: '127.0.0.1', PORT: String(port), ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      const response = await fetch(`${url}${readyPath}`);
      if (response.status < 500) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`${entry} did not start`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    child,
    url,
    rssMb() {
      const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
      const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
      return Math.round(kb / 1024);
    },
    async stop() {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    },
  };
}

/** The requests service started with bench/event-loop-probe.mjs (probedRequestsService). */
export interface ProbedService {
  child: ChildProcess;
  /** `http://127.0.0.1:PORT` */
  base: string;
  /** When the process was spawned (performance.now()). */
  started: number;
  /** Resolves once `/ready` answers 200; throws if the process stops first. */
  untilReady(): Promise<void>;
  /** The longest event-loop block of the service since the last call, in ms. */
  longestBlock(): Promise<number>;
  rssMb(): number;
  stop(): Promise<void>;
}

/** Where and how probedRequestsService starts the service. */
export interface ProbedServiceOptions {
  /** The checkout whose dist/ is served (default this one). */
  root?: string;
  /** Node options added to START_NODE_FLAGS (a CPU profile, a V8 flag to try). */
  nodeFlags?: string[];
  /** The probe's file (default one in the system's temporary directory); its `.own` and `.turns` beside it. */
  probeFile?: string;
}

/**
 * The compiled requests service (dist/, as `npm start` runs it) serving `databaseUrl` (a SQLite file
 * or a `postgres://` URL), logs off, with bench/event-loop-probe.mjs preloaded: each SIGUSR2 makes it
 * write the longest event-loop block since the previous one.
 */
export async function probedRequestsService(databaseUrl: string, apiKey: string, options: ProbedServiceOptions = {}): Promise<ProbedService> {
  const port = await freePort();
  const root = options.root ?? REPO_ROOT;
  const probe = options.probeFile ?? join(tmpdir(), `event-loop-${port}.txt`);
  const started = performance.now();
  const flags = [...START_NODE_FLAGS, ...(options.nodeFlags ?? [])];
  const child = spawn(process.execPath, [...flags, '--import', resolve(REPO_ROOT, 'bench/event-loop-probe.mjs'), resolve(root, 'dist/src/services/requests/main.js')], {
    cwd: root,
    env: { ...process.env, ...START_ENV, HOST: '127.0.0.1', PORT: String(port), API_KEY: apiKey, DATABASE_URL: databaseUrl, CURSOR_SECRET: 'bench-cursor-secret-0123456789abcdef', LOG_LEVEL: 'silent', EVENT_LOOP_PROBE_FILE: probe },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
  return {
    child,
    base,
    started,
    async untilReady() {
      for (;;) {
        try {
          if ((await fetch(`${base}/ready`)).status === 200) return;
        } catch {
          // not listening yet
        }
        if (child.exitCode !== null) throw new Error('the service stopped');
        await pause(20);
      }
    },
    async longestBlock() {
      child.kill('SIGUSR2');
      for (let i = 0; i < 3000 && !existsSync(probe); i += 1) await pause(10);
      await pause(30);
      const value = Number(readFileSync(probe, 'utf8'));
      rmSync(probe, { force: true });
      return value;
    },
    rssMb: () => Math.round(Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1] ?? 0) / 1024),
    async stop() {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
      for (const written of [probe, `${probe}.own`, `${probe}.turns`, `${probe}.gc`]) rmSync(written, { force: true });
    },
  };
}

export interface LoadResult {
  name: string;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  non2xx: number;
}

export async function load(
  name: string,
  options: { url: string; connections: number; durationSeconds: number; requests?: autocannon.Request[]; method?: string; headers?: Record<string, string>; body?: string },
): Promise<LoadResult> {
  const result = await autocannon({
    url: options.url,
    connections: options.connections,
    duration: options.durationSeconds,
    method: (options.method ?? 'GET') as 'GET',
    headers: options.headers,
    body: options.body,
    requests: options.requests,
  });
  return {
    name,
    requestsPerSecond: Math.round(result.requests.average),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
  };
}

export function table(results: LoadResult[]): string {
  const lines = ['| case | req/s | p50 ms | p99 ms | errors | non-2xx |', '|---|---:|---:|---:|---:|---:|'];
  for (const r of results) lines.push(`| ${r.name} | ${r.requestsPerSecond} | ${r.p50Ms} | ${r.p99Ms} | ${r.errors} | ${r.non2xx} |`);
  return lines.join('\n');
}

/** One POST on the agent's connection; resolves with the status once the body is read. */
export function postOnce(agent: Agent, url: URL, body: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolveStatus, reject) => {
    const req = request(url, { method: 'POST', agent, headers: { ...headers, 'content-length': Buffer.byteLength(body) } }, (res) => {
      res.resume();
      res.on('end', () => resolveStatus(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The p-th percentile (nearest rank) of ascending values. */
export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

/** One keep-alive connection for the sequential measures. */
export const keepAlive = new Agent({ keepAlive: true, maxSockets: 1 });

/** GET with an API key on the keep-alive connection; the body as text (`headers` adds request headers). */
export function keyedGet(base: string, path: string, key = 'bench-key-0123456789', headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolveGet, reject) => {
    const req = request(`${base}${path}`, { agent: keepAlive, headers: { 'x-api-key': key, ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolveGet({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** p50 and p99 (ms) of sequential requests on one keep-alive connection. */
export async function sequentialLatency(base: string, paths: string[], count: number, key = 'bench-key-0123456789'): Promise<{ p50: number; p99: number }> {
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = process.hrtime.bigint();
    const response = await keyedGet(base, paths[i % paths.length]!, key);
    times.push(Number(process.hrtime.bigint() - started) / 1e6);
    if (response.status !== 200) throw new Error(`${response.status} ${response.body}`);
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => Math.round(times[Math.min(times.length - 1, Math.floor(q * times.length))]! * 1000) / 1000;
  return { p50: at(0.5), p99: at(0.99) };
}

export interface Walk {
  rows: number;
  pages: number;
  ms: number;
  cursors: string[];
}

/** Follows next_cursor from the first page to the last; checks no id repeats. */
export async function walk(base: string, query: string, limit: number, key = 'bench-key-0123456789'): Promise<Walk> {
  const started = performance.now();
  const cursors: string[] = [];
  const seen = new Set<number>();
  let cursor: string | null = null;
  let pages = 0;
  do {
    const response = await keyedGet(base, `/v1/service-requests?${query}${query ? '&' : ''}limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`, key);
    if (response.status !== 200) throw new Error(`page ${pages}: ${response.status} ${response.body}`);
    const page = JSON.parse(response.body) as { items: { id: number }[]; next_cursor: string | null };
    for (const item of page.items) {
      if (seen.has(item.id)) throw new Error(`id ${item.id} repeated`);
      seen.add(item.id);
    }
    pages++;
    cursor = page.next_cursor;
    if (cursor) cursors.push(cursor);
  } while (cursor);
  return { rows: seen.size, pages, ms: performance.now() - started, cursors };
}

/** Bytes of an answer as sent, compressed or not (node:http does not decode). */
export function encodedSize(url: string, key: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolveSize, reject) => {
    const req = request(url, { headers: { 'x-api-key': key, ...headers } }, (res) => {
      let size = 0;
      res.on('data', (chunk: Buffer) => (size += chunk.length));
      res.on('end', () => resolveSize(size));
    });
    req.on('error', reject);
    req.end();
  });
}

/** A load case of the requests service: a query added to the page's URL and request headers. */
export interface PageCase {
  name: string;
  query: string;
  headers: Record<string, string>;
}

/** The page of 1000 in each format, and in JSON with each encoding (dashboard-api.ts, formats-and-compression.ts). */
export const PAGE_OF_1000_CASES: readonly PageCase[] = [
  { name: 'JSON page of 1000', query: '', headers: {} },
  { name: 'CSV page of 1000', query: '&format=csv', headers: {} },
  { name: 'GeoJSON page of 1000', query: '&format=geojson', headers: {} },
  { name: 'JSON page of 1000, gzip', query: '', headers: { 'accept-encoding': 'gzip' } },
  { name: 'JSON page of 1000, br', query: '', headers: { 'accept-encoding': 'br' } },
];

/**
 * The cases of the data API's scale benches (bench/scale.ts, bench/event-loop-hunt.ts): every route,
 * with no filter, one filter, a date range and one filter, and a combination; then pages of 50.
 */
export function scaleCases(firstYear: string, lastYear: string): [string, string][] {
  const filters: [string, string][] = [
    ['no filter', ''],
    ['one filter', 'borough=brooklyn'],
    ['range + one filter', `created_from=${lastYear}-03-01T00:00:00&created_to=${lastYear}-05-01T00:00:00&complaint_type=Street%20Condition`],
    ['combination', 'borough=queens&status=closed&complaint_type=Street%20Light%20Condition'],
  ];
  const out: [string, string][] = [];
  for (const [route, extra] of [
    ['/v1/service-requests/count', ''],
    ['/v1/facets', 'field=complaint_type'],
    ['/v1/stats/daily', ''],
    ['/v1/stats/weekly', ''],
    ['/v1/stats/monthly', ''],
  ] as const) {
    for (const [kind, query] of filters) {
      const q = [extra, query].filter(Boolean).join('&');
      out.push([`${route} ${kind}`, `${route}${q ? `?${q}` : ''}`]);
    }
  }
  out.push(['page of 50, no filter', '/v1/service-requests?limit=50']);
  out.push(['page of 50, one filter', '/v1/service-requests?limit=50&borough=bronx']);
  out.push(['page of 50, range + one filter', `/v1/service-requests?limit=50&created_from=${firstYear}-06-01T00:00:00&status=open`]);
  out.push(['page of 50, two filters', '/v1/service-requests?limit=50&borough=bronx&channel=online']);
  out.push(['page of 50, map box (0.01 degree)', '/v1/service-requests?limit=50&bbox=-73.96,40.67,-73.95,40.68']);
  return out;
}
