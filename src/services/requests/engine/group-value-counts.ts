/**
 * The groups of a grouping of very few cells, counted by value instead of recorded (group-scan.ts).
 * A cell is a key (a pair of codes) in a period; a grouping has its keys times the periods its created
 * range may touch, and is counted so when those are very few, each with many rows of the range
 * (VALUE_COUNTED): a grouping by one column (all but ZIP) or by two of few values, without a period.
 *
 * One walk over the matching rows counts, per cell, its rows of each two-byte value of days_to_close
 * (hundredths as the row columns store them, NOT_CLOSED and OUTSIDE included): 65,536 counts, one
 * increment a row, no row recorded and no value laid or moved. A cell's requests, closed ones and
 * those closed within 14 days are sums of its counts, and the middles and p90 of any set of groups (a
 * row of the answer, a period's groups left out, a key over its periods) are read from its groups'
 * counts summed: first those of each high byte, then the low bytes of the high byte each rank lies in,
 * so exact, never an approximation, without walking the rows again.
 *
 * The counts are the thread's, kept for its next scans (a scan runs to its end before another starts)
 * and set back to zero where a scan counted (the values lie close together: a cell's requests touch
 * a few of its 256 runs of 256 counts), so that a scan neither allocates nor clears 256 KB a cell.
 * The row's cell is read from its codes (the period's first cell plus the key's place among every pair
 * of codes), so the cells lie in the order of their periods (time order), then of their keys; the
 * groups are the cells that hold a request, numbered in that order.
 */
import { DAY_SECONDS } from '../../../snapshot/index.js';
import { firstPeriodWalk, PERIOD_KEY_OF, periodNumbering, type FoundGroups, type PeriodWalk, type RowBlock } from './group-walk.js';
import { CODE_SPAN, type GroupPeriod, type GroupScan } from './group-query.js';
import { dayOfRow, DAYS_TO_CLOSE_USE, forEachMatchingRow, GROUP_USES, NOT_CLOSED, OUTSIDE, outsideHundredthsOf, readRows, rowRange, WITHIN_HUNDREDTHS, type DaysToCloseColumn, type RowColumnScan, type SharedRowColumns, type StoredArray } from './row-column-scan.js';
import { itemsBySet, outsideBySet, placeOutsideRanks, rankPlanOf } from './value-ranks.js';

/** Which groupings are counted by value: those of at most `cellsMaximum` cells, with `rowsPerCellMinimum` rows of the created range a cell or more. */
export interface ValueCounted {
  cellsMaximum: number;
  rowsPerCellMinimum: number;
}
/**
 * The groupings counted by value: at most 64 cells (16 MB of counts a thread at most, a few hundred KB
 * touched), with 4,096 rows of the range a cell or more (a cell's counts are summed once, 65,536 of
 * them: with fewer rows, recording them costs less).
 */
export const VALUE_COUNTED: ValueCounted = { cellsMaximum: 64, rowsPerCellMinimum: 4_096 };

/** A cell's counts: one per two-byte value. */
const CELL_COUNTS = 1 << 16;

/** The most periods of a kind that the days from `firstDay` to `lastDay` (days since 1970-01-01) touch: those of their months and years, or a bound. */
function periodsBound(period: GroupPeriod | null, firstDay: number, lastDay: number): number {
  const first = new Date(firstDay * DAY_SECONDS * 1000);
  const last = new Date(lastDay * DAY_SECONDS * 1000);
  switch (period) {
    case null:
      return 1;
    case 'day':
      return lastDay - firstDay + 1;
    case 'week':
      return Math.floor((lastDay - firstDay) / 7) + 2;
    case 'month':
      return (last.getUTCFullYear() - first.getUTCFullYear()) * 12 + last.getUTCMonth() - first.getUTCMonth() + 1;
    case 'year':
      return last.getUTCFullYear() - first.getUTCFullYear() + 1;
  }
}

/** The pairs of codes a grouping's keys may take. */
const keysOf = (query: GroupScan): number => query.ranks.reduce((product, ranks) => product * ranks.length, 1);

/** The cells of a grouping to count by value (its keys times the periods of its created range), or 0: it is recorded. */
export function valueCountedCells(columns: SharedRowColumns, scan: RowColumnScan, query: GroupScan, { cellsMaximum, rowsPerCellMinimum }: ValueCounted): number {
  const [from, to] = rowRange(columns, scan);
  if (to <= from) return 0;
  const cells = keysOf(query) * periodsBound(query.period, dayOfRow(columns.created, from), dayOfRow(columns.created, to - 1));
  return cells <= cellsMaximum && to - from >= cells * rowsPerCellMinimum ? cells : 0;
}

