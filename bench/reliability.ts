import autocannon from 'autocannon';
import { execFileSync, spawn } from 'node:child_process';
import { closeSync, copyFileSync, existsSync, mkdtempSync, openSync, readFileSync, readSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { resolve } from 'node:path';
import pg from 'pg';
import { SAMPLE_HOUSE } from '../src/services/houses/house.js';
import { REALISTIC_TICKETS } from './realistic-tickets.js';
import { START_NODE_FLAGS, freePort, REPO_ROOT, startChild, type ChildService } from './support.js';
import { worstBodyCosts } from './reliability/worst-body.js';
import { pipeliningWithoutReading } from './reliability/pipelining.js';
import { filterShapes, headExports } from './reliability/head-and-shapes.js';

/**
 * Load and faults (the reliability decisions), for each service that exists, loopback only, bounded in time:
 * (a) max throughput for 5 s, then 60 s at about 80% of it (autocannon overallRate): errors, p99,
 *     RSS after 10 s and at the end (within 20%);
 * (b) SIGTERM in the middle of a load: every request the service read is answered, exit code 0. The
 *     service runs with a preload that records the X-Request-ID of every request its HTTP server
 *     emits (read) and answers, and its log goes to a file: both are compared with the client's side;
 * (c) slow clients (headers, or a body, a byte a second) during a load: cut off by the 10 s timeout,
 *     the other clients' p99;
 * (d) requests only: the database made unreadable while the service runs and serves a light load,
 *     then given back: SQLite (the file's 100-byte header overwritten in place, then restored) and
 *     PostgreSQL (the snapshot's schema renamed away, then back; skipped when PostgreSQL does not
 *     answer at RELIABILITY_POSTGRES_URL, default postgres://postgres@127.0.0.1:5432/test; the
 *     schema reliability_bench is loaded with the synthetic snapshot when absent, about 10 s).
 * (worst-body) server CPU per worst request under the limits, /health meanwhile (bench/reliability/worst-body.ts).
 * (p) pipelining clients that never read: bench/reliability/pipelining.ts.
 * (head), (shapes) requests only: HEAD of the export, and requests of distinct filter shapes, with an
 * earlier build beside this one when RELIABILITY_BEFORE names it: bench/reliability/head-and-shapes.ts.
 * Usage: npx tsx bench/reliability.ts [tickets|houses|requests ...] (default: all; about 9 minutes).
 * RELIABILITY_LOAD_SECONDS shortens the 60 s load for a quick try; RELIABILITY_PARTS=b,d runs only
 * those parts.
 */
const KEY = 'reliability-bench-key';
const LOAD_SECONDS = Number(process.env.RELIABILITY_LOAD_SECONDS ?? 60);
const PARTS = new Set((process.env.RELIABILITY_PARTS ?? 'a,b,c,d,p,worst-body,head,shapes').split(',').map((part) => part.trim()));
const POSTGRES_URL = process.env.RELIABILITY_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const POSTGRES_SCHEMA = 'reliability_bench';
const json = { 'content-type': 'application/json', 'x-api-key': KEY };

interface ServiceCase {
  entry: string;
  env: Record<string, string>;
  requests: autocannon.Request[];
}

const HOUSE = SAMPLE_HOUSE;

const CASES: Record<string, ServiceCase> = {
  tickets: {
    entry: 'src/services/tickets/main.ts',
    env: { API_KEY: KEY },
    requests: REALISTIC_TICKETS.map((ticket) => ({ method: 'POST', path: '/v1/classify', headers: json, body: JSON.stringify(ticket) })),
  },
  houses: {
    entry: 'src/services/houses/main.ts',
    env: { API_KEY: KEY },
    requests: [{ method: 'POST', path: '/v1/estimates', headers: json, body: JSON.stringify(HOUSE) }],
  },
  requests: {
    entry: 'src/services/requests/main.ts',
    env: { API_KEY: KEY, CURSOR_SECRET: 'reliability-bench-cursor-secret-0123' },
    requests: [
      { method: 'GET', path: '/v1/service-requests?limit=50', headers: { 'x-api-key': KEY } },
      { method: 'GET', path: '/v1/service-requests?borough=queens&limit=50', headers: { 'x-api-key': KEY } },
      { method: 'GET', path: '/v1/service-requests/1', headers: { 'x-api-key': KEY } },
    ],
  },
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const lines: string[] = [];
function report(line: string): void {
  console.log(line);
  lines.push(line);
}

function run(options: autocannon.Options): Promise<autocannon.Result> {
  return autocannon(options);
}

/** The requests load asks for one request by id: the first id of the snapshot the service reads (not a 404). */
async function useExistingId(url: string, service: ServiceCase): Promise<void> {
  const page = (await (await fetch(`${url}/v1/service-requests?limit=1`, { headers: { 'x-api-key': KEY } })).json()) as { items: { id: number }[] };
  const id = page.items[0]?.id;
  if (id === undefined) throw new Error('the requests snapshot is empty');
  for (const spec of service.requests) if (spec.path?.startsWith('/v1/service-requests/')) spec.path = `/v1/service-requests/${id}`;
}

let built = false;
function ensureBuilt(): void {
  if (built) return;
  execFileSync(process.execPath, [resolve(REPO_ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd: REPO_ROOT, stdio: 'inherit' });
  built = true;
}

/**
 * Loaded into the service's process with --import: records the X-Request-ID of every request its HTTP
 * server emits (the request was read), of every answer written completely, and of every answer whose
 * connection closed before it was; written to TRACE_FILE when the process exits.
 */
const TRACE_PRELOAD = `
import http from 'node:http';
import { writeFileSync } from 'node:fs';
const trace = { read: [], answered: [], closedUnanswered: [], readBeforeSignal: -1 };
process.prependListener('SIGTERM', () => { trace.readBeforeSignal = trace.read.length; });
const emit = http.Server.prototype.emit;
http.Server.prototype.emit = function (event, request, response) {
  if (event === 'request') {
    const id = String(request.headers['x-request-id']);
    trace.read.push(id);
    response.on('finish', () => trace.answered.push(id));
    response.on('close', () => { if (!response.writableFinished) trace.closedUnanswered.push(id); });
  }
  return emit.apply(this, arguments);
};
process.on('exit', () => writeFileSync(process.env.TRACE_FILE, JSON.stringify(trace)));
`;

interface TracedChild {
  url: string;
  exit: Promise<number | null>;
  signal(): void;
  /** The trace (after the exit) and the service's log lines. */
  trace(): { read: string[]; answered: string[]; closedUnanswered: string[]; readBeforeSignal: number };
  logLines(): { request_id?: string; msg?: string; path?: string }[];
  cleanup(): void;
}

/** The compiled service with the trace preload, its stdout (the log) to a file; V8 flags as `startChild` (npm start). */
async function startTraced(service: ServiceCase): Promise<TracedChild> {
  ensureBuilt();
  const folder = mkdtempSync(resolve(tmpdir(), 'reliability-trace-'));
  const preload = resolve(folder, 'trace.mjs');
  writeFileSync(preload, TRACE_PRELOAD);
  const traceFile = resolve(folder, 'trace.json');
  const logFile = resolve(folder, 'service.log');
  const log = openSync(logFile, 'w');
  const port = await freePort();
  const child = spawn(process.execPath, [...START_NODE_FLAGS, '--import', preload, resolve(REPO_ROOT, 'dist', service.entry.replace(/\.ts$/, '.js'))], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...service.env, HOST: '127.0.0.1', PORT: String(port), TRACE_FILE: traceFile },
    stdio: ['ignore', log, 'inherit'],
  });
  closeSync(log);
  const exit = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      if ((await fetch(`${url}/ready`, { headers: { 'x-request-id': 'probe-ready' } })).status < 500) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`${service.entry} did not start`);
    await sleep(100);
  }
  return {
    url,
    exit,
    signal: () => child.kill('SIGTERM'),
    trace: () => JSON.parse(readFileSync(traceFile, 'utf8')),
    logLines: () =>
      readFileSync(logFile, 'utf8')
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { request_id?: string; msg?: string }),
    cleanup: () => rmSync(folder, { recursive: true, force: true }),
  };
}

