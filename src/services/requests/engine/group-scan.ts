/**
 * The numbers of `/v1/stats/groups`: the matching requests grouped by the values of one or two coded
 * columns, optionally per day, ISO week, month or year, counted by a walk worker over the row columns
 * (row-column-scan.ts), never on the event loop.
 *
 * A grouping of very few cells (a key in a period: one column without a period, say) is counted by
 * value in one walk (group-value-counts.ts). Any other scan walks the selected rows once, counting
 * each group's requests (and finding the groups) and recording each row's group and days_to_close
 * (RecordedRows); from the recorded rows, every closed request's days_to_close (in hundredths) is laid
 * into one array where each group's values are contiguous, a period's groups once the walk has left
 * the period (a grouping by year or without a period over more rows than a thread records is counted
 * by quarter or month and merged, see countingParts; a period of more rows than the recording holds
 * is laid as it goes, each run of its rows a slice per group), the groups in the order they were
 * found: that of their periods (the rows come in created_at order), so the lays write near where they
 * wrote before, and a period's groups, and their values, follow each other. The median (mean of the
 * two middle values) and the 90th percentile (nearest rank: the value at position ceil(0.9 n) of the
 * sorted values) of a group are then exact selections in its part of that array (a large group's by
 * counting its values' bytes), never a sort of every value, and never an approximation, made only for
 * the groups the answer shows (or orders by); those of several groups (a key over its periods, the
 * groups left out, a group laid in runs) are counted or selected from their parts, never copied whole.
 *
 * The array holds each value in two bytes, as the row columns store it (OUTSIDE for the few that two
 * bytes do not hold, which the scan lists apart per group: OUTSIDE is above every value two bytes hold,
 * so the ranks among those few are read from the list). It is the thread's, kept for its next scans,
 * as are the recorded rows: a scan's memory is at most 2 bytes per matching closed request of the
 * largest scan so far, 6 per matching row up to RECORDED_ROWS_MAXIMUM, plus its groups, and leaves no
 * garbage that grows with the rows. A row finds its group in a table indexed by
 * its codes (the key's latest period), so no row is hashed; a new group's key is that latest group's,
 * so the keys are numbered as they are found too, and every step after the walk reads the groups in
 * sequence, never gathering them in another order (a grouping by day may find two million).
 *
 * Either way the groups found (FoundGroups) are answered alike (packedAnswer): the worker orders the
 * keys (the answer's `order`, ties by key), keeps the first `limit`, and counts the groups left out
 * (`others`) in the same pass: their median needs their values, which only the worker holds.
 */
import { medianOfMiddles, shareClosedWithin } from '../../../snapshot/index.js';
import { countGroupsByValue, VALUE_COUNTED, valueCountedCells } from './group-value-counts.js';
import { firstPeriodWalk, PERIOD_KEY_OF, periodNumbering, type FoundGroups, type PeriodWalk, type RowBlock } from './group-walk.js';
import { CODE_SPAN, type GroupMeasure, type GroupScan } from './group-query.js';
import { grownValues, itemsBySet, middlesAndP90, outsideBySet, rangeMiddlesAndP90, scanValues, type ValueSet } from './value-ranks.js';
import { dayOfRow, DAYS_TO_CLOSE_USE, WITHIN_HUNDREDTHS, GROUP_USES, forEachMatchingRow, NOT_CLOSED, OUTSIDE, outsideHundredthsOf, readRows, rowRange, type DaysToCloseColumn, type RowColumnScan, type SharedRowColumns, type StoredArray } from './row-column-scan.js';

/** Numbers per packed row: period index, opened, closed, closed within 14 days, low and high middle, p90 (hundredths; NaN for none). */
export const PACKED_FIELDS = 7;

/**
 * The groups as the worker sends them: the period keys in one text (newline-separated), each row's
 * codes (one per column of `by`) and numbers (PACKED_FIELDS each), rows of the kept keys in order
 * (each key's periods in time order), then the numbers of the groups left out, per period.
 */
export interface PackedGroups {
  periods: string;
  codes: Int32Array<ArrayBuffer>;
  numbers: Float64Array<ArrayBuffer>;
  others: Float64Array<ArrayBuffer>;
}




/** The set of several groups (`ranges`: theirs; `outside`: their values that two bytes do not hold, in any order), left as it is. */
function unionSet(ranges: Numbers, outside: number[]): ValueSet {
  const sortedOutside = Int32Array.from(outside).sort();
  return { ranges: ranges.array, rangeCount: ranges.length / 2, inPlace: false, outside: sortedOutside, outsideFrom: 0, outsideTo: sortedOutside.length };
}

/** The number a measure orders by, as the answer shows it (null: none, ordered last). */
function measureOf(measure: GroupMeasure, numbers: Float64Array, at: number): number | null {
  const opened = numbers[at + 1] as number;
  switch (measure) {
    case 'opened':
      return opened;
    case 'closed':
      return numbers[at + 2] as number;
    case 'closed_within_14_days':
      return numbers[at + 3] as number;
    case 'share_closed_within_14_days':
      return shareClosedWithin(opened, numbers[at + 3] as number);
    case 'median_days_to_close': {
      const low = numbers[at + 4] as number;
      return Number.isNaN(low) ? null : medianOfMiddles(low / 100, (numbers[at + 5] as number) / 100);
    }
    case 'p90_days_to_close': {
      const p90 = numbers[at + 6] as number;
      return Number.isNaN(p90) ? null : p90 / 100;
    }
  }
}

