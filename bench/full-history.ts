/**
 * The data API over the full history, measured: the snapshot at 1x, 50x and a 40-million-row
 * synthetic history (2010 to 2025, all agencies), on SQLite and PostgreSQL, with random unique
 * queries of every route kind, and DuckDB beside it on the same group-by queries:
 *
 *   npx tsx bench/full-history.ts [--sizes 1x,50x,40m] [--postgres-sizes 1x,50x,20m] [--dir /work/bigdata]
 *                                 [--requests 1000] [--seconds 15] [--connections 1,10] [--rates 5] [--kinds pages,count,...]
 *                                 [--no-duckdb] [--drop-postgres]
 *
 * A size is `1x` (the synthetic export, 109,915 requests, filters on), `Kx` (a history of K x 109,915
 * requests, 2016 to 2025 as bench/scale.ts) or `Nm` (N million requests, 2010 to 2025), all generated
 * on the fly by the snapshot command (no CSV). Snapshots are kept in --dir (outside the repository)
 * and reused: SQLite `snapshot-<size>.sqlite`, PostgreSQL schema `full_history_<size>` (dropped at the
 * end with --drop-postgres), DuckDB `duckdb-<size>.duckdb`; beside each, the command's figures
 * (`.time`: /usr/bin/time's wall s, peak RSS KiB, user and system s; `.json`: its summary, `.commit`),
 * read again when the snapshot is reused. A kept snapshot is served whatever build made it: after a
 * change of the snapshot's layout, remove its files (and the DuckDB file made from it) or drop its
 * schema, and the next run builds it again.
 *
 * For each snapshot served: ingestion (wall, CPU, peak RSS), the compiled service started as
 * `npm start` runs it (spawn to the first data answer and to /ready; RSS at ready and after all the
 * traffic), then for each route kind and each number of connections, up to --requests different URLs
 * (bench/history-queries.ts) for at most --seconds: p50/p99/max, the answers other than 200 (a budget's
 * 503 `overloaded` counted apart), then at each of --rates (requests per second, none by default) sent on
 * time whatever the answers (an open loop: a closed loop of N connections sends less when the
 * service is slower, so a faster mix brings more of its slowest queries into the same queue),
 * /health's longest answer meanwhile (one client polling every
 * 20 ms) and the service's longest event-loop block (bench/event-loop-probe.mjs). The new filter
 * operators are drawn only where the service accepts them (probed on /count); a route kind that
 * answers 404 is skipped and said so. DuckDB (bench/duckdb-groups.ts, a process of its own): the
 * same `stats/groups` queries at each number of connections, with its load time and peak RSS.
 * Results: markdown on stdout, one JSON line per snapshot in --dir/full-history-results.jsonl.
 */
import { execFileSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import pg from 'pg';
import { rowColumnsMemoryBytes } from '../src/services/requests/engine/row-columns-memory.js';
import { ROW_COLUMNS_DEFAULT_MAX_MB } from '../src/services/requests/settings.js';
import {
  GROUP_COLUMNS,
  NEGATION_SYNTAXES,
  OPERATORS,
  QueryDraws,
  ROUTE_KINDS,
  groupPath,
  routePath,
  sampleRows,
  uniquePaths,
  type Accepted,
  type GroupQuery,
  type Operator,
  type RouteKind,
} from './history-queries.js';
import { REPO_ROOT, TSX, dropPostgresSnapshot, postgresSnapshotBytes, ingestFigures, percentile, probedRequestsService, timedSnapshotCommand, type Ingest, type ProbedService } from './support.js';

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '1x,50x,40m' },
    'postgres-sizes': { type: 'string', default: '1x,50x,20m' },
    dir: { type: 'string', default: '/work/bigdata' },
    requests: { type: 'string', default: '1000' },
    seconds: { type: 'string', default: '15' },
    connections: { type: 'string', default: '1,10' },
    rates: { type: 'string', default: '' },
    kinds: { type: 'string', default: ROUTE_KINDS.join(',') },
    'no-duckdb': { type: 'boolean', default: false },
    'drop-postgres': { type: 'boolean', default: false },
  },
});
const KEY = 'bench-key-0123456789';
const BASE_ROWS = 109_915;
const databaseUrl = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const requestsPerCase = Number(values.requests);
const seconds = Number(values.seconds);
const connectionLevels = values.connections.split(',').map(Number);
const rates = values.rates.split(',').filter(Boolean).map(Number);
if (rates.some((rate) => !(rate > 0))) throw new Error(`--rates are requests per second above 0: ${values.rates}`);
const kinds = values.kinds.split(',') as RouteKind[];
const unknownKinds = kinds.filter((kind) => !(ROUTE_KINDS as readonly string[]).includes(kind));
if (unknownKinds.length > 0) throw new Error(`unknown --kinds ${unknownKinds.join(', ')}: the kinds are ${ROUTE_KINDS.join(', ')}`);
const dir = values.dir;
mkdirSync(dir, { recursive: true });
const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO_ROOT, encoding: 'utf8' }).trim();