async function maxAndSteadyLoad(name: string, service: ServiceCase): Promise<number> {
  const child = await startChild(service.entry, service.env, '/ready');
  try {
    if (name === 'requests') await useExistingId(child.url, service);
    await run({ url: child.url, connections: 20, duration: 2, requests: service.requests }); // warm-up
    const max = await run({ url: child.url, connections: 50, duration: 5, requests: service.requests });
    const maxRps = Math.round(max.requests.average);
    const rate = Math.max(1, Math.round(maxRps * 0.8));
    let rss10 = 0;
    const sample = setTimeout(() => (rss10 = child.rssMb()), 10_000);
    const steady = await run({ url: child.url, connections: 50, duration: LOAD_SECONDS, overallRate: rate, requests: service.requests });
    clearTimeout(sample);
    const rssEnd = child.rssMb();
    const errors = steady.errors + steady.timeouts + steady.non2xx;
    const growth = rss10 > 0 ? ((rssEnd - rss10) / rss10) * 100 : NaN;
    report(`| ${name} | ${maxRps} | ${rate} | ${Math.round(steady.requests.average)} | ${steady.requests.total} | ${errors} | ${steady.latency.p50} | ${steady.latency.p99} | ${rss10} | ${rssEnd} | ${growth.toFixed(1)}% | ${errors === 0 && Math.abs(growth) <= 20 ? 'ok' : 'FAIL'} |`);
    return maxRps;
  } finally {
    await child.stop();
  }
}

