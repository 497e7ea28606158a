/**
 * Benchmark of the snapshot ingestion: the synthetic export (written once to a CSV file, generator
 * timed separately) ingested from that file into SQLite and into PostgreSQL, several runs each.
 * Reports wall time per phase (median and best) and the process CPU time, since the machine may be
 * shared. PostgreSQL: $TEST_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test), in a
 * schema of its own that is dropped at the end.
 *
 *   npx tsx bench/snapshot-ingest.ts [--runs 3] [--no-postgres]
 */
import { writeFileSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { dropServedSchema } from '../src/snapshot/postgres-snapshot-pointer.js';
import { buildSnapshot, type BuildSnapshotResult, type SnapshotOutput } from '../src/ingest/nyc311/build-snapshot.js';
import { generateSyntheticExport } from '../src/ingest/nyc311/synthetic-export.js';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '3' }, 'no-postgres': { type: 'boolean' } } });
const runs = Number(values.runs);
const databaseUrl = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

const dir = mkdtempSync(join(tmpdir(), 'snapshot-bench-'));
const csvPath = join(dir, 'synthetic-export.csv');

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};
const seconds = (ms: number): string => (ms / 1000).toFixed(2);

interface Measured {
  result: BuildSnapshotResult;
  cpuMs: number;
}

async function measure(output: SnapshotOutput): Promise<Measured> {
  const cpu = process.cpuUsage();
  const result = await buildSnapshot({ kind: 'file', path: csvPath }, output);
  const used = process.cpuUsage(cpu);
  return { result, cpuMs: (used.user + used.system) / 1000 };
}

function report(name: string, measured: Measured[]): string {
  const t = (pick: (m: Measured) => number): string => `${seconds(median(measured.map(pick)))} (best ${seconds(Math.min(...measured.map(pick)))})`;
  return `| ${name} | ${t((m) => m.result.timings.readAndCleanMs)} | ${t((m) => m.result.timings.aggregateMs)} | ${t((m) => m.result.timings.writeMs)} | **${t((m) => m.result.timings.ingestMs)}** | ${t((m) => m.cpuMs)} |`;
}

async function main(): Promise<void> {
  const load = loadavg().map((x) => x.toFixed(1)).join(' ');
  const started = performance.now();
  const generated = generateSyntheticExport();
  writeFileSync(csvPath, [...generated.chunks].join(''));
  const generateMs = performance.now() - started;
  const size = statSync(csvPath).size;

  const sqlite: Measured[] = [];
  for (let i = 0; i < runs; i++) sqlite.push(await measure({ kind: 'sqlite', path: join(dir, 'snapshot.sqlite') }));

  const postgres: Measured[] = [];
  const schema = `bench_snapshot_${process.pid}`;
  if (!values['no-postgres']) {
    for (let i = 0; i < runs; i++) postgres.push(await measure({ kind: 'postgres', url: databaseUrl, schema }));
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    await dropServedSchema(client, schema);
    await client.end();
  }
  rmSync(dir, { recursive: true, force: true });

  const rows = sqlite[0]?.result.meta.row_count ?? 0;
  const lines = [
    `Synthetic export: ${generated.counts.records.toLocaleString('en-US')} records, ${(size / 1e6).toFixed(1)} MB, ${rows.toLocaleString('en-US')} requests after cleaning; generator ${seconds(generateMs)} s (not part of ingestion).`,
    `Machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, Node ${process.version}; load average at start ${load}. ${runs} runs each, seconds, median (best).`,
    '',
    '| target | read + clean | daily numbers, counts, hash | write | ingestion total | CPU time |',
    '|---|---|---|---|---|---|',
    report('SQLite (better-sqlite3)', sqlite),
    ...(postgres.length > 0 ? [report('PostgreSQL (COPY)', postgres)] : []),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

await main();