/** The snapshot command's options of a size. */
function historyOptions(size: string): string[] {
  if (size === '1x') return ['--synthetic'];
  const times = /^(\d+)x$/.exec(size);
  if (times !== null) {
    const scale = Number(times[1]);
    return ['--rows', String(BASE_ROWS * scale), '--from', scale > 10 ? '2016' : '2021', '--to', '2025'];
  }
  const millions = /^(\d+)m$/.exec(size);
  if (millions !== null) return ['--rows', String(Number(millions[1]) * 1_000_000), '--from', '2010', '--to', '2025'];
  throw new Error(`a size is 1x, Kx or Nm: ${size}`);
}

/** The figures of the snapshot's ingestion: its command run now, or read from the files beside a kept snapshot. */
function ingest(figures: string, exists: boolean, target: string[]): Ingest & { reused: boolean } {
  if (exists && existsSync(`${figures}.time`) && existsSync(`${figures}.json`) && statSync(`${figures}.json`).size > 0) {
    return { ...ingestFigures(`${figures}.time`, readFileSync(`${figures}.json`, 'utf8')), reused: true };
  }
  const result = timedSnapshotCommand(REPO_ROOT, target, `${figures}.time`);
  writeFileSync(`${figures}.json`, `${JSON.stringify({ row_count: result.rows })}\n`);
  writeFileSync(`${figures}.commit`, `${commit}\n`);
  return { ...result, reused: false };
}

async function postgresSchemaExists(schema: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return (await client.query('SELECT 1 FROM pg_tables WHERE schemaname = $1 AND tablename = $2', [schema, 'snapshot_pointer'])).rowCount === 1;
  } finally {
    await client.end();
  }
}

/**
 * The bytes the snapshot's row columns take in the service (rowColumnsMemoryBytes: a code of 1 or 2
 * bytes per coded column and row, 4 bytes of times), to tell whether ROW_COLUMNS_MAX_MB lets it load them.
 */
async function rowColumnBytes(snapshot: string): Promise<number> {
  const sql = (schema: string): string =>
    `SELECT (SELECT row_count FROM ${schema}snapshot_meta) AS rows, (SELECT string_agg(column_name || ':' || n, ',') FROM (SELECT column_name, count(*) AS n FROM ${schema}row_column_values GROUP BY column_name) AS v) AS codes`;
  let result: { rows: number | string; codes: string | null };
  if (snapshot.startsWith('postgres://')) {
    const url = new URL(snapshot);
    const schema = url.searchParams.get('schema') ?? 'public';
    url.searchParams.delete('schema');
    const client = new pg.Client({ connectionString: url.toString() });
    await client.connect();
    result = (await client.query(sql(`"${schema}".`))).rows[0] as typeof result;
    await client.end();
  } else {
    const db = new Database(snapshot, { readonly: true });
    result = db.prepare(sql('').replace('string_agg(', 'group_concat(')).get() as typeof result;
    db.close();
  }
  // Code 0 is null: a column of at most 255 values takes one byte.
  const codeBytes = (result.codes ?? '').split(',').filter(Boolean).reduce((bytes, entry) => bytes + (Number(entry.split(':')[1]) + 1 <= 256 ? 1 : 2), 0);
  return rowColumnsMemoryBytes(Number(result.rows), codeBytes);
}

interface CaseResult {
  kind: RouteKind;
  connections: number;
  /** Requests per second sent on time (an open loop; `connections` is then 0). */
  rate?: number;
  answered: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Status (and error code for a 503) -> answers; `error` for a failed request. */
  other: Record<string, number>;
  healthMaxMs: number;
  blockMs: number;
  /** The three slowest answers: ms and path (in the JSON results, to see where the time goes). */
  slowest: [number, string][];
  /** Why the kind was not run (a 404 route). */
  skipped?: string;
}

