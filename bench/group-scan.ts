/**
 * The scans of the row columns that rank days_to_close, in one thread, this checkout's against an
 * earlier checkout's, in the same run: the row columns of a SQLite snapshot are loaded once, then
 * random scans are run by each engine in turn, the order of the engines alternating from query to
 * query. Reports each engine's p50, p99, max and total ms, and whether both gave the same packed
 * answers (a SHA-256 of them).
 * - `--scan groups` (the default): the group scan of `/v1/stats/groups`
 *   (src/services/requests/engine/group-scan.ts): random groupings (1 or 2 of the 9 columns, no
 *   period or any of the four, every order), the whole range;
 * - `--scan buckets`: the period numbers of `/v1/stats/daily`, `weekly` and `monthly` that no summary
 *   holds (row-column-scan.ts, scanBuckets): a random unit, the whole range or a random part of it;
 * - `--scan counts`: the count of the rows that the filter operators' checks keep (row-column-scan.ts,
 *   scanCount over every row): one to three of closed, a closed_at range, a days_to_close range, `q`
 *   (one to three codes of complaint type, descriptor or location type) and `near` (100 to 5,000 m).
 * Groups and buckets with a filter on borough, status or channel 2 times in 5.
 *
 *   npx tsx bench/group-scan.ts --file SNAPSHOT [--scan groups|buckets|counts] [--before CHECKOUT] [--queries 60] [--seed 7] [--each]
 *
 * `--each`: every scan's time per engine too.
 *
 * CHECKOUT: a folder holding an earlier commit's sources (`git worktree add --detach ../before C`,
 * with a link to this node_modules); without it, this engine alone.
 */
import { createHash } from 'node:crypto';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { SeededRandom } from '../src/ingest/nyc311/seeded-random.js';
import type { SummaryUnit } from '../src/snapshot/index.js';
import { GROUP_COLUMNS, GROUP_MEASURES, GROUP_PERIODS, type GroupScan } from '../src/services/requests/engine/group-query.js';
import type { PackedGroups } from '../src/services/requests/engine/group-scan.js';
import type { PackedBuckets } from '../src/services/requests/engine/period-stats.js';
import type { RowColumnScan, SharedRowColumns } from '../src/services/requests/engine/row-column-scan.js';
import { releaseRowColumns } from '../src/services/requests/engine/row-columns-memory.js';
import { boxAround } from '../src/services/requests/great-circle.js';
import { loadSqliteRowColumns } from '../src/services/requests/engine/sqlite-row-columns.js';
import { percentile, REPO_ROOT } from './support.js';

const { values } = parseArgs({
  options: {
    file: { type: 'string' },
    scan: { type: 'string', default: 'groups' },
    before: { type: 'string' },
    queries: { type: 'string', default: '60' },
    seed: { type: 'string', default: '7' },
    each: { type: 'boolean', default: false },
  },
});
if (values.file === undefined || !['groups', 'buckets', 'counts'].includes(values.scan)) {
  console.error('usage: npx tsx bench/group-scan.ts --file SNAPSHOT [--scan groups|buckets|counts] [--before CHECKOUT] [--queries 60] [--seed 7] [--each]');
  process.exit(2);
}
const byBuckets = values.scan === 'buckets';
const byCounts = values.scan === 'counts';

/** A scan as drawn, the same for every engine. */
interface Drawn {
  scan: RowColumnScan;
  groups: GroupScan;
  unit: SummaryUnit;
}
/** An engine: runs a drawn scan, returns its packed answer's parts. */
type Engine = (columns: SharedRowColumns, drawn: Drawn) => (string | Uint8Array)[];
type ScanGroups = (columns: SharedRowColumns, scan: RowColumnScan, query: GroupScan) => PackedGroups;
type ScanBuckets = (columns: SharedRowColumns, scan: RowColumnScan, unit: SummaryUnit) => PackedBuckets;
type ScanCount = (columns: SharedRowColumns, scan: RowColumnScan) => number;
const engineOf = async (root: string): Promise<Engine> => {
  if (byCounts) {
    const { scanCount } = (await import(resolve(root, 'src/services/requests/engine/row-column-scan.ts'))) as { scanCount: ScanCount };
    return (columns, drawn) => [String(scanCount(columns, drawn.scan))];
  }
  if (byBuckets) {
    const { scanBuckets } = (await import(resolve(root, 'src/services/requests/engine/row-column-scan.ts'))) as { scanBuckets: ScanBuckets };
    return (columns, drawn) => {
      const packed = scanBuckets(columns, drawn.scan, drawn.unit);
      return [packed.keys, new Uint8Array(packed.numbers.buffer)];
    };
  }
  const { scanGroups } = (await import(resolve(root, 'src/services/requests/engine/group-scan.ts'))) as { scanGroups: ScanGroups };
  return (columns, drawn) => {
    const packed = scanGroups(columns, drawn.scan, drawn.groups);
    return [packed.periods, new Uint8Array(packed.codes.buffer), new Uint8Array(packed.numbers.buffer), new Uint8Array(packed.others.buffer)];
  };
};
const engines: [string, Engine][] = [['this checkout', await engineOf(REPO_ROOT)]];
if (values.before !== undefined) engines.unshift([`before (${values.before})`, await engineOf(values.before)]);

