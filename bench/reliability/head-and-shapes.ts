import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { resolve } from 'node:path';
import pg from 'pg';
import { DISTINCT_SHAPES, filterShapeRequest } from '../../test/reliability/filter-shapes.js';
import { START_ENV, START_NODE_FLAGS, cpuSeconds, freePort, percentile, REPO_ROOT } from '../support.js';

/**
 * (head) and (shapes): the hostile classes of HEAD answers and of filter shapes (docs/reliability.md),
 * on this build and, when RELIABILITY_BEFORE names the folder of an earlier build (compiled, with its
 * node_modules), on that one too, in the same run:
 * - (head) 30 `HEAD /v1/exports/service-requests?format=csv` at once on the requests service (SQLite,
 *   the default snapshot): the CPU the service uses in the 10 s after they are answered, beside the
 *   CPU of the same 10 s of /health probes alone, and /health's latency meanwhile (a probe every 50 ms);
 * - (shapes) 2,000 requests of distinct filter shapes (test/reliability/filter-shapes.ts), 4 at a time,
 *   on SQLite and PostgreSQL: the service's RSS before, at its peak and after, and on PostgreSQL the
 *   RSS of the service's server processes, whole and private; then the latency (p50, p90 of 150 sequential requests) of
 *   the pages, counts, facets and statistics whose SQL changed, the builds alternating over 5 rounds.
 * Usage: RELIABILITY_PARTS=head,shapes [RELIABILITY_BEFORE=../before] npx tsx bench/reliability.ts requests
 */
const KEY = 'head-and-shapes-bench-key';
const POSTGRES_URL = process.env.RELIABILITY_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const POSTGRES_SCHEMA = 'reliability_shapes';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Build {
  label: string;
  root: string;
}

/** This build, and the earlier one when RELIABILITY_BEFORE names it. */
export function buildsToCompare(): Build[] {
  const before = process.env.RELIABILITY_BEFORE;
  if (before === undefined) return [{ label: 'this build', root: REPO_ROOT }];
  const root = resolve(before);
  if (!existsSync(resolve(root, 'dist/src/services/requests/main.js'))) throw new Error(`RELIABILITY_BEFORE: ${root} has no compiled build (npx tsc -p tsconfig.build.json there)`);
  return [
    { label: 'before', root },
    { label: 'after', root: REPO_ROOT },
  ];
}

interface Running {
  child: ChildProcess;
  url: string;
  rssMb(): number;
  stop(): Promise<void>;
}

/** A process's resident memory in MB: all of it (VmRSS), or its private part (RssAnon: without the shared memory it touched). */
function rssMbOf(pid: number, field: 'VmRSS' | 'RssAnon' = 'VmRSS'): number {
  try {
    return Math.round(Number(new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024);
  } catch {
    return 0;
  }
}

/** The compiled requests service of `build` on `databaseUrl`, as `npm start` runs it, once /ready answers 200. */
async function startRequests(build: Build, databaseUrl: string): Promise<Running> {
  const port = await freePort();
  const child = spawn(process.execPath, [...START_NODE_FLAGS, resolve(build.root, 'dist/src/services/requests/main.js')], {
    cwd: build.root,
    env: { ...process.env, ...START_ENV, HOST: '127.0.0.1', PORT: String(port), API_KEY: KEY, DATABASE_URL: databaseUrl, CURSOR_SECRET: 'head-and-shapes-cursor-secret-0123456789', LOG_LEVEL: 'silent' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      if ((await fetch(`${url}/ready`)).status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`${build.label}: the requests service did not start`);
    await sleep(100);
  }
  return {
    child,
    url,
    rssMb: () => rssMbOf(child.pid as number),
    async stop() {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    },
  };
}

/** /health every 50 ms for `ms`: the latencies. */
async function probeHealth(url: string, ms: number): Promise<number[]> {
  const times: number[] = [];
  const until = performance.now() + ms;
  while (performance.now() < until) {
    const started = performance.now();
    await (await fetch(`${url}/health`)).arrayBuffer();
    times.push(performance.now() - started);
    await sleep(50);
  }
  return times.sort((a, b) => a - b);
}

export async function headExports(report: (line: string) => void): Promise<void> {
  const sqlite = resolve(REPO_ROOT, 'data/service-requests.sqlite');
  report('\n(head) 30 HEAD /v1/exports/service-requests?format=csv at once (SQLite, the default snapshot); /health every 50 ms for the 10 s after they are answered\n');
  report('| build | HEAD answers | CPU-s while answered | CPU-s in the 10 s after | CPU-s of 10 s of /health probes alone | work left behind, CPU-s | /health p50 / max ms after | /health p50 / max ms alone |');
  report('|---|---|---:|---:|---:|---:|---:|---:|');
  for (const build of buildsToCompare()) {
    const service = await startRequests(build, sqlite);
    try {
      const pid = service.child.pid as number;
      await sleep(1_000);
      let cpu = cpuSeconds(pid);
      const alone = await probeHealth(service.url, 10_000);
      const probesAlone = cpuSeconds(pid) - cpu;
      cpu = cpuSeconds(pid);
      const heads = await Promise.all(
        Array.from({ length: 30 }, () => fetch(`${service.url}/v1/exports/service-requests?format=csv`, { method: 'HEAD', headers: { 'x-api-key': KEY } })),
      );
      const answering = cpuSeconds(pid) - cpu;
      cpu = cpuSeconds(pid);
      const health = await probeHealth(service.url, 10_000);
      const after = cpuSeconds(pid) - cpu;
      const statuses = Object.entries(heads.reduce<Record<number, number>>((all, head) => ({ ...all, [head.status]: (all[head.status] ?? 0) + 1 }), {}))
        .map(([status, count]) => `${count} x ${status}`)
        .join(', ');
      report(`| ${build.label} | ${statuses} | ${answering.toFixed(2)} | ${after.toFixed(2)} | ${probesAlone.toFixed(2)} | ${Math.max(0, after - probesAlone).toFixed(2)} | ${percentile(health, 50).toFixed(1)} / ${(health.at(-1) ?? 0).toFixed(1)} | ${percentile(alone, 50).toFixed(1)} / ${(alone.at(-1) ?? 0).toFixed(1)} |`);
    } finally {
      await service.stop();
    }
  }
}

/** The PostgreSQL snapshot of the bench (the synthetic one, loaded when absent); null when PostgreSQL does not answer. */
async function postgresSnapshotUrl(): Promise<string | null> {
  const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 3_000 });
  try {
    await client.connect();
  } catch {
    return null;
  }
  try {
    const url = new URL(POSTGRES_URL);
    url.searchParams.set('schema', POSTGRES_SCHEMA);
    const loaded = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [POSTGRES_SCHEMA]);
    if (loaded.rowCount === 0) {
      console.log(`loading the synthetic snapshot into PostgreSQL schema ${POSTGRES_SCHEMA} (about 10 s)`);
      execFileSync('npm', ['run', 'snapshot', '--', '--database', url.toString(), '--quiet'], { cwd: REPO_ROOT, stdio: 'inherit' });
    }
    return url.toString();
  } finally {
    await client.end();
  }
}