/**
 * The paths in turn on `connections` keep-alive connections until all are answered or `seconds`
 * have passed, or, with a `rate`, one every 1/rate s whatever the answers (on as many connections as
 * the answers still awaited need): the latency to the end of each answer (to its first bytes for an
 * export, whose stream is then dropped), with /health polled meanwhile on a connection of its own.
 */
async function run(base: string, paths: string[], connections: number, firstBytesOnly: boolean, rate: number | null = null): Promise<Omit<CaseResult, 'kind' | 'connections' | 'blockMs'>> {
  const agent = new Agent({ keepAlive: true, maxSockets: rate === null ? connections : Number.POSITIVE_INFINITY });
  const latencies: number[] = [];
  const slowest: [number, string][] = [];
  const other: Record<string, number> = {};
  const count = (key: string): void => {
    other[key] = (other[key] ?? 0) + 1;
  };
  const deadline = performance.now() + seconds * 1000;
  let next = 0;
  const state = { done: false };
  let healthMaxMs = 0;
  const health = (async () => {
    const healthAgent = new Agent({ keepAlive: true, maxSockets: 1 });
    while (!state.done) {
      const sent = performance.now();
      await new Promise<void>((resolve) => {
        const req = request(`${base}/health`, { agent: healthAgent }, (res) => {
          res.resume();
          res.on('end', () => resolve());
        });
        req.on('error', () => resolve());
        req.end();
      });
      healthMaxMs = Math.max(healthMaxMs, performance.now() - sent);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    healthAgent.destroy();
  })();
  const one = (path: string): Promise<void> =>
    new Promise((resolve) => {
      const sent = performance.now();
      const req = request(`${base}${path}`, { agent, headers: { 'x-api-key': KEY, 'accept-encoding': 'identity' } }, (res) => {
        const status = res.statusCode ?? 0;
        if (status !== 200) {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => {
            let code = '';
            try {
              code = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { error?: { code?: string } }).error?.code ?? '';
            } catch {
              // not an error object
            }
            count(`${status}${code ? ` ${code}` : ''}`);
            resolve();
          });
          return;
        }
        if (firstBytesOnly) {
          res.once('data', () => {
            latencies.push(performance.now() - sent);
            // The next export only once this connection is closed: the service frees an export's place when it sees the close.
            res.socket.once('close', () => resolve());
            res.destroy();
          });
          res.on('error', () => undefined);
          res.on('end', () => resolve());
          return;
        }
        res.resume();
        res.on('end', () => {
          const ms = performance.now() - sent;
          latencies.push(ms);
          if (slowest.length < 3 || ms > slowest[2]![0]) slowest.splice(0, slowest.length, ...[...slowest, [ms, path] as [number, string]].sort((a, b) => b[0] - a[0]).slice(0, 3));
          resolve();
        });
      });
      req.setTimeout(120_000, () => req.destroy(new Error('timeout')));
      req.on('error', () => {
        count('error');
        resolve();
      });
      req.end();
    });
  if (rate === null) {
    await Promise.all(
      Array.from({ length: connections }, async () => {
        for (let i = next++; i < paths.length && performance.now() < deadline; i = next++) await one(paths[i]!);
      }),
    );
  } else {
    const sent: Promise<void>[] = [];
    const start = performance.now();
    for (let i = 0; i < paths.length && performance.now() < deadline; i++) {
      const due = start + (i * 1000) / rate;
      if (due > performance.now()) await new Promise((resolve) => setTimeout(resolve, due - performance.now()));
      sent.push(one(paths[i]!));
    }
    await Promise.all(sent);
  }
  state.done = true;
  await health;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const round = (ms: number): number => Math.round(ms * 100) / 100;
  return { answered: latencies.length, p50Ms: round(percentile(latencies, 50)), p99Ms: round(percentile(latencies, 99)), maxMs: round(latencies.at(-1) ?? Number.NaN), other, healthMaxMs: round(healthMaxMs), slowest };
}

const status = async (base: string, path: string): Promise<number> => (await fetch(`${base}${path}`, { headers: { 'x-api-key': KEY } })).status;

