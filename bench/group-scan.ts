/**
 * The group scan of `/v1/stats/groups` (src/services/requests/engine/group-scan.ts) in one thread, this
 * checkout's against an earlier checkout's, in the same run: the row columns of a SQLite snapshot are
 * loaded once, then random groupings (1 or 2 of the 9 columns, no period or any of the four, every
 * order, a filter on borough, status or channel 2 times in 5, the whole range) are scanned by each
 * engine in turn, the order of the engines alternating from query to query. Reports each engine's
 * p50, p99, max and total ms, and whether both gave the same packed answers (a SHA-256 of them).
 *
 *   npx tsx bench/group-scan.ts --file SNAPSHOT [--before CHECKOUT] [--queries 60] [--seed 7]
 *
 * CHECKOUT: a folder holding an earlier commit's sources (`git worktree add --detach ../before C`,
 * with a link to this node_modules); without it, this engine alone.
 */
import { createHash } from 'node:crypto';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { SeededRandom } from '../src/ingest/nyc311/seeded-random.js';
import { GROUP_COLUMNS, GROUP_MEASURES, GROUP_PERIODS, type GroupScan } from '../src/services/requests/engine/group-query.js';
import type { PackedGroups } from '../src/services/requests/engine/group-scan.js';
import type { RowColumnScan, SharedRowColumns } from '../src/services/requests/engine/row-column-scan.js';
import { releaseRowColumns } from '../src/services/requests/engine/row-columns-memory.js';
import { loadSqliteRowColumns } from '../src/services/requests/engine/sqlite-row-columns.js';
import { percentile, REPO_ROOT } from './support.js';

const { values } = parseArgs({
  options: {
    file: { type: 'string' },
    before: { type: 'string' },
    queries: { type: 'string', default: '60' },
    seed: { type: 'string', default: '7' },
  },
});
if (values.file === undefined) {
  console.error('usage: npx tsx bench/group-scan.ts --file SNAPSHOT [--before CHECKOUT] [--queries 60] [--seed 7]');
  process.exit(2);
}

type ScanGroups = (columns: SharedRowColumns, scan: RowColumnScan, query: GroupScan) => PackedGroups;
const ENGINE = 'src/services/requests/engine/group-scan.ts';
const engineOf = async (root: string): Promise<ScanGroups> => ((await import(resolve(root, ENGINE))) as { scanGroups: ScanGroups }).scanGroups;
const engines: [string, ScanGroups][] = [['this checkout', await engineOf(REPO_ROOT)]];
if (values.before !== undefined) engines.unshift([`before (${values.before})`, await engineOf(values.before)]);

const database = new Database(values.file, { readonly: true });
const columns = await loadSqliteRowColumns(database, () => true);
database.close();
if (columns === null) throw new Error(`${values.file} has no row columns`);

const random = new SeededRandom(Number(values.seed));
const times = engines.map(() => [] as number[]);
const hashes = engines.map(() => createHash('sha256'));
for (let q = 0; q < Number(values.queries); q++) {
  const by = [...new Set([random.pick(GROUP_COLUMNS), random.pick(GROUP_COLUMNS)])].slice(0, random.int(1, 2));
  const filtered = random.int(1, 5) <= 2;
  const column = random.pick(['borough', 'status', 'channel'] as const);
  const scan: RowColumnScan = { columns: 0, filters: filtered ? [{ column, accepted: [random.int(1, columns.values[column].length - 1)] }] : [], from: null, to: null };
  const query: GroupScan = {
    by,
    period: random.pick([null, ...GROUP_PERIODS]),
    order: random.pick(GROUP_MEASURES),
    descending: random.pick([true, false]),
    limit: 20,
    ranks: by.map((name) => Uint32Array.from(columns.values[name], (_, code) => code)),
  };
  const order = q % 2 === 0 ? engines.map((_, e) => e) : engines.map((_, e) => engines.length - 1 - e);
  for (const e of order) {
    const started = performance.now();
    const packed = (engines[e] as [string, ScanGroups])[1](columns, scan, query);
    (times[e] as number[]).push(performance.now() - started);
    (hashes[e] as ReturnType<typeof createHash>).update(packed.periods).update(new Uint8Array(packed.codes.buffer)).update(new Uint8Array(packed.numbers.buffer)).update(new Uint8Array(packed.others.buffer));
  }
}
releaseRowColumns(columns.bytes);

console.log(`${columns.rows.toLocaleString('en-US')} requests, ${values.queries} groupings (seed ${values.seed}), ms in one thread:\n`);
console.log('| engine | p50 | p99 | max | total | answers (SHA-256) |\n|---|---:|---:|---:|---:|---|');
engines.forEach(([name], e) => {
  const sorted = [...(times[e] as number[])].sort((a, b) => a - b);
  const total = sorted.reduce((sum, time) => sum + time, 0);
  const digest = (hashes[e] as ReturnType<typeof createHash>).digest('hex').slice(0, 16);
  console.log(`| ${name} | ${percentile(sorted, 50).toFixed(1)} | ${percentile(sorted, 99).toFixed(1)} | ${(sorted.at(-1) ?? 0).toFixed(1)} | ${total.toFixed(0)} | ${digest} |`);
});