/** The local ports of `pid`'s TCP connections to port 5432 (its sockets' inodes in /proc/net/tcp and tcp6). */
function postgresClientPorts(pid: number): number[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
      if (inode !== undefined) inodes.add(inode);
    } catch {
      // closed meanwhile
    }
  }
  const ports: number[] = [];
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      const [local, remote, inode] = [fields[1], fields[2], fields[9]];
      if (local === undefined || remote === undefined || inode === undefined || !inodes.has(inode)) continue;
      if (parseInt(remote.split(':')[1] ?? '', 16) === 5432) ports.push(parseInt(local.split(':')[1] ?? '', 16));
    }
  }
  return ports;
}

/**
 * The RSS of the PostgreSQL server processes serving `pid`'s connections: all of it, and the private
 * part (their prepared statements, caches and work memory), "RSS / private". The whole counts once
 * per process each page of shared_buffers it touched: it grows with the pages that the requests
 * read, up to shared_buffers per connection, whatever the statements kept.
 */
async function postgresBackendsMb(pid: number): Promise<string> {
  const ports = postgresClientPorts(pid);
  if (ports.length === 0) return '0 / 0';
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    const { rows } = await client.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE client_port = ANY($1::integer[])', [ports]);
    const sum = (field: 'VmRSS' | 'RssAnon') => rows.reduce((total, row) => total + rssMbOf(row.pid, field), 0);
    return `${sum('VmRSS')} / ${sum('RssAnon')}`;
  } finally {
    await client.end();
  }
}

/** Requests whose SQL changed (a list of values, walks per value): `j` varies the values, not the shape. */
const LATENCY_CASES: [string, (j: number) => string][] = [
  ['page, borough x2', (j) => `/v1/service-requests?limit=50&borough=${['queens', 'bronx', 'brooklyn', 'manhattan'][j % 4]}&borough=staten_island`],
  ['page, district x5, status x2 (walks checking rows)', (j) => `/v1/service-requests?limit=50&${[0, 1, 2, 3, 4].map((d) => `council_district=${1 + ((j + d) % 51)}`).join('&')}&status=open&status=in_progress`],
  ['page, 4-cell box, status x2', (j) => `/v1/service-requests?limit=50&bbox=${(-73.99 + (j % 10) * 0.001).toFixed(3)},40.701,${(-73.974 + (j % 10) * 0.001).toFixed(3)},40.714&status=open&status=closed`],
  ['count, district x5, borough x2', (j) => `/v1/service-requests/count?${[0, 1, 2, 3, 4].map((d) => `council_district=${1 + ((j + d) % 51)}`).join('&')}&borough=queens&borough=brooklyn`],
  ['facets, complaint_type by district x5 and channel x2', (j) => `/v1/facets?field=complaint_type&${[0, 1, 2, 3, 4].map((d) => `council_district=${1 + ((j + d) % 51)}`).join('&')}&channel=phone&channel=none`],
  ['daily stats, district x3, status x2', (j) => `/v1/stats/daily?${[0, 1, 2].map((d) => `council_district=${1 + ((j + d) % 51)}`).join('&')}&status=closed&status=open`],
];