/** A growable list of numbers. */
class Numbers {
  array: Float64Array;
  length = 0;

  constructor(capacity = 256) {
    this.array = new Float64Array(capacity);
  }

  push(value: number): void {
    if (this.length === this.array.length) {
      const larger = new Float64Array(this.array.length * 2);
      larger.set(this.array);
      this.array = larger;
    }
    this.array[this.length++] = value;
  }
}

/**
 * The groups found, numbered as found: each key (the codes: first * 65,536 + second, below 2^32) with
 * its period. The rows come in created_at order, so a key's periods come in time order: a key's group
 * is its latest one or a new one. A key is looked up by its place among every pair of codes when the
 * columns' codes make at most DIRECT_KEYS pairs (the thread's direct table), else in an
 * open-addressing table of (key, period). The keys are numbered as found too (`keyOf`: each group's).
 */
class GroupTable {
  readonly periods = new Numbers();
  /** Each group's key, by the key's number. */
  readonly keyOf = new Numbers();
  /** Each key's codes (first * 65,536 + second), by its number. */
  readonly keyCodes = new Numbers();
  /** The keys' numbers by their codes, for the open-addressing table only. */
  private readonly keyNumbers = new Map<number, number>();
  private slots = new Int32Array(1024).fill(-1);
  private readonly direct: Int32Array | null;
  /** The direct table's places hold base + group; a place below base is empty. */
  private readonly base: number;

  constructor(private readonly secondCodes: number, firstCodes: number, directKeys: number) {
    this.direct = firstCodes * secondCodes <= directKeys ? directTableFor(firstCodes * secondCodes) : null;
    this.base = direct.next;
  }

  /** The group of the codes (`second` 0 for one column) and period, made when new (its number is then the groups' count before). */
  find(first: number, second: number, period: number): number {
    const key = first * CODE_SPAN + second;
    const table = this.direct;
    if (table === null) return this.hashed(key, period);
    const place = first * this.secondCodes + second;
    const latest = (table[place] as number) - this.base;
    if (latest >= 0 && this.periods.array[latest] === period) return latest;
    // A place with a group of this scan holds the key's latest group: the new group's key is its.
    const found = this.add(key, period, latest >= 0 ? (this.keyOf.array[latest] as number) : -1);
    table[place] = this.base + found;
    direct.next = Math.max(direct.next, this.base + found + 1);
    return found;
  }

  /**
   * The direct table as a pass reads it at every row (`direct` null: keys are hashed), for a lookup
   * without a call: a place holds base + the key's latest group, that group when its period is the row's.
   * Looked up at every row, a key costs less than a guess whether it is the row before's (which keys
   * that change from row to row would get wrong); a miss asks `find`.
   */
  get lookup(): { direct: Int32Array | null; base: number; secondCodes: number } {
    return { direct: this.direct, base: this.base, secondCodes: this.secondCodes };
  }

  /** The groups found. */
  get count(): number {
    return this.periods.length;
  }

  /** The codes of a group's key. */
  codesOf(group: number): number {
    return this.keyCodes.array[this.keyOf.array[group] as number] as number;
  }

  /** A new group of the key (its number, or -1 when the key is new) and period. */
  private add(key: number, period: number, keyNumber: number): number {
    const made = this.periods.length;
    let number = keyNumber;
    if (number === -1) {
      number = this.keyCodes.length;
      this.keyCodes.push(key);
    }
    this.keyOf.push(number);
    this.periods.push(period);
    return made;
  }

  private hashed(key: number, period: number): number {
    const mask = this.slots.length - 1;
    for (let slot = slotOf(key, period) & mask; ; slot = (slot + 1) & mask) {
      const group = this.slots[slot] as number;
      if (group === -1) {
        let keyNumber = this.keyNumbers.get(key);
        if (keyNumber === undefined) this.keyNumbers.set(key, (keyNumber = this.keyCodes.length));
        const made = this.add(key, period, keyNumber === this.keyCodes.length ? -1 : keyNumber);
        this.slots[slot] = made;
        if (made * 2 >= this.slots.length) this.grow();
        return made;
      }
      if (this.codesOf(group) === key && this.periods.array[group] === period) return group;
    }
  }

  private grow(): void {
    this.slots = new Int32Array(this.slots.length * 2).fill(-1);
    const mask = this.slots.length - 1;
    for (let group = 0; group < this.count; group++) {
      let slot = slotOf(this.codesOf(group), this.periods.array[group] as number) & mask;
      while (this.slots[slot] !== -1) slot = (slot + 1) & mask;
      this.slots[slot] = group;
    }
  }
}

/** The most pairs of codes looked up in a direct table (16 MiB). */
const DIRECT_KEYS = 1 << 22;
/**
 * The thread's direct table, kept for its next scans (a scan runs to its end before another starts),
 * never cleared between them: each scan's entries lie at or above `next` as it began, so those of
 * earlier scans read as empty (even after a scan that threw).
 */