/** The operators and negation syntax the service accepts (200 on /count), and the kinds whose route answers 404. */
async function probe(base: string): Promise<{ accepted: Accepted; missing: Map<RouteKind, string>; cell: string }> {
  const tries: Record<Exclude<Operator, 'negation'>, string> = {
    closed: 'closed=true',
    closed_range: 'closed_from=2024-01-01&closed_to=2024-02-01',
    days_to_close: 'days_to_close_min=1&days_to_close_max=5',
    near: 'near=40.7,-73.95&radius_m=500',
    community_board: 'community_board=01%20BRONX',
    q: 'q=street',
  };
  const operators = new Set<Operator>();
  for (const [operator, query] of Object.entries(tries)) if ((await status(base, `/v1/service-requests/count?${query}`)) === 200) operators.add(operator as Operator);
  let negation: Accepted['negation'] = null;
  for (const syntax of NEGATION_SYNTAXES) {
    if ((await status(base, `/v1/service-requests/count?${syntax('borough', 'queens')}`)) === 200) {
      negation = syntax;
      operators.add('negation');
      break;
    }
  }
  const missing = new Map<RouteKind, string>();
  const groups = await status(base, '/v1/stats/groups?by=borough');
  if (groups !== 200) for (const kind of ['stats/groups', 'stats/groups by period', 'stats/groups filtered by month or year', 'stats/groups filtered by day or week', 'stats/groups of two columns by month or year'] as const) missing.set(kind, `GET /v1/stats/groups?by=borough answers ${groups}`);
  let cell = '';
  const box = 'bbox=-74.05,40.6,-73.8,40.85';
  for (const candidate of ['500', '0.01', '1000', '12']) {
    if ((await status(base, `/v1/stats/cells?${box}&cell=${candidate}`)) === 200) {
      cell = candidate;
      break;
    }
  }
  if (cell === '') missing.set('stats/cells', `GET /v1/stats/cells?${box}&cell=500 answers ${await status(base, `/v1/stats/cells?${box}&cell=500`)}`);
  return { accepted: { operators, negation }, missing, cell };
}

interface Served {
  /** The bytes of the snapshot's row columns in the service (above ROW_COLUMNS_MAX_MB they are not loaded). */
  rowColumnBytes: number;
  firstAnswerSeconds: number;
  readySeconds: number;
  rssAtReadyMb: number;
  rssAfterTrafficMb: number;
  accepted: string[];
  cases: CaseResult[];
}

/** The group-by queries of a size at `connections`: the same for the service and DuckDB. */
function groupQueries(draws: QueryDraws, accepted: Accepted): GroupQuery[] {
  return Array.from({ length: requestsPerCase }, () => draws.group(accepted));
}

const ALL_OPERATORS: Accepted = { operators: new Set(OPERATORS), negation: NEGATION_SYNTAXES[0]! };

/** Group queries per number of connections, drawn once per size (so that DuckDB answers the ones the service did). */
const groupQueriesBySize = new Map<string, Map<number, GroupQuery[]>>();