async function latencyOf(url: string, path: (j: number) => string, count: number): Promise<{ p50: number; p90: number }> {
  const times: number[] = [];
  for (let j = 0; j < count; j += 1) {
    const started = performance.now();
    const response = await fetch(url + path(j), { headers: { 'x-api-key': KEY } });
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`${response.status} for ${path(j)}`);
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p90: percentile(times, 90) };
}

export async function filterShapes(report: (line: string) => void): Promise<void> {
  const builds = buildsToCompare();
  const postgres = await postgresSnapshotUrl();
  const backends: [string, string][] = [['SQLite', resolve(REPO_ROOT, 'data/service-requests.sqlite')]];
  if (postgres !== null) backends.push(['PostgreSQL', postgres]);
  const count = Math.min(2_000, DISTINCT_SHAPES);
  report(`\n(shapes) ${count} requests of distinct filter shapes (test/reliability/filter-shapes.ts), 4 at a time, after 100 of the same kind\n`);
  report('| backend | build | answered 200 | seconds | service RSS before MB | peak MB | after MB | growth MB | PostgreSQL processes RSS / private before MB | after MB |');
  report('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const [backend, databaseUrl] of backends) {
    for (const build of builds) {
      const service = await startRequests(build, databaseUrl);
      try {
        const send = async (i: number) => {
          const response = await fetch(service.url + filterShapeRequest(i), { headers: { 'x-api-key': KEY } });
          await response.arrayBuffer();
          return response.status;
        };
        // 100 of the kind first (the statements of the common shapes, the threads' warm-up), from the end of the range.
        for (let i = DISTINCT_SHAPES - 100; i < DISTINCT_SHAPES; i += 1) await send(i);
        await sleep(500);
        const before = service.rssMb();
        const backendsBefore = backend === 'PostgreSQL' ? await postgresBackendsMb(service.child.pid as number) : '-';
        let peak = before;
        const watch = setInterval(() => (peak = Math.max(peak, service.rssMb())), 100);
        const started = performance.now();
        let ok = 0;
        for (let i = 0; i < count; i += 4) {
          const statuses = await Promise.all([i, i + 1, i + 2, i + 3].filter((n) => n < count).map(send));
          ok += statuses.filter((status) => status === 200).length;
        }
        const seconds = (performance.now() - started) / 1000;
        clearInterval(watch);
        await sleep(1_000);
        const after = service.rssMb();
        const backendsAfter = backend === 'PostgreSQL' ? await postgresBackendsMb(service.child.pid as number) : '-';
        const pgCells = `${backendsBefore} | ${backendsAfter}`;
        report(`| ${backend} | ${build.label} | ${ok} of ${count} | ${seconds.toFixed(1)} | ${before} | ${Math.max(peak, after)} | ${after} | ${after - before} | ${pgCells} |`);
      } finally {
        await service.stop();
      }
    }
  }

  const rounds = 5;
  report(`\n(shapes) latency of the requests whose SQL changed: 150 sequential requests per case (values varied, shape fixed), median of ${rounds} rounds, builds alternating\n`);
  report(`| backend | case | ${builds.map((build) => `${build.label} p50 / p90 ms`).join(' | ')} |${builds.length > 1 ? ' p50 after / before |' : ''}`);
  report(`|---|---|${builds.map(() => '---:').join('|')}|${builds.length > 1 ? '---:|' : ''}`);
  for (const [backend, databaseUrl] of backends) {
    const services = await Promise.all(builds.map((build) => startRequests(build, databaseUrl)));
    try {
      const figures = new Map<string, { p50: number; p90: number }[]>();
      for (let round = 0; round < rounds; round += 1) {
        const order = round % 2 === 0 ? services.map((_, at) => at) : services.map((_, at) => at).reverse();
        for (const [name, path] of LATENCY_CASES) {
          for (const at of order) {
            const key = `${name} ${at}`;
            figures.set(key, [...(figures.get(key) ?? []), await latencyOf((services[at] as Running).url, path, 150)]);
          }
        }
      }
      const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
      for (const [name] of LATENCY_CASES) {
        const perBuild = builds.map((_, at) => figures.get(`${name} ${at}`) ?? []);
        const p50s = perBuild.map((runs) => median(runs.map((run) => run.p50)));
        const cells = perBuild.map((runs, at) => `${(p50s[at] as number).toFixed(2)} / ${median(runs.map((run) => run.p90)).toFixed(2)}`);
        const ratio = builds.length > 1 ? ` ${(((p50s[1] as number) / (p50s[0] as number)) * 100).toFixed(0)}% |` : '';
        report(`| ${backend} | ${name} | ${cells.join(' | ')} |${ratio}`);
      }
    } finally {
      await Promise.all(services.map((service) => service.stop()));
    }
  }
}