const direct = { table: new Int32Array(0), next: 0 };

/** The thread's direct table for `keys` pairs of codes. */
function directTableFor(keys: number): Int32Array {
  // Numbers past 2^30 start again from an empty table (-1 everywhere).
  if (direct.table.length < keys || direct.next > 2 ** 30) {
    direct.table = new Int32Array(Math.max(keys, direct.table.length, 4_096)).fill(-1);
    direct.next = 0;
  }
  return direct.table;
}

/** A hash of (key, period) in 32 bits. */
function slotOf(key: number, period: number): number {
  let h = Math.imul(key | 0, 0x9e3779b1) ^ Math.imul(period + 1, 0x85ebca6b);
  h ^= h >>> 16;
  h = Math.imul(h, 0x7feb352d);
  return (h ^ (h >>> 15)) & 0x3fffffff;
}

/** What a pass over the rows carries from one block to the next. */
interface PassState extends PeriodWalk {
  /** The first group of the period: a key's latest group is of the period when it is this one or later. */
  periodFirst: number;
  lastKey: number;
  lastPeriod: number;
  group: number;
  /** Sets `period` and `nextDayStart` for the row at or after nextDayStart. */
  periodAt: (row: number, walk: PeriodWalk) => void;
}

/** Each group's opened, closed and closed within 14 days, by its number. */
interface GroupCounts {
  opened: Numbers;
  closed: Numbers;
  within: Numbers;
}

/** The most rows a walk thread records at once (6 bytes each: 36 MB), for a created range of at most that many rows. */
export const RECORDED_ROWS_MAXIMUM = 6_000_000;
/** The rows a thread's recording holds at first (6 MB): grown only for a period of more matching rows. */
const RECORDED_ROWS_FIRST = 1 << 20;

/**
 * The most groups of (key, part of a year) a grouping is counted with by parts: some 150 bytes each,
 * and as much of garbage; four or eight times as many left the service's RSS past 500 MB after the
 * groups' traffic at 40 million requests (bench/README.md).
 */
const PART_GROUPS_MAXIMUM = 1 << 16;

/** The quarter of a day (`2025-Q1`): a part of a year that a grouping may be counted by (countingParts). */
const quarterOf = (day: string): string => `${day.slice(0, 4)}-Q${Math.floor((Number(day.slice(5, 7)) - 1) / 3) + 1}`;

/**
 * The parts of a year that a grouping by year or without a period is counted by, each key's parts
 * merged into its years (or its whole range) afterwards; or null. When its created range holds more
 * rows than a recording may (40 million requests), the groups of each part, complete once the walk
 * has left it, are laid from the recording whole rather than in runs (no slower at 40 million). Quarters when
 * a quarter's rows fit half the recording (`bound`), else months; null when its keys times its parts
 * could make more than PART_GROUPS_MAXIMUM groups.
 */
function countingParts(columns: SharedRowColumns, query: GroupScan, rangeFrom: number, rangeTo: number, recordedMaximum: number, bound: number): ((day: string) => string) | null {
  const rows = rangeTo - rangeFrom;
  if ((query.period !== null && query.period !== 'year') || rows <= recordedMaximum) return null;
  const keys = query.ranks.reduce((product, ranks) => product * ranks.length, 1);
  const days = dayOfRow(columns.created, rangeTo - 1) - dayOfRow(columns.created, rangeFrom) + 1;
  const quarters = Math.floor(days / 90) + 2;
  if (rows / quarters <= bound / 2 && keys * quarters <= PART_GROUPS_MAXIMUM) return quarterOf;
  return keys * (Math.floor(days / 28) + 2) <= PART_GROUPS_MAXIMUM ? PERIOD_KEY_OF.month : null;
}

/**
 * The group and days_to_close of matching rows in the order of the rows, as the walk found them, so
 * that their values are laid from them instead of finding every row's group again. When full, the
 * rows of the periods before the current one (whose groups are complete: the rows come in created_at
 * order) are laid and dropped; a period of more rows than it holds grows it to the scan's bound; past
 * that, every row it holds is laid as a run (the groups of the current period, not yet complete) and
 * dropped. The arrays are the thread's, kept for its next scans.
 */
class RecordedRows {
  groups = new Int32Array(1);
  values = new Uint16Array(1);
  /** The rows recorded and not yet laid. */
  length = 0;
  /** Where the current period's rows start among those recorded, and its first group. */
  periodFrom = 0;
  periodFirstGroup = 0;
  /** The rows the scan may hold at once now: at most its bound, and the arrays' length. */
  capacity = 0;
  /** The row the walk had reached when the recording was last full. */
  atRow = 0;
  private bound = 0;
  /** Lays the recorded rows [0, rows): `complete`, those of complete groups, below `groups`; else a run of the current period's. */
  private lay: RecordedLay = () => undefined;

  /** Starts a scan's recording: at most `bound` rows held at once (its created range's rows, or fewer). */
  reset(bound: number, lay: RecordedLay): void {
    Object.assign(this, { length: 0, periodFrom: 0, periodFirstGroup: 0, bound, lay });
    const first = Math.min(bound, RECORDED_ROWS_FIRST);
    if (this.groups.length < first) this.resize(first);
    this.capacity = Math.min(bound, this.groups.length);
  }