const database = new Database(values.file, { readonly: true });
const columns = await loadSqliteRowColumns(database, () => true);
database.close();
if (columns === null) throw new Error(`${values.file} has no row columns`);

const random = new SeededRandom(Number(values.seed));
const times = engines.map(() => [] as number[]);
const hashes = engines.map(() => createHash('sha256'));
const HISTORY_FROM = Date.UTC(2010, 0, 1) / 1000;
const HISTORY_TO = Date.UTC(2026, 0, 1) / 1000;
/** One to three of the filter operators' checks, drawn into `scan` (its equality filters left off). */
const drawOperators = (scan: RowColumnScan): void => {
  scan.filters = [];
  const kinds = ['closed', 'closed range', 'days', 'q', 'near'] as const;
  const chosen = new Set(Array.from({ length: random.int(1, 3) }, () => random.pick(kinds)));
  if (chosen.has('closed')) scan.closed = random.chance(0.7);
  if (chosen.has('closed range')) {
    scan.closedFrom = random.int(HISTORY_FROM, HISTORY_TO);
    scan.closedTo = scan.closedFrom + random.int(1, 366) * 86_400;
  }
  if (chosen.has('days')) {
    scan.daysMin = random.int(0, 30);
    scan.daysMax = scan.daysMin + random.int(1, 60);
  }
  if (chosen.has('q')) {
    const column = random.pick(['complaint_type', 'descriptor', 'location_type'] as const);
    scan.anyOf = [{ column, accepted: Array.from({ length: random.int(1, 3) }, () => random.int(1, columns.values[column].length - 1)) }];
  }
  if (chosen.has('near')) {
    const [latitude, longitude, radiusM] = [40.55 + random.next() * 0.35, -74.2 + random.next() * 0.45, random.int(100, 5_000)];
    scan.near = { latitude, longitude, radiusM, box: boxAround(latitude, longitude, radiusM) };
  }
};
for (let q = 0; q < Number(values.queries); q++) {
  const by = [...new Set([random.pick(GROUP_COLUMNS), random.pick(GROUP_COLUMNS)])].slice(0, random.int(1, 2));
  const filtered = random.int(1, 5) <= 2;
  const column = random.pick(['borough', 'status', 'channel'] as const);
  const scan: RowColumnScan = { columns: 0, filters: filtered ? [{ column, accepted: [random.int(1, columns.values[column].length - 1)] }] : [], from: null, to: null };
  const groups: GroupScan = {
    by,
    period: random.pick([null, ...GROUP_PERIODS]),
    order: random.pick(GROUP_MEASURES),
    descending: random.pick([true, false]),
    limit: 20,
    ranks: by.map((name) => Uint32Array.from(columns.values[name], (_, code) => code)),
  };
  if (byCounts) drawOperators(scan);
  let unit: SummaryUnit = 'day';
  if (byBuckets) {
    unit = random.pick(['day', 'week', 'month'] as const);
    // The whole range, or from a random second for a day to the whole history (shorter ones more often).
    if (random.chance(0.5)) {
      scan.from = random.int(HISTORY_FROM, HISTORY_TO);
      scan.to = scan.from + Math.round(86_400 * Math.exp(random.next() * Math.log(16 * 366)));
    }
  }
  const drawn: Drawn = { scan, groups, unit };
  const order = q % 2 === 0 ? engines.map((_, e) => e) : engines.map((_, e) => engines.length - 1 - e);
  for (const e of order) {
    const started = performance.now();
    const parts = (engines[e] as [string, Engine])[1](columns, drawn);
    (times[e] as number[]).push(performance.now() - started);
    for (const part of parts) (hashes[e] as ReturnType<typeof createHash>).update(part);
  }
  if (values.each) {
    const what = byBuckets ? unit : byCounts ? 'count' : `${groups.by.join(',')} ${groups.period ?? '-'} ${groups.descending ? '-' : ''}${groups.order}`;
    console.log(`${what}${scan.filters.length > 0 ? ' (filtered)' : ''}: ${times.map((t) => (t.at(-1) as number).toFixed(0)).join(' / ')} ms`);
  }
}
releaseRowColumns(columns.bytes);

console.log(`${columns.rows.toLocaleString('en-US')} requests, ${values.queries} ${byBuckets ? 'period number scans' : byCounts ? 'counts of the operators\' rows' : 'groupings'} (seed ${values.seed}), ms in one thread:\n`);
console.log('| engine | p50 | p99 | max | total | answers (SHA-256) |\n|---|---:|---:|---:|---:|---|');
engines.forEach(([name], e) => {
  const sorted = [...(times[e] as number[])].sort((a, b) => a - b);
  const total = sorted.reduce((sum, time) => sum + time, 0);
  const digest = (hashes[e] as ReturnType<typeof createHash>).digest('hex').slice(0, 16);
  console.log(`| ${name} | ${percentile(sorted, 50).toFixed(1)} | ${percentile(sorted, 99).toFixed(1)} | ${(sorted.at(-1) ?? 0).toFixed(1)} | ${total.toFixed(0)} | ${digest} |`);
});