/**
 * (b) 20 keep-alive clients in loops, each request with its own X-Request-ID; SIGTERM after 2 s. Each
 * loop goes on until a new connection is refused (the service stopped listening). The client's side
 * (answers, refusals, resets) is compared with the service's (requests read, answers written, log lines).
 */
async function sigtermDuringLoad(name: string, service: ServiceCase): Promise<void> {
  const child = await startTraced(service);
  if (name === 'requests') await useExistingId(child.url, service);
  const { hostname, port } = new URL(child.url);
  const agent = new Agent({ keepAlive: true, maxSockets: 20 });
  const answered = new Map<string, number>();
  const failed = new Map<string, string>();
  let sequence = 0;
  let closeHeaders = 0;
  const one = (spec: autocannon.Request) =>
    new Promise<boolean>((resolveOne) => {
      const id = `bench-${sequence++}`;
      const req = httpRequest({ agent, host: hostname, port, method: spec.method, path: spec.path, headers: { ...spec.headers, 'x-request-id': id } }, (response) => {
        response.resume();
        response.on('end', () => {
          answered.set(id, response.statusCode ?? 0);
          if (response.headers.connection === 'close') closeHeaders += 1;
          resolveOne(true);
        });
      });
      req.on('error', (error: NodeJS.ErrnoException) => {
        // ECONNREFUSED: a new connection after the service stopped listening. A reset of a reused
        // keep-alive connection: the service may or may not have read the request (the trace says).
        failed.set(id, `${error.code ?? error.message}${req.reusedSocket ? ' (reused connection)' : ''}`);
        resolveOne(error.code !== 'ECONNREFUSED');
      });
      req.end(spec.body);
    });
  const deadline = Date.now() + 30_000;
  const loops = Array.from({ length: 20 }, async (_, i) => {
    for (let n = i; Date.now() < deadline; n += 1) if (!(await one(service.requests[n % service.requests.length]!))) break;
  });
  await sleep(2000);
  child.signal();
  const code = await child.exit;
  await Promise.all(loops);
  agent.destroy();
  const trace = child.trace();
  const read = new Set(trace.read.filter((id) => id.startsWith('bench-')));
  const lost = [...read].filter((id) => !answered.has(id));
  const resetUnread = [...failed].filter(([id, why]) => !why.startsWith('ECONNREFUSED') && !read.has(id)).length;
  const refused = [...failed.values()].filter((why) => why.startsWith('ECONNREFUSED')).length;
  const answeredNotRead = [...answered.keys()].filter((id) => !read.has(id)).length;
  const statuses = [...answered.values()];
  const ok2xx = statuses.filter((status) => status >= 200 && status < 300).length;
  const closing503 = statuses.filter((status) => status === 503).length;
  const logLines = child.logLines().filter((line) => line.msg === 'request' && line.request_id?.startsWith('bench-')).length;
  child.cleanup();
  // The claim of the reliability decisions: every request the service read is answered (2xx, or 503 while closing), exit 0.
  // A reset before the service read the request is no loss of an accepted request; it is reported
  // (the drain on SIGTERM makes it 0 for clients that keep sending).
  const verdict = lost.length === 0 && answeredNotRead === 0 && code === 0 && ok2xx + closing503 === answered.size;
  report(
    `| ${name} | ${sequence} | ${read.size} | ${trace.read.slice(trace.readBeforeSignal).filter((id) => id.startsWith('bench-')).length} | ${logLines} | ${ok2xx} | ${closing503} | ${closeHeaders} | ${lost.length} | ${resetUnread} | ${refused} | ${code} | ${verdict ? 'ok' : 'FAIL'} |`,
  );
  if (lost.length > 0) report(`  lost: ${lost.slice(0, 5).join(', ')}`);
}