  /** Ends a scan's recording: its lay function, which holds the scan's arrays, dropped. */
  end(): void {
    this.lay = () => undefined;
  }

  /** Room for the next row, the recording full: the complete periods' rows laid, else more room, else every row laid as a run. */
  makeRoom(): void {
    const laid = this.periodFrom;
    if (laid > 0) {
      this.lay(laid, true, this.periodFirstGroup);
      this.groups.copyWithin(0, laid, this.length);
      this.values.copyWithin(0, laid, this.length);
      this.length -= laid;
      this.periodFrom = 0;
    } else if (this.capacity < this.bound) {
      if (this.groups.length < this.bound) this.resize(this.bound);
      this.capacity = this.bound;
    } else {
      this.lay(this.length, false, this.periodFirstGroup);
      this.length = 0;
    }
  }

  private resize(size: number): void {
    const groups = new Int32Array(Math.max(1, size));
    const values = new Uint16Array(Math.max(1, size));
    groups.set(this.groups.subarray(0, this.length));
    values.set(this.values.subarray(0, this.length));
    this.groups = groups;
    this.values = values;
  }
}
const recordedRows = new RecordedRows();
/** Lays the first `rows` recorded rows: `complete`, those of the groups below `groups`, every one complete; else a run of groups from `groups` on. */
type RecordedLay = (rows: number, complete: boolean, groups: number) => void;

/**
 * Lays the first `rows` recorded rows: each closed row's days_to_close at its group's next place
 * (`next`, moved on). Without a branch: a row not closed is written at the spare place at the end of
 * `values` (past the values, never read) and moves no place.
 */
function layRecorded(recorded: RecordedRows, rows: number, next: Float64Array, values: Uint16Array): void {
  const { groups, values: recordedValues } = recorded;
  const spare = values.length - 1;
  for (let i = 0; i < rows; i++) {
    const group = groups[i] as number;
    const value = recordedValues[i] as number;
    const place = next[group] as number;
    const isClosed = (value - NOT_CLOSED) >>> 31;
    values[place + (spare - place) * (1 - isClosed)] = value;
    next[group] = place + isClosed;
  }
}

/*
 * A walk over a block keeps what it carries from row to row in local variables, read from and
 * written back to the PassState once a block: variables of an enclosing function that a callback
 * changes would be read and written in memory at every row.
 */

/**
 * The walk over a block: each row's group found (made when new) and counted, and its group and
 * days_to_close recorded; the values OUTSIDE stands for listed apart.
 */
function countRows(walk: PassState, block: RowBlock, table: GroupTable, counts: GroupCounts, daysToClose: DaysToCloseColumn, recorded: RecordedRows, outsideGroups: Numbers, outsideValues: Numbers): void {
  const { rows, count, blockStart, first, second, secondFactor, hundredths } = block;
  let recordedGroups = recorded.groups;
  let recordedValues = recorded.values;
  let place = recorded.length;
  let full = recorded.capacity;
  let { nextDayStart, period, periodFirst, lastKey, lastPeriod, group } = walk;
  const { direct, base, secondCodes } = table.lookup;
  let opened = counts.opened.array;
  let closed = counts.closed.array;
  let within = counts.within.array;
  for (let i = 0; i < count; i++) {
    const row = rows[i] as number;
    const at = row - blockStart;
    if (row >= nextDayStart) {
      walk.periodAt(row, walk);
      if (walk.period !== period) {
        recorded.periodFrom = place;
        recorded.periodFirstGroup = periodFirst = counts.opened.length;
      }
      ({ nextDayStart, period } = walk);
    }
    if (place === full) {
      recorded.length = place;
      recorded.atRow = row;
      recorded.makeRoom();
      recordedGroups = recorded.groups;
      recordedValues = recorded.values;
      place = recorded.length;
      full = recorded.capacity;
    }
    const firstCode = first[at] as number;
    const secondCode = (second[at] as number) * secondFactor;
    const key = firstCode * CODE_SPAN + secondCode;
    // The key's latest group, of this scan when not negative, and of this period when not before its
    // first group (the groups are numbered as found, and a period's are found after the earlier ones'):
    // the period of the group is not read.
    const latest = direct === null ? -1 : (direct[firstCode * secondCodes + secondCode] as number) - base;
    if (latest >= periodFirst) group = latest;
    else if (direct !== null || key !== lastKey || period !== lastPeriod) {
      group = table.find(firstCode, secondCode, period);
      if (group === counts.opened.length) {
        counts.opened.push(0);
        counts.closed.push(0);
        counts.within.push(0);
        opened = counts.opened.array;
        closed = counts.closed.array;
        within = counts.within.array;
      }
      lastKey = key;
      lastPeriod = period;
    }
    opened[group] = (opened[group] as number) + 1;
    const value = hundredths[at] as number;
    // Counted without a branch (whether a request is closed, or within 14 days, follows no pattern a
    // processor could predict): NOT_CLOSED and OUTSIDE stand above 1,400.
    closed[group] = (closed[group] as number) + ((value - NOT_CLOSED) >>> 31);
    within[group] = (within[group] as number) + (((WITHIN_HUNDREDTHS - value) >>> 31) ^ 1);
    recordedGroups[place] = group;
    recordedValues[place] = value;
    place += 1;
    if (value === OUTSIDE) {
      // The value OUTSIDE stands for is within 14 days when below 0.
      const hundredthsOutside = outsideHundredthsOf(daysToClose, row);
      if (hundredthsOutside <= WITHIN_HUNDREDTHS) within[group] = (within[group] as number) + 1;
      outsideGroups.push(group);
      outsideValues.push(hundredthsOutside);
    }
  }
  recorded.length = place;
  Object.assign(walk, { nextDayStart, period, periodFirst, lastKey, lastPeriod, group });
}