/** The thread's counts, all zero between scans. */
let keptCounts = new Int32Array(0);

/** Zeroed counts for `cells` cells: the thread's, grown when it holds fewer. */
function zeroCounts(cells: number): Int32Array {
  if (keptCounts.length < cells * CELL_COUNTS) keptCounts = new Int32Array(cells * CELL_COUNTS);
  return keptCounts;
}

/** A block as a walk by cell reads it: with the pairs of codes a grouping's keys may take. */
interface CellBlock extends RowBlock {
  secondCodes: number;
  /** The cells of a period: the keys a grouping may take. */
  keys: number;
}

/** A walk over the rows and the period of its rows. */
interface CellWalk extends PeriodWalk {
  periodAt: (row: number, walk: PeriodWalk) => void;
}

/**
 * The walk over a block: each row counted at its cell and value, and in its cell's rows; the values
 * OUTSIDE stands for listed apart. What the walk carries from row to row is kept in local variables,
 * read from and written back to the walk once a block.
 */
function countValues(walk: CellWalk, block: CellBlock, counts: Int32Array, opened: Int32Array, daysToClose: DaysToCloseColumn, outsideCells: number[], outsideValues: number[]): void {
  const { rows, count, blockStart, first, second, secondFactor, secondCodes, keys, hundredths } = block;
  let { nextDayStart, period } = walk;
  let periodCell = period * keys;
  for (let i = 0; i < count; i++) {
    const row = rows[i] as number;
    const at = row - blockStart;
    if (row >= nextDayStart) {
      walk.periodAt(row, walk);
      ({ nextDayStart, period } = walk);
      periodCell = period * keys;
    }
    const cell = periodCell + (first[at] as number) * secondCodes + (second[at] as number) * secondFactor;
    const value = hundredths[at] as number;
    const place = cell * CELL_COUNTS + value;
    counts[place] = (counts[place] as number) + 1;
    opened[cell] = (opened[cell] as number) + 1;
    if (value === OUTSIDE) {
      outsideCells.push(cell);
      outsideValues.push(outsideHundredthsOf(daysToClose, row));
    }
  }
  walk.nextDayStart = nextDayStart;
  walk.period = period;
}

