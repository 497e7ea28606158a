import autocannon from 'autocannon';
import { existsSync, renameSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { resolve } from 'node:path';
import { REALISTIC_TICKETS } from './realistic-tickets.js';
import { REPO_ROOT, startChild, type ChildService } from './support.js';

/**
 * Load and faults (issue 7), for each service that exists, loopback only, bounded in time:
 * (a) max throughput for 5 s, then 60 s at about 80% of it (autocannon overallRate): errors, p99,
 *     RSS after 10 s and at the end (within 20%);
 * (b) SIGTERM in the middle of a load: every request the service accepted is answered, exit code 0;
 * (c) slow clients (headers, or a body, a byte a second) during a load: cut off by the 10 s timeout,
 *     the other clients' p99;
 * (d) requests only: the SQLite file made unreadable while it runs: /ready and list calls 503
 *     database_unavailable, then recovery when the file is back.
 * Usage: npx tsx bench/reliability.ts [tickets|houses|requests ...] (default: all; about 5 minutes).
 * RELIABILITY_LOAD_SECONDS shortens the 60 s load for a quick try.
 */
const KEY = 'reliability-bench-key';
const LOAD_SECONDS = Number(process.env.RELIABILITY_LOAD_SECONDS ?? 60);
const json = { 'content-type': 'application/json', 'x-api-key': KEY };

interface ServiceCase {
  entry: string;
  env: Record<string, string>;
  requests: autocannon.Request[];
}

const HOUSE = {
  bedrooms: 3, bathrooms: 2.25, floors: 2, sqft_living: 2170, sqft_basement: 400, sqft_lot: 7242, waterfront: false, view: 0,
  condition: 3, grade: 7, yr_built: 1951, yr_renovated: 1991, lat: 47.721, long: -122.319, sqft_living15: 1690, sqft_lot15: 7639,
};

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
    env: { API_KEY: KEY, CURSOR_SECRET: 'reliability-bench-cursor-secret' },
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
  return autocannon(options) as unknown as Promise<autocannon.Result>;
}