/**
 * The numbers 0 to count - 1 in the order of their keys (`keys`: first code * 65,536 + second), those
 * of equal keys in their own order: a stable sort by the second code, then by the first, each by
 * counting (linear).
 */
function inKeyOrder(keys: ArrayLike<number>, count: number): Int32Array {
  let order = new Int32Array(count);
  for (let g = 0; g < count; g++) order[g] = g;
  let sorted = new Int32Array(count);
  const starts = new Int32Array(CODE_SPAN + 1);
  for (const codeOf of [(key: number) => key % CODE_SPAN, (key: number) => Math.floor(key / CODE_SPAN)]) {
    starts.fill(0);
    for (let g = 0; g < count; g++) {
      const code = codeOf(keys[g] as number) + 1;
      starts[code] = (starts[code] as number) + 1;
    }
    for (let code = 0; code < CODE_SPAN; code++) starts[code + 1] = (starts[code + 1] as number) + (starts[code] as number);
    for (let i = 0; i < count; i++) {
      const g = order[i] as number;
      const code = codeOf(keys[g] as number);
      const at = starts[code] as number;
      sorted[at] = g;
      starts[code] = at + 1;
    }
    [order, sorted] = [sorted, order];
  }
  return order;
}

/**
 * The groups of the matching rows, ordered and limited, with the numbers of those left out (see the
 * file's comment): counted by value when the grouping has very few cells (`valueCounted`,
 * group-value-counts.ts), else recorded, keys looked up directly up to `directKeys` pairs of
 * codes, and up to `recordedMaximum` rows recorded at once.
 */
export function scanGroups(columns: SharedRowColumns, scan: RowColumnScan, query: GroupScan, directKeys = DIRECT_KEYS, recordedMaximum = RECORDED_ROWS_MAXIMUM, valueCounted = VALUE_COUNTED): PackedGroups {
  const cells = valueCountedCells(columns, scan, query, valueCounted);
  const found = cells > 0 ? countGroupsByValue(columns, scan, query, cells) : recordGroups(columns, scan, query, directKeys, recordedMaximum);
  try {
    return packedAnswer(query, found);
  } finally {
    found.release();
  }
}