/** The groups of a grouping of `cells` cells (valueCountedCells), counted by value (see the file's comment). */
export function countGroupsByValue(columns: SharedRowColumns, scan: RowColumnScan, query: GroupScan, cells: number): FoundGroups {
  const { daysToClose, bytes } = columns;
  const stored = query.by.map((column) => columns.codes[column]);
  const keyOfDay = query.period === null ? null : PERIOD_KEY_OF[query.period];
  const { periods, periodAt } = periodNumbering(columns.created, keyOfDay, keyOfDay ?? (() => ''));
  const keys = keysOf(query);
  const secondCodes = query.ranks[1]?.length ?? 1;
  const counts = zeroCounts(cells);
  const opened = new Int32Array(cells);
  const outsideCells: number[] = [];
  const outsideValues: number[] = [];
  try {
    const walk: CellWalk = { ...firstPeriodWalk(keyOfDay), periodAt };
    forEachMatchingRow(columns, scan, (rows, count, blockStart, blockEnd) => {
      const first = readRows(bytes, stored[0] as StoredArray, blockStart, blockEnd, GROUP_USES[0]);
      const second = stored.length > 1 ? readRows(bytes, stored[1] as StoredArray, blockStart, blockEnd, GROUP_USES[1]) : first;
      const hundredths = readRows(bytes, daysToClose.hundredths, blockStart, blockEnd, DAYS_TO_CLOSE_USE) as Uint16Array;
      countValues(walk, { rows, count, blockStart, first, second, secondFactor: stored.length > 1 ? 1 : 0, secondCodes, keys, hundredths }, counts, opened, daysToClose, outsideCells, outsideValues);
    });
  } catch (error) {
    counts.fill(0, 0, cells * CELL_COUNTS);
    throw error;
  }

  // The groups: the cells that hold a request, in their order, each with the counts of its values'
  // high bytes (`high`: 256 a group); the keys numbered as their groups are.
  const groupCells: number[] = [];
  const keyNumberOf = new Int32Array(keys).fill(-1);
  const keyOf: number[] = [];
  const keyCodes: number[] = [];
  for (let cell = 0; cell < cells; cell++) {
    if (opened[cell] === 0) continue;
    groupCells.push(cell);
    const key = cell % keys;
    if (keyNumberOf[key] === -1) {
      keyNumberOf[key] = keyCodes.length;
      keyCodes.push(Math.floor(key / secondCodes) * CODE_SPAN + (key % secondCodes));
    }
    keyOf.push(keyNumberOf[key] as number);
  }
  const groupCount = groupCells.length;
  const high = new Int32Array(groupCount << 8);
  const closed = new Int32Array(groupCount);
  const within = new Int32Array(groupCount);
  groupCells.forEach((cell, g) => {
    const from = cell * CELL_COUNTS;
    for (let byte = 0; byte < 256; byte++) {
      let sum = 0;
      for (let value = from + (byte << 8), end = value + 256; value < end; value++) sum += counts[value] as number;
      high[(g << 8) + byte] = sum;
    }
    closed[g] = (opened[cell] as number) - (counts[from + NOT_CLOSED] as number);
    let closedWithin = 0;
    for (let value = from; value <= from + WITHIN_HUNDREDTHS; value++) closedWithin += counts[value] as number;
    within[g] = closedWithin;
  });
  const groupOfCell = new Int32Array(cells);
  groupCells.forEach((cell, g) => (groupOfCell[cell] = g));
  // The values OUTSIDE stands for are closed; those below 0 within 14 days.
  outsideCells.forEach((cell, o) => {
    if ((outsideValues[o] as number) <= WITHIN_HUNDREDTHS) within[groupOfCell[cell] as number] = (within[groupOfCell[cell] as number] as number) + 1;
  });

  const rankSets = (setOf: Int32Array, setCount: number, into: Float64Array): void => {
    // Each set's groups, closed requests, values that two bytes do not hold, and high bytes' counts summed.
    const { from: setFrom, order: setGroups } = itemsBySet(setOf, groupCount, setCount);
    const outsideSets = outsideCells.map((cell) => setOf[groupOfCell[cell] as number] as number);
    const { outside, outsideFrom } = outsideBySet(outsideSets, outsideValues, outsideSets.length, setCount);
    const setHigh = new Int32Array(256);
    const setLow = new Int32Array(256);
    for (let set = 0; set < setCount; set++) {
      const first = setFrom[set] as number;
      const end = setFrom[set + 1] as number;
      setHigh.fill(0);
      let setClosed = 0;
      for (let at = first; at < end; at++) {
        const g = setGroups[at] as number;
        setClosed += closed[g] as number;
        for (let byte = 0; byte < 256; byte++) setHigh[byte] = (setHigh[byte] as number) + (high[(g << 8) + byte] as number);
      }
      const plan = rankPlanOf(setClosed, outside, outsideFrom[set] as number, outsideFrom[set + 1] as number);
      const place = 3 * set;
      if (plan === null) {
        into[place] = into[place + 1] = into[place + 2] = Number.NaN;
        continue;
      }
      // Each rank's high byte from the summed counts, then its low byte from those of the high byte's values.
      if (plan.inside > 0) {
        plan.insideRanks.forEach((rank, r) => {
          let before = 0;
          let byte = 0;
          while (before + (setHigh[byte] as number) <= rank) before += setHigh[byte++] as number;
          setLow.fill(0);
          for (let at = first; at < end; at++) {
            const from = (groupCells[setGroups[at] as number] as number) * CELL_COUNTS + (byte << 8);
            for (let low = 0; low < 256; low++) setLow[low] = (setLow[low] as number) + (counts[from + low] as number);
          }
          let low = 0;
          while (before + (setLow[low] as number) <= rank) before += setLow[low++] as number;
          into[place + r] = (byte << 8) + low;
        });
      }
      placeOutsideRanks(plan, outside, outsideFrom[set] as number, into, place);
    }
  };

  /** Sets the counts back to zero where the scan counted: the runs of 256 whose high byte a group counted. */
  const release = (): void => {
    groupCells.forEach((cell, g) => {
      for (let byte = 0; byte < 256; byte++) if ((high[(g << 8) + byte] as number) > 0) counts.fill(0, cell * CELL_COUNTS + (byte << 8), cell * CELL_COUNTS + (byte << 8) + 256);
    });
  };

  return {
    count: groupCount,
    shownPeriodOf: Int32Array.from(groupCells, (cell) => Math.floor(cell / keys)),
    shownPeriods: periods,
    keyOf,
    keyCodes,
    keyCount: keyCodes.length,
    opened: Int32Array.from(groupCells, (cell) => opened[cell] as number),
    closed,
    within,
    rankSets,
    release,
  };
}
