import autocannon from 'autocannon';
import { resolve } from 'node:path';
import { ensureSnapshot } from '../src/ingest/nyc311/ensure-snapshot.js';
import { PAGE_OF_1000_CASES, REPO_ROOT, cpuSeconds, encodedSize, keyedGet, keepAlive, startChild, walk, type ChildService, type PageCase } from './support.js';

/**
 * Memory and CPU of the requests service's formats and compression (follow-up of the hostile-input and dashboard API decisions),
 * on the full synthetic snapshot, the SQLite service in its own process from the compiled build:
 * 1. RSS: one service walks every page of 1000 in JSON (twice); another walks them in JSON, CSV and
 *    GeoJSON, exports everything in CSV and in GeoJSON, then walks the three formats again. Target:
 *    the second within about 60 MB of the first.
 * 2. req/s, server CPU per request and bytes of a page of 1000 (pages from cursors spread over the
 *    snapshot, 10 connections): JSON, CSV, GeoJSON, JSON with gzip, JSON with brotli; cases in rounds,
 *    the median round. With a second build (`before`: the repository root of another commit, compiled
 *    with `tsc -p tsconfig.build.json`), both services answer each case in turn in every round, so that
 *    before and after come from the same run.
 * Usage: npx tsx bench/formats-and-compression.ts [seconds per case, default 2] [rounds, default 3] [before root]
 */
const seconds = Number(process.argv[2] ?? 2);
const rounds = Number(process.argv[3] ?? 3);
const beforeRoot = process.argv[4];
const KEY = 'bench-key-0123456789';
const sqlitePath = resolve(REPO_ROOT, 'data/service-requests.sqlite');
await ensureSnapshot(sqlitePath);
const env = { API_KEY: KEY, DATABASE_URL: sqlitePath, LOG_LEVEL: 'warn', CURSOR_SECRET: 'bench-cursor-secret-0123456789abcdef' };
const start = (root: string | undefined) =>
  startChild(root === undefined ? 'src/services/requests/main.ts' : resolve(root, 'dist/src/services/requests/main.js'), env, '/ready');

async function pages(service: ChildService, cursors: string[], format: string): Promise<void> {
  for (const cursor of ['', ...cursors]) {
    const answer = await keyedGet(service.url, `/v1/service-requests?limit=1000&format=${format}${cursor ? `&cursor=${cursor}` : ''}`, KEY);
    if (answer.status !== 200) throw new Error(`${format} page: ${answer.status}`);
  }
}

async function exportAll(service: ChildService, format: string): Promise<void> {
  const response = await fetch(`${service.url}/v1/exports/service-requests?format=${format}`, { headers: { 'x-api-key': KEY } });
  // Read to the end and dropped, as a downloading client would.
  await response.body?.pipeTo(new WritableStream());
}

const lines: string[] = [];
for (const [name, root] of [['after', undefined], ...(beforeRoot ? [['before', beforeRoot]] : [])] as const) {
  for (const all of [false, true]) {
    const service = await start(root);
    try {
      const ready = service.rssMb();
      const { cursors } = await walk(service.url, '', 1000, KEY);
      const steps = [`ready ${ready}`, `JSON walk ${service.rssMb()}`];
      if (all) {
        await pages(service, cursors, 'csv');
        steps.push(`CSV walk ${service.rssMb()}`);
        await pages(service, cursors, 'geojson');
        steps.push(`GeoJSON walk ${service.rssMb()}`);
        await exportAll(service, 'csv');
        steps.push(`CSV export ${service.rssMb()}`);
        await exportAll(service, 'geojson');
        steps.push(`GeoJSON export ${service.rssMb()}`);
        for (const format of ['json', 'csv', 'geojson']) await pages(service, cursors, format);
        steps.push(`three walks again ${service.rssMb()}`);
      } else {
        await pages(service, cursors, 'json');
        steps.push(`JSON walk again ${service.rssMb()}`);
      }
      lines.push(`- ${name}, ${all ? 'every format and both exports' : 'JSON only'}: RSS MB ${steps.join(', ')}`);
    } finally {
      await service.stop();
    }
  }
}

const cases = PAGE_OF_1000_CASES;
const services = [{ name: 'after', service: await start(undefined) }];
if (beforeRoot) services.push({ name: 'before', service: await start(beforeRoot) });
try {
  const { cursors } = await walk(services[0]!.service.url, '', 1000, KEY);
  const paths = (query: string) => ['', ...cursors.map((cursor) => `&cursor=${cursor}`)].map((cursor) => `/v1/service-requests?limit=1000${query}${cursor}`);
  const run = (service: ChildService, c: PageCase, duration: number) =>
    autocannon({
      url: service.url,
      connections: 10,
      duration,
      requests: paths(c.query).map((path) => ({ method: 'GET' as const, path, headers: { 'x-api-key': KEY, ...c.headers } })),
    });
  // Warm-up: every row's texts in every format (and, after, every compressed copy).
  for (const { service } of services) for (const c of cases) await run(service, c, 1);
  const figures = new Map<string, { requestsPerSecond: number; cpuMicroseconds: number }[]>();
  for (let round = 0; round < rounds; round++) {
    for (const c of cases) {
      for (const { name, service } of services) {
        const before = cpuSeconds(service.child.pid!);
        const result = await run(service, c, seconds);
        const used = cpuSeconds(service.child.pid!) - before;
        const key = `${name}\n${c.name}`;
        figures.set(key, [...(figures.get(key) ?? []), { requestsPerSecond: result.requests.average, cpuMicroseconds: (used / Math.max(1, result.requests.total)) * 1e6 }]);
      }
    }
  }
  lines.push('', '| build | case | req/s | vs JSON (same build) | server CPU µs/request | bytes |', '|---|---|---:|---:|---:|---:|');
  for (const { name, service } of services) {
    const medians = new Map<string, { requestsPerSecond: number; cpuMicroseconds: number }>();
    for (const c of cases) {
      const sorted = [...figures.get(`${name}\n${c.name}`)!].sort((a, b) => a.requestsPerSecond - b.requestsPerSecond);
      medians.set(c.name, sorted[Math.floor(sorted.length / 2)]!);
    }
    const json = medians.get(cases[0]!.name)!.requestsPerSecond;
    for (const c of cases) {
      const { requestsPerSecond, cpuMicroseconds } = medians.get(c.name)!;
      const bytes = await encodedSize(`${service.url}${paths(c.query)[1]}`, KEY, c.headers);
      lines.push(
        `| ${name} | ${c.name} | ${Math.round(requestsPerSecond)} | ${((requestsPerSecond / json) * 100).toFixed(0)}% | ${Math.round(cpuMicroseconds)} | ${bytes} |`,
      );
    }
  }
} finally {
  for (const { service } of services) await service.stop();
  keepAlive.destroy();
}
console.log(lines.join('\n'));
console.log(`\nnode ${process.version}, ${rounds} rounds of ${seconds} s per case (median round); the load generator shares the machine`);