/** The groups of the matching rows as the recording walks find them (see the file's comment). */
function recordGroups(columns: SharedRowColumns, scan: RowColumnScan, query: GroupScan, directKeys: number, recordedMaximum: number): FoundGroups {
  const { daysToClose, bytes } = columns;
  const stored = query.by.map((column) => columns.codes[column]);
  const [rangeFrom, rangeTo] = rowRange(columns, scan);
  const rangeRows = rangeTo - rangeFrom;
  // A recording grows past its first size only for a range whose every row it could hold: a longer
  // one (40 million requests) is counted by parts of years where it can be (countingParts), and lays
  // a period of more rows than that size in runs, rather than keeping the largest arrays per thread.
  const bound = rangeRows <= recordedMaximum ? rangeRows : Math.min(recordedMaximum, RECORDED_ROWS_FIRST);
  const parts = countingParts(columns, query, rangeFrom, rangeTo, recordedMaximum, bound);
  const byParts = parts !== null;
  const keyOfDay = parts ?? (query.period === null ? null : PERIOD_KEY_OF[query.period]);
  // The periods the walk counts by (parts of years, when counted by parts), numbered as found, and those the answer shows.
  const { periods, shownPeriods, shownOf, periodAt } = periodNumbering(columns.created, keyOfDay, query.period === null ? () => '' : PERIOD_KEY_OF[query.period]);
  const table = new GroupTable(query.ranks[1]?.length ?? 1, query.ranks[0]?.length ?? 1, directKeys);

  const counts: GroupCounts = { opened: new Numbers(), closed: new Numbers(), within: new Numbers() };
  const outsideGroups = new Numbers();
  const outsideValues = new Numbers();

  /** The walk over the matching rows: finds and counts the groups, records the rows. */
  const walkRows = (): void => {
    const walk: PassState = { ...firstPeriodWalk(keyOfDay), periodFirst: 0, lastKey: -1, lastPeriod: -1, group: -1, periodAt };
    forEachMatchingRow(columns, scan, (rows, count, blockStart, blockEnd) => {
      const first = readRows(bytes, stored[0] as StoredArray, blockStart, blockEnd, GROUP_USES[0]);
      const second = stored.length > 1 ? readRows(bytes, stored[1] as StoredArray, blockStart, blockEnd, GROUP_USES[1]) : first;
      const hundredths = readRows(bytes, daysToClose.hundredths, blockStart, blockEnd, DAYS_TO_CLOSE_USE) as Uint16Array;
      const block: RowBlock = { rows, count, blockStart, first, second, secondFactor: stored.length > 1 ? 1 : 0, hundredths };
      countRows(walk, block, table, counts, daysToClose, recordedRows, outsideGroups, outsideValues);
    });
  };

  // The groups as they were found: in the order of their periods (the rows come in created_at order), so
  // a period's groups follow each other. Their values are laid in that order too, from the recorded rows,
  // a period's groups once complete: a group's are values[start[g], start[g + 1]), and the lays write
  // near where they wrote before. A period of more rows than the recording may hold (no period at all,
  // over 40 million requests) is laid as it goes: each run of its rows a slice per group
  // (`runSlices`), the group's values laid when its period is complete only the rest.
  const laidStart = new Numbers();
  /** Where each group's next value goes while a lay runs. */
  const laidNext = new Numbers();
  /** Each group's values laid in runs, and the runs' slices: group, from, to. */
  const runLaid = new Map<number, number>();
  const runSlices = new Numbers();
  let laidEnd = 0;
  let laidValues = scanValues(1);
  const lay: RecordedLay = (rows, complete, groups) => {
    const keep = laidEnd;
    if (complete) {
      const runs = runLaid.size > 0;
      for (let g = laidStart.length; g < groups; g++) {
        laidStart.push(laidEnd);
        if (g < laidNext.length) laidNext.array[g] = laidEnd;
        else laidNext.push(laidEnd);
        laidEnd += (counts.closed.array[g] as number) - (runs ? (runLaid.get(g) ?? 0) : 0);
      }
    } else {
      const found = table.count;
      while (laidNext.length < found) laidNext.push(0);
      // A run: the closed rows of each group (from `groups`, the current period's first) counted, then a slice each.
      const runCounts = new Int32Array(found - groups);
      const { groups: recordedGroups, values: recordedValues } = recordedRows;
      for (let i = 0; i < rows; i++) {
        const at = (recordedGroups[i] as number) - groups;
        runCounts[at] = (runCounts[at] as number) + (((recordedValues[i] as number) - NOT_CLOSED) >>> 31);
      }
      runCounts.forEach((count, at) => {
        if (count === 0) return;
        const g = groups + at;
        runSlices.push(g);
        runSlices.push(laidEnd);
        runSlices.push(laidEnd + count);
        runLaid.set(g, (runLaid.get(g) ?? 0) + count);
        laidNext.array[g] = laidEnd;
        laidEnd += count;
      });
    }
    const needed = laidEnd + 1;
    if (laidValues.length < needed) {
      // Grown to the values the whole range would hold at the rate so far (its rows at most), so that
      // a long scan grows its array once or twice, not leaving an array of garbage at every step.
      // Counted by parts, the range's rows at once.
      const walked = Math.max(1, recordedRows.atRow - rangeFrom);
      const expected = byParts ? rangeRows + 1 : Math.ceil((needed * 1.05 * rangeRows) / walked);
      laidValues = grownValues(laidValues, Math.max(needed, Math.min(expected, rangeRows + 1)), keep);
    }
    layRecorded(recordedRows, rows, laidNext.array, laidValues);
  };
  let groupCount = 0;
  try {
    recordedRows.reset(Math.max(1, bound), lay);
    walkRows();
    groupCount = table.count;
    // The walk has passed every row of the range: every group is complete.
    recordedRows.atRow = rangeTo;
    lay(recordedRows.length, true, groupCount);
  } finally {
    // The recording is the thread's: it must not keep this scan's arrays (its `lay`) until the next one.
    recordedRows.end();
  }
  const values = laidValues;
  laidStart.push(laidEnd);
  const start = laidStart.array;
  /** The end of a group's values laid whole (start[g + 1] unless runs laid some of them, or of the next group's). */
  const laidWholeEnd = runLaid.size === 0 ? (g: number): number => start[g + 1] as number : (g: number): number => (start[g] as number) + (counts.closed.array[g] as number) - (runLaid.get(g) ?? 0);
  // Each group's run slices: runSlices[3 i, 3 i + 3) for i in slicesOf.order[slicesOf.from[g], slicesOf.from[g + 1]).
  const slicesOf = runLaid.size === 0 ? null : itemsBySet(Int32Array.from({ length: runSlices.length / 3 }, (_, i) => runSlices.array[3 * i] as number), runSlices.length / 3, groupCount);

  const { outside, outsideFrom } = outsideBySet(outsideGroups.array, outsideValues.array, outsideGroups.length, groupCount);
  /** The middles and p90 of sets of groups, each selected (or counted) in its groups' parts of `values`, left in another order there. */
  const rankSets = (setOf: Int32Array, setCount: number, into: Float64Array): void => {
    const { from: setFrom, order: setGroups } = itemsBySet(setOf, groupCount, setCount);
    const ranges = new Numbers(8);
    const setOutside: number[] = [];
    /** Adds values[from, to) to the set's ranges: ranges that follow each other are one. */
    const addRange = (from: number, to: number): void => {
      if (ranges.length > 0 && ranges.array[ranges.length - 1] === from) ranges.array[ranges.length - 1] = to;
      else if (to > from) {
        ranges.push(from);
        ranges.push(to);
      }
    };
    for (let set = 0; set < setCount; set++) {
      const first = setFrom[set] as number;
      const end = setFrom[set + 1] as number;
      const only = setGroups[first] as number;
      if (end - first === 1 && (slicesOf === null || slicesOf.from[only] === slicesOf.from[only + 1])) {
        rangeMiddlesAndP90(values, start[only] as number, laidWholeEnd(only), outside, outsideFrom[only] as number, outsideFrom[only + 1] as number, into, 3 * set);
        continue;
      }
      ranges.length = 0;
      setOutside.length = 0;
      for (let at = first; at < end; at++) {
        const g = setGroups[at] as number;
        if (slicesOf !== null) {
          for (let i = slicesOf.from[g] as number; i < (slicesOf.from[g + 1] as number); i++) {
            const slice = 3 * (slicesOf.order[i] as number);
            addRange(runSlices.array[slice + 1] as number, runSlices.array[slice + 2] as number);
          }
        }
        addRange(start[g] as number, laidWholeEnd(g));
        for (let o = outsideFrom[g] as number; o < (outsideFrom[g + 1] as number); o++) setOutside.push(outside[o] as number);
      }
      middlesAndP90(values, unionSet(ranges, setOutside), into, 3 * set);
    }
  };
  const shownPeriodOf = new Float64Array(groupCount);
  for (let g = 0; g < groupCount; g++) shownPeriodOf[g] = byParts ? (shownOf[table.periods.array[g] as number] as number) : (table.periods.array[g] as number);
  return {
    count: groupCount,
    shownPeriodOf,
    keyOf: table.keyOf.array,
    keyCodes: table.keyCodes.array,
    keyCount: table.keyCodes.length,
    opened: counts.opened.array,
    closed: counts.closed.array,
    within: counts.within.array,
    shownPeriods: byParts ? shownPeriods : periods,
    rankSets,
    release: () => undefined,
  };
}