async function maxAndSteadyLoad(name: string, service: ServiceCase): Promise<number> {
  const child = await startChild(service.entry, service.env, '/ready');
  try {
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

/** (b) 20 keep-alive clients in loops; SIGTERM after 2 s; each request ends answered or refused. */
async function sigtermDuringLoad(name: string, service: ServiceCase): Promise<void> {
  const child = await startChild(service.entry, service.env, '/ready');
  const { hostname, port } = new URL(child.url);
  const agent = new Agent({ keepAlive: true, maxSockets: 20 });
  const counts = { sent: 0, answered: 0, answered503: 0, refused: 0, lost: 0 };
  let stop = false;
  const one = (spec: autocannon.Request) =>
    new Promise<void>((resolveOne) => {
      counts.sent += 1;
      const req = httpRequest({ agent, host: hostname, port, method: spec.method, path: spec.path, headers: spec.headers }, (response) => {
        response.resume();
        response.on('end', () => {
          counts.answered += 1;
          if (response.statusCode === 503) counts.answered503 += 1;
          resolveOne();
        });
      });
      req.on('error', (error: NodeJS.ErrnoException) => {
        // Refused: the listener was closed, the service never accepted this request. Anything else
        // (a reset or hang-up after the request was written) is a request lost.
        if (error.code === 'ECONNREFUSED') counts.refused += 1;
        else counts.lost += 1;
        stop = true;
        resolveOne();
      });
      if (spec.body) req.write(spec.body);
      req.end();
    });
  const loops = Array.from({ length: 20 }, async (_, i) => {
    for (let n = i; !stop; n += 1) {
      await one(service.requests[n % service.requests.length]!);
      if (counts.refused > 0) break;
    }
  });
  await sleep(2000);
  const exitCode = new Promise<number | null>((r) => child.child.once('exit', (code) => r(code)));
  child.child.kill('SIGTERM');
  const code = await exitCode;
  stop = true;
  await Promise.all(loops);
  agent.destroy();
  report(`| ${name} | ${counts.sent} | ${counts.answered} | ${counts.answered503} | ${counts.refused} | ${counts.lost} | ${code} | ${counts.lost === 0 && code === 0 ? 'ok' : 'FAIL'} |`);
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

/** (d) requests only: the SQLite file renamed away while the service runs, then put back. */
async function databaseUnreadable(): Promise<void> {
  const path = resolve(REPO_ROOT, 'data/service-requests.sqlite');
  if (!existsSync(path)) {
    report('database fault: skipped, data/service-requests.sqlite is absent');
    return;
  }
  const { copyFileSync, rmSync, mkdtempSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const folder = mkdtempSync(resolve(tmpdir(), 'reliability-db-'));
  const file = resolve(folder, 'snapshot.sqlite');
  copyFileSync(path, file);
  const child: ChildService = await startChild('src/services/requests/main.ts', { ...CASES.requests!.env, DATABASE_URL: file }, '/ready');
  const probe = async () => {
    const ready = await fetch(`${child.url}/ready`);
    const readyBody = (await ready.json()) as { error?: { code: string } };
    const list = await fetch(`${child.url}/v1/service-requests?limit=5&borough=bronx`, { headers: { 'x-api-key': KEY } });
    const listBody = (await list.json()) as { error?: { code: string } };
    return `/ready ${ready.status}${readyBody.error ? ` ${readyBody.error.code}` : ''}, list ${list.status}${listBody.error ? ` ${listBody.error.code}` : ''}`;
  };
  try {
    const before = await probe();
    renameSync(file, `${file}.away`);
    await sleep(500);
    const during = await probe();
    renameSync(`${file}.away`, file);
    let after = '';
    const deadline = Date.now() + 15_000;
    do {
      await sleep(500);
      after = await probe();
    } while (!after.startsWith('/ready 200') && Date.now() < deadline);
    report(`| requests | ${before} | ${during} | ${after} | ${during.includes('503 database_unavailable') && after.startsWith('/ready 200') ? 'ok' : 'FAIL'} |`);
  } finally {
    await child.stop();
    rmSync(folder, { recursive: true, force: true });
  }
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
report(`\n(a) ${LOAD_SECONDS} s at 80% of the maximum (50 connections)\n`);
report('| service | max req/s (5 s) | target req/s | achieved req/s | requests | errors + non-2xx | p50 ms | p99 ms | RSS at 10 s MB | RSS at end MB | RSS change | verdict |');
report('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|');
for (const name of present) maxima.set(name, await maxAndSteadyLoad(name, CASES[name]!));

report('\n(b) SIGTERM after 2 s of load (20 keep-alive clients)\n');
report('| service | sent | answered | of which 503 (closing) | refused (never accepted) | lost (accepted, not answered) | exit code | verdict |');
report('|---|---:|---:|---:|---:|---:|---:|---|');
for (const name of present) await sigtermDuringLoad(name, CASES[name]!);

report('\n(c) 20 slow clients (10 trickle headers, 10 trickle a body, 1 byte/s) during 20 s of load at 50%\n');
report('| service | slow sockets | cut off | cut off after | their answer | other requests | errors + non-2xx | p99 ms | verdict |');
report('|---|---:|---:|---|---|---:|---:|---:|---|');
for (const name of present) await slowClientsDuringLoad(name, CASES[name]!, maxima.get(name) ?? 1000);

if (present.includes('requests')) {
  report('\n(d) database made unreadable (SQLite file renamed away) while the service runs, then put back\n');
  report('| service | before | during | after | verdict |');
  report('|---|---|---|---|---|');
  await databaseUnreadable();
}
report(`\nnode ${process.version}, ${new Date().toISOString().slice(0, 10)}, loopback, 2 cores shared with other work`);
