/**
 * Heavy groupings of the whole range in one thread: each one's time, and the array buffers the thread
 * holds after it before and after a collection (what a walk thread keeps between scans, and what it
 * leaves as garbage). For a CPU profile: `node --cpu-prof --import tsx bench/investigations/heavy-groupings.ts ...`.
 *
 *   node --single-threaded-gc --import tsx bench/investigations/heavy-groupings.ts SNAPSHOT [REPEAT=1]
 */
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import Database from 'better-sqlite3';
import type { GroupScan } from '../../src/services/requests/engine/group-query.js';
import { scanGroups } from '../../src/services/requests/engine/group-scan.js';
import type { RowColumnScan } from '../../src/services/requests/engine/row-column-scan.js';
import { loadSqliteRowColumns } from '../../src/services/requests/engine/sqlite-row-columns.js';

setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;
const heldMb = (): number => Math.round(getHeapStatistics().external_memory / 1048576);

const [file, repeatText = '1'] = process.argv.slice(2);
if (file === undefined) throw new Error('usage: heavy-groupings.ts SNAPSHOT [REPEAT]');
const database = new Database(file, { readonly: true });
const columns = await loadSqliteRowColumns(database, () => true);
database.close();
if (columns === null) throw new Error(`${file} has no row columns`);
console.log(`array buffers at the start: ${heldMb()} MB`);
const cases: [GroupScan['by'], GroupScan['period'], GroupScan['order'], boolean, number][] = [
  [['channel', 'incident_zip'], 'week', 'median_days_to_close', true, 20],
  [['incident_zip'], 'week', 'opened', true, 100],
  [['council_district'], 'week', 'closed', true, 20],
  [['incident_zip'], null, 'median_days_to_close', false, 10],
  [['council_district'], null, 'opened', true, 100],
  [['community_board'], 'year', 'opened', true, 20],
  [['descriptor'], 'week', 'median_days_to_close', true, 5],
  [['status', 'complaint_type'], 'month', 'opened', true, 100],
];
for (const [by, period, order, descending, limit] of cases) {
  const scan: RowColumnScan = { columns: 0, filters: [], from: null, to: null };
  const groups: GroupScan = { by, period, order, descending, limit, ranks: by.map((name) => Uint32Array.from(columns.values[name], (_, code) => code)) };
  const times: number[] = [];
  let rows = 0;
  for (let r = 0; r < Number(repeatText); r++) {
    const started = performance.now();
    rows = scanGroups(columns, scan, groups).numbers.length / 7;
    times.push(performance.now() - started);
  }
  const held = heldMb();
  collect();
  collect();
  console.log(`${by.join(',')} ${period ?? '-'} ${descending ? '-' : ''}${order} ${limit} (${rows} rows): ${times.map((t) => t.toFixed(0)).join(' ')} ms; array buffers ${held} MB, after a collection ${heldMb()} MB`);
}