/**
 * The answer of the groups found: the keys ordered by the answer's `order` (ties by key), the first
 * `limit` kept with their groups, a row per key and period shown, and the numbers of the groups left
 * out, per period. The middles and p90 are ranked only for what the answer shows or orders by.
 */
function packedAnswer(query: GroupScan, found: FoundGroups): PackedGroups {
  const { count: groupCount, keyOf, keyCount, shownPeriodOf } = found;
  // The keys (numbered as found), each with its groups in time order (keyGroups[keyFrom[k], keyFrom[k + 1]))
  // and its numbers over the whole range: its group's without a period; with one, summed (and, for an
  // order by median or p90, ranked over its groups' values together).
  const keyFrom = new Int32Array(keyCount + 1);
  for (let g = 0; g < groupCount; g++) keyFrom[(keyOf[g] as number) + 1] = (keyFrom[(keyOf[g] as number) + 1] as number) + 1;
  for (let k = 0; k < keyCount; k++) keyFrom[k + 1] = (keyFrom[k + 1] as number) + (keyFrom[k] as number);
  const keyGroups = new Int32Array(groupCount);
  const keyNumbers = new Float64Array(keyCount * PACKED_FIELDS);
  const filled = keyFrom.slice(0, keyCount);
  for (let g = 0; g < groupCount; g++) {
    const k = keyOf[g] as number;
    keyGroups[filled[k] as number] = g;
    filled[k] = (filled[k] as number) + 1;
    keyNumbers[k * PACKED_FIELDS + 1] = (keyNumbers[k * PACKED_FIELDS + 1] as number) + (found.opened[g] as number);
    keyNumbers[k * PACKED_FIELDS + 2] = (keyNumbers[k * PACKED_FIELDS + 2] as number) + (found.closed[g] as number);
    keyNumbers[k * PACKED_FIELDS + 3] = (keyNumbers[k * PACKED_FIELDS + 3] as number) + (found.within[g] as number);
  }
  const bySelection = query.order === 'median_days_to_close' || query.order === 'p90_days_to_close';
  if (bySelection) {
    const keySets = new Int32Array(groupCount);
    for (let g = 0; g < groupCount; g++) keySets[g] = keyOf[g] as number;
    const keyRanks = new Float64Array(keyCount * 3);
    found.rankSets(keySets, keyCount, keyRanks);
    for (let k = 0; k < keyCount; k++) keyNumbers.set(keyRanks.subarray(3 * k, 3 * k + 3), k * PACKED_FIELDS + 4);
  }

  // The order: the measure (none last, whatever the direction), then the key's values in order (null last).
  const keys = inKeyOrder(found.keyCodes, keyCount);
  const measures = new Float64Array(keyCount);
  const firstRanks = new Float64Array(keyCount);
  const secondRanks = new Float64Array(keyCount);
  const [ranks1, ranks2] = query.ranks;
  for (let at = 0; at < keyCount; at++) {
    const k = keys[at] as number;
    const codes = found.keyCodes[k] as number;
    measures[at] = measureOf(query.order, keyNumbers, k * PACKED_FIELDS) ?? Number.NaN;
    firstRanks[at] = ranks1 === undefined ? 0 : (ranks1[Math.floor(codes / CODE_SPAN)] as number);
    secondRanks[at] = ranks2 === undefined ? 0 : (ranks2[codes % CODE_SPAN] as number);
  }
  const direction = query.descending ? -1 : 1;
  const order = Array.from({ length: keyCount }, (_, at) => at);
  order.sort((a, b) => {
    const x = measures[a] as number;
    const y = measures[b] as number;
    // Keys without the measure (NaN: nothing closed) come last, in the order of their keys as the others tie.
    const xMissing = Number.isNaN(x);
    const yMissing = Number.isNaN(y);
    if (xMissing !== yMissing) return xMissing ? 1 : -1;
    if (!xMissing && x !== y) return (x - y) * direction;
    return (firstRanks[a] as number) - (firstRanks[b] as number) || (secondRanks[a] as number) - (secondRanks[b] as number);
  });
  const kept = order.slice(0, query.limit).map((at) => keys[at] as number);

  // The kept keys' groups, each key's in time order, a row per period shown (counted by parts: the
  // key's groups that follow each other in it); every other group is counted in its period's others.
  // Each row and each period's others is a set of groups whose middles and p90 are ranked together,
  // except the row of a key shown in one row, whose numbers the order has ranked already.
  /** The end of the key's groups from keyGroups[at] shown in the same period. */
  const shownEnd = (at: number, end: number): number => {
    const shown = shownPeriodOf[keyGroups[at] as number] as number;
    let next = at + 1;
    while (next < end && shownPeriodOf[keyGroups[next] as number] === shown) next++;
    return next;
  };
  /** The key whose ranks each row takes, or -1: the row's own. */
  const rowKeys: number[] = [];
  for (const k of kept) {
    const first = keyFrom[k] as number;
    const end = keyFrom[k + 1] as number;
    const oneRow = shownEnd(first, end) === end;
    for (let at = first; at < end; at = shownEnd(at, end)) rowKeys.push(bySelection && oneRow ? k : -1);
  }
  const rowCount = rowKeys.length;
  const periodCount = Math.max(1, found.shownPeriods.length);
  const setOf = new Int32Array(groupCount);
  for (let g = 0; g < groupCount; g++) setOf[g] = rowCount + (shownPeriodOf[g] as number);
  const width = query.by.length;
  const codes = new Int32Array(rowCount * width);
  const rowsOut = new Float64Array(rowCount * PACKED_FIELDS);
  let row = 0;
  for (const k of kept) {
    const end = keyFrom[k + 1] as number;
    const key = found.keyCodes[k] as number;
    for (let from = keyFrom[k] as number; from < end; row++) {
      const next = shownEnd(from, end);
      const into = row * PACKED_FIELDS;
      rowsOut[into] = shownPeriodOf[keyGroups[from] as number] as number;
      for (let at = from; at < next; at++) {
        const g = keyGroups[at] as number;
        setOf[g] = rowKeys[row] === -1 ? row : -1;
        rowsOut[into + 1] = (rowsOut[into + 1] as number) + (found.opened[g] as number);
        rowsOut[into + 2] = (rowsOut[into + 2] as number) + (found.closed[g] as number);
        rowsOut[into + 3] = (rowsOut[into + 3] as number) + (found.within[g] as number);
      }
      from = next;
      codes[row * width] = Math.floor(key / CODE_SPAN);
      if (width > 1) codes[row * width + 1] = key % CODE_SPAN;
    }
  }
  const setRanks = new Float64Array((rowCount + periodCount) * 3);
  found.rankSets(setOf, rowCount + periodCount, setRanks);
  for (let r = 0; r < rowCount; r++) {
    const k = rowKeys[r] as number;
    rowsOut.set(k === -1 ? setRanks.subarray(3 * r, 3 * r + 3) : keyNumbers.subarray(k * PACKED_FIELDS + 4, (k + 1) * PACKED_FIELDS), r * PACKED_FIELDS + 4);
  }

  // The groups left out, per period shown (numbered from 0 in time order): their counts summed.
  const otherCounts = new Float64Array(periodCount * 3);
  for (let g = 0; g < groupCount; g++) {
    if ((setOf[g] as number) < rowCount) continue;
    const at = 3 * (shownPeriodOf[g] as number);
    otherCounts[at] = (otherCounts[at] as number) + (found.opened[g] as number);
    otherCounts[at + 1] = (otherCounts[at + 1] as number) + (found.closed[g] as number);
    otherCounts[at + 2] = (otherCounts[at + 2] as number) + (found.within[g] as number);
  }
  const others = new Numbers(PACKED_FIELDS);
  for (let period = 0; period < periodCount; period++) {
    if ((otherCounts[3 * period] as number) === 0) continue;
    others.push(period);
    for (let f = 0; f < 3; f++) others.push(otherCounts[3 * period + f] as number);
    for (let f = 0; f < 3; f++) others.push(setRanks[3 * (rowCount + period) + f] as number);
  }
  return { periods: found.shownPeriods.join('\n'), codes, numbers: rowsOut, others: others.array.slice(0, others.length) };
}