/** (c) 10 sockets trickling headers and 10 trickling a body, a byte a second, during a load at 50%. */
async function slowClientsDuringLoad(name: string, service: ServiceCase, maxRps: number): Promise<void> {
  const child = await startChild(service.entry, service.env, '/ready');
  const { port } = new URL(child.url);
  const started = Date.now();
  const cutOffAfter: number[] = [];
  const answers: string[] = [];
  const post = service.requests.find((r) => r.method === 'POST');
  const sockets = Array.from({ length: 20 }, (_, i) => {
    const socket = connect(Number(port), '127.0.0.1');
    let timer: NodeJS.Timeout | undefined;
    socket.on('connect', () => {
      if (i % 2 === 0 || !post) {
        socket.write('GET /health HTTP/1.1\r\nHost: x\r\n');
        let n = 0;
        timer = setInterval(() => !socket.destroyed && socket.write(`X-Slow-${n++}: 1\r\n`), 1000);
      } else {
        socket.write(`POST ${post.path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-API-Key: ${KEY}\r\nContent-Length: 5000\r\n\r\n{`);
        timer = setInterval(() => !socket.destroyed && socket.write(' '), 1000);
      }
    });
    socket.on('data', (data) => answers.push(String(data).split('\r\n')[0] ?? ''));
    socket.on('error', () => {});
    socket.on('close', () => {
      clearInterval(timer);
      cutOffAfter.push(Date.now() - started);
    });
    return socket;
  });
  const load = await run({ url: child.url, connections: 20, duration: 20, overallRate: Math.max(1, Math.round(maxRps * 0.5)), requests: service.requests });
  for (const socket of sockets) socket.destroy();
  await child.stop();
  const cut = cutOffAfter.filter((ms) => ms < 19_500);
  const statuses = [...new Set(answers)].join(', ');
  report(`| ${name} | 20 | ${cut.length} | ${cut.length ? `${(Math.min(...cut) / 1000).toFixed(1)}-${(Math.max(...cut) / 1000).toFixed(1)} s` : '-'} | ${statuses || 'none'} | ${load.requests.total} | ${load.errors + load.timeouts + load.non2xx} | ${load.latency.p99} | ${cut.length === 20 ? 'ok' : 'FAIL'} |`);
}

/**
 * (d) requests only: the database made unreadable while the service runs under a light load (about
 * 200 req/s of list calls), then given back. Probes /ready and a list call before, during (after
 * 1 s) and after; counts the load's answers by status (200 and 503 only) and the time from the
 * repair to the first /ready 200.
 */