async function serve(size: string, snapshot: string, sampleFrom: string): Promise<Served> {
  const service: ProbedService = await probedRequestsService(snapshot, KEY, { probeFile: join(dir, `event-loop-${process.pid}.txt`) });
  try {
    for (;;) {
      try {
        if ((await status(service.base, '/v1/service-requests?limit=1')) === 200) break;
      } catch {
        // not listening yet
      }
      if (service.child.exitCode !== null) throw new Error('the service stopped');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const firstAnswerSeconds = (performance.now() - service.started) / 1000;
    await service.untilReady();
    const readySeconds = (performance.now() - service.started) / 1000;
    const rssAtReadyMb = service.rssMb();
    const { accepted, missing, cell } = await probe(service.base);
    const rows = await sampleRows(sampleFrom, Math.max(2000, requestsPerCase * connectionLevels.length + 100), 49);
    const draws = new QueryDraws(rows, 7);
    let idAt = 0;
    const ids = { next: (): number => rows[idAt++ % rows.length]!.id };
    // The same group queries for the service and DuckDB: drawn with every operator while the route is missing.
    const groupAccepted = missing.has('stats/groups') ? ALL_OPERATORS : accepted;
    if (!groupQueriesBySize.has(size)) {
      const groupDraws = new QueryDraws(rows, 11);
      groupQueriesBySize.set(size, new Map(connectionLevels.map((c) => [c, groupQueries(groupDraws, groupAccepted)])));
    }
    const used = new Set<string>();
    const cases: CaseResult[] = [];
    await service.longestBlock();
    for (const kind of kinds) {
      for (const connections of connectionLevels) {
        const skipped = missing.get(kind);
        if (skipped !== undefined) {
          cases.push({ kind, connections, answered: 0, p50Ms: Number.NaN, p99Ms: Number.NaN, maxMs: Number.NaN, other: {}, healthMaxMs: Number.NaN, blockMs: Number.NaN, slowest: [], skipped });
          continue;
        }
        const paths =
          kind === 'stats/groups'
            ? uniquePaths(requestsPerCase, used, (() => {
                const queue = [...groupQueriesBySize.get(size)!.get(connections)!];
                return () => groupPath(queue.shift() ?? draws.group(accepted), accepted);
              })())
            : uniquePaths(requestsPerCase, used, () => routePath(kind, draws, accepted, ids, cell));
        const result = await run(service.base, paths, connections, kind === 'export start');
        cases.push({ kind, connections, ...result, blockMs: await service.longestBlock() });
        process.stderr.write(`${size} ${snapshot.startsWith('postgres') ? 'PostgreSQL' : 'SQLite'} ${kind} x${connections}: ${result.answered} answers, p50 ${result.p50Ms} ms, p99 ${result.p99Ms} ms\n`);
      }
      if (missing.has(kind)) continue;
      for (const rate of rates) {
        const paths = uniquePaths(requestsPerCase, used, () => (kind === 'stats/groups' ? groupPath(draws.group(accepted), accepted) : routePath(kind, draws, accepted, ids, cell)));
        const result = await run(service.base, paths, 0, kind === 'export start', rate);
        cases.push({ kind, connections: 0, rate, ...result, blockMs: await service.longestBlock() });
        process.stderr.write(`${size} ${snapshot.startsWith('postgres') ? 'PostgreSQL' : 'SQLite'} ${kind} at ${rate}/s: ${result.answered} answers, p50 ${result.p50Ms} ms, p99 ${result.p99Ms} ms\n`);
      }
    }
    return { rowColumnBytes: await rowColumnBytes(snapshot), firstAnswerSeconds, readySeconds, rssAtReadyMb, rssAfterTrafficMb: service.rssMb(), accepted: [...accepted.operators], cases };
  } finally {
    await service.stop();
  }
}

interface DuckResult {
  load: { seconds: number; rows: number; peakRssMb: number; reused: boolean };
  fileMb: number;
  runs: { connections: number; answered: number; errors: number; firstError: string; p50Ms: number; p99Ms: number; maxMs: number; peakRssMb: number }[];
}

/** DuckDB over the size's SQLite snapshot: loaded once (kept in --dir), then the size's group queries at each number of connections. */
function duckdb(size: string, sqlitePath: string): DuckResult {
  const file = join(dir, `duckdb-${size}.duckdb`);
  const figures = `${file}.load.json`;
  const child = (args: string[]): string =>
    execFileSync(TSX, [join(REPO_ROOT, 'bench/duckdb-groups.ts'), ...args], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
      maxBuffer: 1 << 26,
      env: { ...process.env, UV_THREADPOOL_SIZE: String(Math.max(4, ...connectionLevels)) },
    });
  let load: DuckResult['load'];
  if (existsSync(file) && existsSync(figures)) load = { ...(JSON.parse(readFileSync(figures, 'utf8')) as DuckResult['load']), reused: true };
  else {
    load = { ...(JSON.parse(child(['load', sqlitePath, file])) as DuckResult['load']), reused: false };
    writeFileSync(figures, JSON.stringify(load));
  }
  const runs = connectionLevels.map((connections) => {
    const queries = join(dir, `groups-${size}-${connections}.json`);
    writeFileSync(queries, JSON.stringify(groupQueriesBySize.get(size)?.get(connections) ?? []));
    return { connections, ...(JSON.parse(child(['query', file, queries, String(connections), String(seconds)])) as Omit<DuckResult['runs'][number], 'connections'>) };
  });
  return { load, fileMb: Math.round(statSync(file).size / 1e6), runs };
}

const lines: string[] = [];
const ms = (n: number): string => (Number.isNaN(n) ? '-' : n < 10 ? n.toFixed(2) : n.toFixed(0));
const otherCell = (other: Record<string, number>): string => Object.entries(other).map(([k, n]) => `${n} x ${k}`).join(', ') || '0';

