/**
 * The groups of `/v1/stats/groups` on the service's side: the scan a grouping asks of a walk worker
 * (group-scan.ts), and its packed answer read back as the answer's rows, codes turned into values.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { medianOfMiddles, shareClosedWithin } from '../../../snapshot/index.js';
import { compareFilterValues, type FilterValue } from '../list-filters.js';
import type { GroupNumbers, GroupsRecord } from '../store/service-request-store.js';
import { PACKED_FIELDS, type PackedGroups } from './group-scan.js';
import type { GroupColumn, GroupQuery, GroupScan } from './group-query.js';
import type { RowColumns } from './row-columns-memory.js';
import type { RowColumnScan } from './row-column-scan.js';
import type { RowWalkPool } from './sqlite-row-walks.js';
import { ApiError } from '../../../platform/error-registry.js';
import { OVERLOADED_RETRY_AFTER_SECONDS } from '../../../platform/work-budget.js';

/** Per row columns, the rank of each code's value of a column among its values (compareFilterValues: null last). */
const ranksKept = new WeakMap<RowColumns, Map<GroupColumn, Uint32Array>>();

function ranksOf(columns: RowColumns, column: GroupColumn): Uint32Array {
  let kept = ranksKept.get(columns);
  if (kept === undefined) ranksKept.set(columns, (kept = new Map<GroupColumn, Uint32Array>()));
  let ranks = kept.get(column);
  if (ranks === undefined) {
    const values = columns.values[column];
    const byValue = values.map((_, code) => code).sort((a, b) => compareFilterValues(values[a] ?? null, values[b] ?? null));
    ranks = new Uint32Array(values.length);
    byValue.forEach((code, rank) => {
      (ranks as Uint32Array)[code] = rank;
    });
    kept.set(column, ranks);
  }
  return ranks;
}

/** The grouping as a scan of these row columns states it. */
function groupScanOf(columns: RowColumns, query: GroupQuery): GroupScan {
  return { ...query, by: [...query.by], ranks: query.by.map((column) => ranksOf(columns, column)) };
}

/** The numbers of a packed row from `at` (PACKED_FIELDS). */
function numbersAt(numbers: Float64Array, at: number): GroupNumbers {
  const opened = numbers[at + 1] as number;
  const within = numbers[at + 3] as number;
  const low = numbers[at + 4] as number;
  const p90 = numbers[at + 6] as number;
  return {
    opened,
    closed: numbers[at + 2] as number,
    closed_within_14_days: within,
    share_closed_within_14_days: shareClosedWithin(opened, within),
    median_days_to_close: Number.isNaN(low) ? null : medianOfMiddles(low / 100, (numbers[at + 5] as number) / 100),
    p90_days_to_close: Number.isNaN(p90) ? null : p90 / 100,
  };
}

/** Rows of an answer made per turn of the event loop (an answer may hold 200,000). */
const ROWS_PER_TURN = 4_096;

/** The answer's rows from a worker's packed groups, ROWS_PER_TURN rows per turn of the event loop. */
export async function groupsOfPacked(columns: RowColumns, query: GroupQuery, packed: PackedGroups): Promise<GroupsRecord> {
  const periods = packed.periods === '' ? [] : packed.periods.split('\n');
  const width = query.by.length;
  const periodOf = (numbers: Float64Array, at: number): { period?: string } => (query.period === null ? {} : { period: periods[numbers[at] as number] });
  const items: GroupsRecord['items'] = [];
  for (let row = 0; row * PACKED_FIELDS < packed.numbers.length; row++) {
    if (row > 0 && row % ROWS_PER_TURN === 0) await nextTurn();
    const key: Record<string, FilterValue> = {};
    query.by.forEach((column, c) => {
      key[column] = columns.values[column][packed.codes[row * width + c] as number] ?? null;
    });
    items.push({ key, ...periodOf(packed.numbers, row * PACKED_FIELDS), ...numbersAt(packed.numbers, row * PACKED_FIELDS) });
  }
  const others: GroupsRecord['others'] = [];
  for (let at = 0; at < packed.others.length; at += PACKED_FIELDS) others.push({ ...periodOf(packed.others, at), ...numbersAt(packed.others, at) });
  return { items, others };
}

/**
 * The groups of the matching rows, scanned by `pool` on the row columns `plan` gives. Without row
 * columns (still loading past their wait, or a snapshot without them), 503 overloaded with
 * Retry-After: no other engine counts groups (SQL would sort the rows once per group column and period).
 */
export async function groupsFromRowColumns(
  pool: RowWalkPool,
  plan: () => Promise<{ columns: RowColumns; scan: RowColumnScan } | null>,
  query: GroupQuery,
): Promise<GroupsRecord> {
  const scanned = await pool.scan('groups', async () => {
    const planned = await plan();
    return planned === null ? null : { columns: planned.columns, scan: { ...planned.scan, groups: groupScanOf(planned.columns, query) } };
  });
  if (scanned === null) throw new ApiError('overloaded', { headers: { 'Retry-After': String(OVERLOADED_RETRY_AFTER_SECONDS) } });
  return await groupsOfPacked(scanned.plan.columns, query, scanned.answer.groups);
}