async function databaseFault(label: string, databaseUrl: string, breakIt: () => Promise<void>, repair: () => Promise<void>): Promise<void> {
  const child: ChildService = await startChild('src/services/requests/main.ts', { ...CASES.requests!.env, DATABASE_URL: databaseUrl }, '/ready');
  const probe = async () => {
    const ready = await fetch(`${child.url}/ready`);
    const readyBody = (await ready.json()) as { error?: { code: string } };
    const list = await fetch(`${child.url}/v1/service-requests?limit=5&borough=bronx`, { headers: { 'x-api-key': KEY } });
    const listBody = (await list.json()) as { error?: { code: string } };
    return `/ready ${ready.status}${readyBody.error ? ` ${readyBody.error.code}` : ''}, list ${list.status}${listBody.error ? ` ${listBody.error.code}` : ''}`;
  };
  const requests = [
    { method: 'GET' as const, path: '/v1/service-requests?limit=20', headers: { 'x-api-key': KEY } },
    { method: 'GET' as const, path: '/v1/service-requests?borough=queens&limit=20', headers: { 'x-api-key': KEY } },
  ];
  let broken = false;
  try {
    const before = await probe();
    const load = run({ url: child.url, connections: 10, duration: 8, overallRate: 200, requests });
    await sleep(2000);
    await breakIt();
    broken = true;
    await sleep(1000);
    const during = await probe();
    await sleep(1000);
    await repair();
    broken = false;
    const repairedAt = Date.now();
    let after = '';
    do {
      after = await probe();
      if (after.startsWith('/ready 200')) break;
      await sleep(50);
    } while (Date.now() - repairedAt < 15_000);
    const recoveredMs = Date.now() - repairedAt;
    const result = await load;
    const byStatus = Object.entries(result.statusCodeStats ?? {}).map(([status, stat]) => `${status}: ${stat.count ?? 0}`).join(', ');
    const other = Object.entries(result.statusCodeStats ?? {}).filter(([status]) => status !== '200' && status !== '503').length + result.errors + result.timeouts;
    const verdict = before === '/ready 200, list 200' && during === '/ready 503 database_unavailable, list 503 database_unavailable' && after === before && other === 0;
    report(`| ${label} | ${before} | ${during} | ${after} | ${recoveredMs} ms | ${byStatus}; errors ${result.errors + result.timeouts} | ${verdict ? 'ok' : 'FAIL'} |`);
  } finally {
    if (broken) await repair();
    await child.stop();
  }
}

/** SQLite: a copy of the snapshot; its 100-byte header overwritten with zeros in place, then restored. */
async function sqliteHeaderFault(): Promise<void> {
  const path = resolve(REPO_ROOT, 'data/service-requests.sqlite');
  if (!existsSync(path)) {
    report('| SQLite | skipped: data/service-requests.sqlite is absent | | | | | |');
    return;
  }
  const folder = mkdtempSync(resolve(tmpdir(), 'reliability-db-'));
  const file = resolve(folder, 'snapshot.sqlite');
  copyFileSync(path, file);
  const header = Buffer.alloc(100);
  const fd = openSync(file, 'r+');
  readSync(fd, header, 0, 100, 0);
  try {
    await databaseFault(
      'SQLite, header overwritten',
      file,
      () => Promise.resolve(void writeSync(fd, Buffer.alloc(100), 0, 100, 0)),
      () => Promise.resolve(void writeSync(fd, header, 0, 100, 0)),
    );
  } finally {
    closeSync(fd);
    rmSync(folder, { recursive: true, force: true });
  }
}