function report(size: string, backend: string, ingested: Ingest & { reused: boolean }, bytes: number, served: Served, duck: DuckResult | null): void {
  const record = { date: new Date().toISOString(), commit, size, backend, ingest: ingested, bytes, served, duckdb: duck };
  appendFileSync(join(dir, 'full-history-results.jsonl'), `${JSON.stringify(record)}\n`);
  lines.push(
    `### ${size} ${backend} (${ingested.rows.toLocaleString('en-US')} requests, ${Math.round(bytes / 1e6).toLocaleString('en-US')} MB${ingested.reused ? ', snapshot kept from an earlier run' : ''})`,
    '',
    `Ingest ${ingested.seconds.toFixed(0)} s wall, ${ingested.cpuSeconds.toFixed(0)} CPU s, ${ingested.rowsPerSecond.toLocaleString('en-US')} rows/s, peak RSS ${ingested.peakRssMb} MB; ` +
      `start to first data answer ${served.firstAnswerSeconds.toFixed(2)} s, to /ready ${served.readySeconds.toFixed(2)} s; RSS at ready ${served.rssAtReadyMb} MB, after the traffic ${served.rssAfterTrafficMb} MB; ` +
      `operators accepted: ${served.accepted.join(', ') || 'none of the new ones'}; row columns ${Math.round(served.rowColumnBytes / 1e6)} MB, ` +
      `${served.rowColumnBytes <= ROW_COLUMNS_DEFAULT_MAX_MB * 1_048_576 ? 'within' : 'over'} the default ROW_COLUMNS_MAX_MB (${ROW_COLUMNS_DEFAULT_MAX_MB}).`,
    '',
    '| route kind | connections | answers | p50 ms | p99 ms | max ms | not 200 | /health max ms | longest block ms |',
    '|---|---:|---:|---:|---:|---:|---|---:|---:|',
    ...served.cases.map((c) =>
      c.skipped !== undefined
        ? `| ${c.kind} | ${c.connections} | skipped: ${c.skipped} | | | | | | |`
        : `| ${c.kind} | ${c.rate === undefined ? c.connections : `${c.rate}/s sent on time`} | ${c.answered} | ${ms(c.p50Ms)} | ${ms(c.p99Ms)} | ${ms(c.maxMs)} | ${otherCell(c.other)} | ${ms(c.healthMaxMs)} | ${ms(c.blockMs)} |`,
    ),
    '',
  );
  if (duck !== null) {
    lines.push(
      `DuckDB ${size} (ENUM columns, ${duck.fileMb.toLocaleString('en-US')} MB file; load ${duck.load.seconds.toFixed(0)} s, peak RSS ${duck.load.peakRssMb} MB${duck.load.reused ? ', kept' : ''}), the same stats/groups queries:`,
      '',
      '| connections | answers | errors | p50 ms | p99 ms | max ms | peak RSS MB |',
      '|---:|---:|---:|---:|---:|---:|---:|',
      ...duck.runs.map((r) => `| ${r.connections} | ${r.answered} | ${r.errors}${r.firstError ? ` (${r.firstError.slice(0, 80)})` : ''} | ${ms(r.p50Ms)} | ${ms(r.p99Ms)} | ${ms(r.maxMs)} | ${r.peakRssMb} |`),
      '',
    );
  }
}

// The service runs from the compiled build, as `npm start` runs it.
execFileSync(process.execPath, [join(REPO_ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd: REPO_ROOT });
const sqliteSizes = values.sizes.split(',').filter(Boolean);
const postgresSizes = values['postgres-sizes'].split(',').filter(Boolean);
for (const size of [...new Set([...sqliteSizes, ...postgresSizes])]) {
  const sqlitePath = join(dir, `snapshot-${size}.sqlite`);
  if (sqliteSizes.includes(size)) {
    const ingested = ingest(sqlitePath, existsSync(sqlitePath), [...historyOptions(size), '--output', sqlitePath, '--quiet']);
    const served = await serve(size, sqlitePath, sqlitePath);
    const duck = values['no-duckdb'] ? null : duckdb(size, sqlitePath);
    report(size, 'SQLite', ingested, statSync(sqlitePath).size, served, duck);
  }
  if (postgresSizes.includes(size)) {
    const schema = `full_history_${size}`;
    const figures = join(dir, `postgres-${schema}`);
    const ingested = ingest(figures, await postgresSchemaExists(schema), [...historyOptions(size), '--database', databaseUrl, '--schema', schema, '--quiet']);
    const url = `${databaseUrl}?schema=${schema}`;
    const served = await serve(size, url, existsSync(sqlitePath) ? sqlitePath : url);
    report(size, 'PostgreSQL', ingested, await postgresSnapshotBytes(databaseUrl, schema), served, null);
    if (values['drop-postgres']) await dropPostgresSnapshot(databaseUrl, schema);
  }
  process.stderr.write(`${size} done\n`);
}
process.stdout.write(`Node ${process.version}, commit ${commit}, ${new Date().toISOString()}; up to ${requestsPerCase} different URLs per case, at most ${seconds} s each; group columns ${GROUP_COLUMNS.length}.\n\n${lines.join('\n')}\n`);