/** PostgreSQL: the schema reliability_bench (the synthetic snapshot) renamed away, then back. */
async function postgresSchemaFault(): Promise<void> {
  const sql = async (text: string) => {
    const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 3000 });
    await client.connect();
    try {
      return await client.query(text);
    } finally {
      await client.end();
    }
  };
  try {
    await sql('SELECT 1');
  } catch (error) {
    report(`| PostgreSQL | skipped: ${POSTGRES_URL} does not answer (${error instanceof Error ? error.message : String(error)}) | | | | | |`);
    return;
  }
  const url = new URL(POSTGRES_URL);
  url.searchParams.set('schema', POSTGRES_SCHEMA);
  await sql(`DO $$ BEGIN IF EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = '${POSTGRES_SCHEMA}_away') THEN ALTER SCHEMA ${POSTGRES_SCHEMA}_away RENAME TO ${POSTGRES_SCHEMA}; END IF; END $$`);
  const loaded = await sql(`SELECT 1 FROM information_schema.tables WHERE table_schema = '${POSTGRES_SCHEMA}' AND table_name = 'snapshot_meta'`);
  if (loaded.rowCount === 0) {
    console.log(`loading the synthetic snapshot into PostgreSQL schema ${POSTGRES_SCHEMA} (about 10 s)`);
    execFileSync('npm', ['run', 'snapshot', '--', '--database', url.toString(), '--quiet'], { cwd: REPO_ROOT, stdio: 'inherit' });
  }
  await databaseFault(
    'PostgreSQL, schema renamed',
    url.toString(),
    async () => { await sql(`ALTER SCHEMA ${POSTGRES_SCHEMA} RENAME TO ${POSTGRES_SCHEMA}_away`); },
    async () => { await sql(`ALTER SCHEMA ${POSTGRES_SCHEMA}_away RENAME TO ${POSTGRES_SCHEMA}`); },
  );
}

const wanted = process.argv.slice(2).length ? process.argv.slice(2) : Object.keys(CASES);
const present = wanted.filter((name) => {
  const service = CASES[name];
  if (!service) throw new Error(`unknown service ${name} (tickets, houses, requests)`);
  if (!existsSync(resolve(REPO_ROOT, service.entry))) {
    report(`${name}: skipped, ${service.entry} does not exist yet`);
    return false;
  }
  return true;
});

const maxima = new Map<string, number>();
if (PARTS.has('a')) {
  report(`\n(a) ${LOAD_SECONDS} s at 80% of the maximum (50 connections)\n`);
  report('| service | max req/s (5 s) | target req/s | achieved req/s | requests | errors + non-2xx | p50 ms | p99 ms | RSS at 10 s MB | RSS at end MB | RSS change | verdict |');
  report('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|');
  for (const name of present) maxima.set(name, await maxAndSteadyLoad(name, CASES[name]!));
}

if (PARTS.has('b')) {
  report('\n(b) SIGTERM after 2 s of load (20 keep-alive clients, each request with its own X-Request-ID)\n');
  report('| service | sent | read by the service | of which read after SIGTERM | its log lines | answered 2xx | answered 503 | answers with Connection: close | lost (read, not answered) | reset before being read | refused (new connection after close) | exit code | verdict |');
  report('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|');
  for (const name of present) await sigtermDuringLoad(name, CASES[name]!);
}

if (PARTS.has('c')) {
  report('\n(c) 20 slow clients (10 trickle headers, 10 trickle a body, 1 byte/s) during 20 s of load at 50%\n');
  report('| service | slow sockets | cut off | cut off after | their answer | other requests | errors + non-2xx | p99 ms | verdict |');
  report('|---|---:|---:|---|---|---:|---:|---:|---|');
  for (const name of present) await slowClientsDuringLoad(name, CASES[name]!, maxima.get(name) ?? 1000);
}

if (PARTS.has('d') && present.includes('requests')) {
  report('\n(d) requests: database made unreadable while the service runs (light load, 200 req/s of list calls, 8 s), then given back\n');
  report('| database, fault | before | during | after | repair to /ready 200 | load answers by status | verdict |');
  report('|---|---|---|---|---:|---|---|');
  await sqliteHeaderFault();
  await postgresSchemaFault();
}
if (PARTS.has('worst-body')) await worstBodyCosts(present.map((name) => ({ name, ...CASES[name]!, key: KEY })), report);
if (PARTS.has('p')) await pipeliningWithoutReading(present.map((name) => [name, CASES[name]!]), report);
if ((PARTS.has('head') || PARTS.has('shapes')) && present.includes('requests')) ensureBuilt();
if (PARTS.has('head') && present.includes('requests')) await headExports(report);
if (PARTS.has('shapes') && present.includes('requests')) await filterShapes(report);
report(`\nnode ${process.version}, ${new Date().toISOString().slice(0, 10)}, loopback, 2 cores shared with other work`);
