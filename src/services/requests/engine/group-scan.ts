/**
 * The numbers of `/v1/stats/groups`: the matching requests grouped by the values of one or two coded
 * columns, optionally per day, ISO week, month or year, counted by a walk worker over the row columns
 * (row-column-scan.ts), never on the event loop.
 *
 * A scan passes twice over the selected rows: the first counts each group's requests (and finds the
 * groups), recording each row's group and days_to_close (RecordedRows); the second lays every closed
 * request's days_to_close (in hundredths) into one array where each group's values are contiguous,
 * from the recorded rows (or, past what a thread records, by walking the rows again: a grouping by
 * year or without a period over more rows is counted by quarter or month and merged instead, see
 * countingParts), the groups in the order they were found: that of their periods (the rows come in
 * created_at order), so the second pass writes near where it wrote before, and a period's groups, and
 * their values, follow each other. The median (mean of the two middle values) and the 90th percentile
 * (nearest rank: the value at position ceil(0.9 n) of the sorted values) of a group are then exact
 * selections in its part of that array (a large group's by counting its values' bytes), never a sort
 * of every value, and never an approximation, made only for the groups the answer shows (or orders
 * by); those of several groups (a key over its periods, the groups left out) are counted or selected
 * from their parts, never copied whole.
 *
 * The array holds each value in two bytes, as the row columns store it (OUTSIDE for the few that two
 * bytes do not hold, which the scan lists apart per group: OUTSIDE is above every value two bytes hold,
 * so the ranks among those few are read from the list). It is the thread's, kept for its next scans,
 * as are the recorded rows: a scan's memory is at most 2 bytes per matching closed request of the
 * largest scan so far, 6 per matching row up to RECORDED_ROWS_MAXIMUM, plus its groups, and leaves no
 * garbage that grows with the rows. A row finds its group in a table indexed by
 * its codes (the key's latest period), so no row is hashed; a new group's key is that latest group's,
 * so the keys are numbered as they are found too, and every step after the passes reads the groups in
 * sequence, never gathering them in another order (a grouping by day may find two million).
 *
 * The worker orders the keys (the answer's `order`, ties by key), keeps the first `limit`, and counts
 * the groups left out (`others`) in the same pass: their median needs their values, which only the
 * worker holds.
 */
import { DAY_SECONDS, medianOfMiddles, shareClosedWithin } from '../../../snapshot/index.js';
import type { GroupMeasure, GroupPeriod, GroupScan } from './group-query.js';
import { BUCKET_KEY_OF } from './period-stats.js';
import { grownValues, middlesAndP90, rangeMiddlesAndP90, scanValues, type ValueSet } from './value-ranks.js';
import { dayOfRow, DAYS_TO_CLOSE_USE, WITHIN_HUNDREDTHS, GROUP_USES, forEachMatchingRow, NOT_CLOSED, OUTSIDE, outsideHundredthsOf, readRows, rowRange, type CodeArray, type DaysToCloseColumn, type RowColumnScan, type SharedRowColumns, type StoredArray } from './row-column-scan.js';

/** The period key of a day: the day, its ISO week and month as the weekly and monthly numbers key them, its year. */
export const PERIOD_KEY_OF: Readonly<Record<GroupPeriod, (day: string) => string>> = {
  ...BUCKET_KEY_OF,
  year: (day) => day.slice(0, 4),
};

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

/** Codes are below 2^16: a key is (first code, second code) in 32 bits. */
const CODE_SPAN = 65_536;


/** The set of several groups (`ranges`: theirs; `outside`: their values that two bytes do not hold, in any order), left as it is. */
function unionSet(ranges: Numbers, outside: number[]): ValueSet {
  const sortedOutside = Int32Array.from(outside).sort();
  return { ranges: ranges.array, rangeCount: ranges.length / 2, inPlace: false, outside: sortedOutside, outsideFrom: 0, outsideTo: sortedOutside.length };
}

/**
 * The values that two bytes do not hold of each group, listed in the order of the rows (`groups`: the
 * group of each, `values`: its value), by group: outside[outsideFrom[g], outsideFrom[g + 1]), sorted.
 */
function outsideByGroup(groups: Numbers, values: Numbers, groupCount: number): { outside: Int32Array; outsideFrom: Int32Array } {
  const outsideFrom = new Int32Array(groupCount + 1);
  const outside = new Int32Array(groups.length);
  if (groups.length === 0) return { outside, outsideFrom };
  for (let i = 0; i < groups.length; i++) {
    const g = (groups.array[i] as number) + 1;
    outsideFrom[g] = (outsideFrom[g] as number) + 1;
  }
  for (let g = 0; g < groupCount; g++) outsideFrom[g + 1] = (outsideFrom[g + 1] as number) + (outsideFrom[g] as number);
  const filled = outsideFrom.slice(0, groupCount);
  for (let i = 0; i < groups.length; i++) {
    const g = groups.array[i] as number;
    outside[filled[g] as number] = values.array[i] as number;
    filled[g] = (filled[g] as number) + 1;
  }
  for (let g = 0; g < groupCount; g++) if ((outsideFrom[g + 1] as number) - (outsideFrom[g] as number) > 1) outside.subarray(outsideFrom[g], outsideFrom[g + 1]).sort();
  return { outside, outsideFrom };
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

/** A key: its groups (in time order), codes and numbers over the whole range. */
interface KeyRange {
  /** Its groups: keyGroups[first, end), in time order. */
  first: number;
  end: number;
  /** Its codes: first * 65,536 + second. */
  key: number;
  numbers: Float64Array;
}

/** A growable list of numbers (in a Float64Array, or an Int32Array for `Numbers.int32`). */
class Numbers<A extends Float64Array<ArrayBuffer> | Int32Array<ArrayBuffer> = Float64Array<ArrayBuffer>> {
  array: A;
  length = 0;

  constructor(
    capacity = 256,
    private readonly make: (length: number) => A = (length) => new Float64Array(length) as A,
  ) {
    this.array = make(capacity);
  }

  /** A list of integers of 32 bits. */
  static int32(capacity = 256): Numbers<Int32Array<ArrayBuffer>> {
    return new Numbers(capacity, (length) => new Int32Array(length));
  }

  push(value: number): void {
    if (this.length === this.array.length) {
      const larger = this.make(this.array.length * 2);
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
interface PassState {
  /** The first row of the next day (the period may change there); +Infinity without a period. */
  nextDayStart: number;
  period: number;
  /** The first group of the period: a key's latest group is of the period when it is this one or later. */
  periodFirst: number;
  lastKey: number;
  lastPeriod: number;
  group: number;
  /** Sets `period` and `nextDayStart` for the row at or after nextDayStart. */
  periodAt: (row: number, walk: PassState) => void;
}

/** A block's matching rows and the columns a pass reads, from the block's first row. */
interface RowBlock {
  rows: Int32Array;
  count: number;
  blockStart: number;
  first: CodeArray;
  /** The second column's codes (the first's again for one column, with secondFactor 0). */
  second: CodeArray;
  secondFactor: number;
  hundredths: Uint16Array;
}

/** Each group's opened, closed and closed within 14 days, by its number. */
interface GroupCounts {
  opened: Numbers;
  closed: Numbers;
  within: Numbers;
}

/** The values of a group's first chunk, and of its largest: a group's chunks double from the first up to that. */
const FIRST_CHUNK = 4;
const CHUNK_MAXIMUM = 4_096;

/**
 * Each group's closed values (days_to_close in hundredths, as the row columns store them), laid by the
 * walk as it meets them, in chunks of one array: a group's first chunk is given when the group is
 * found, and its next one when a value fills it, twice as large (up to `chunkMaximum`), so that a
 * group's values lie in a few ranges of the array (a large group's in ranges of chunkMaximum), and
 * the array holds at most about twice the values. The array is the thread's, kept for its next scans,
 * or the scan's own past what a thread keeps (value-ranks.ts, scanValues); grown to what the whole
 * range would hold at the rate so far when full, so that a long scan grows it once or twice.
 */
class LaidValues {
  values: Uint16Array;
  /** The places given to chunks: values[0, used). */
  used = 0;
  /** Each group's next place, the end of its current chunk, and that chunk's size. */
  readonly next = Numbers.int32();
  readonly chunkEnd = Numbers.int32();
  readonly chunkSize = Numbers.int32();
  /** The chunks in the order they were given: each one's group, start and end. */
  readonly chunkGroups = Numbers.int32();
  readonly chunkStarts = Numbers.int32();
  readonly chunkEnds = Numbers.int32();

  constructor(
    private readonly rangeFrom: number,
    private readonly rangeRows: number,
    private readonly firstChunk: number,
    private readonly chunkMaximum: number,
  ) {
    this.values = scanValues(Math.min(rangeRows, 1 << 16) + firstChunk);
  }

  /** A new group's first chunk (at `row` of the walk). */
  addGroup(row: number): void {
    const group = this.next.length;
    this.next.push(0);
    this.chunkEnd.push(0);
    this.chunkSize.push(0);
    this.addChunk(group, this.firstChunk, row);
  }

  /** The group's next chunk, its current one full (at `row` of the walk). */
  grow(group: number, row: number): void {
    this.addChunk(group, Math.min(this.chunkMaximum, 2 * (this.chunkSize.array[group] as number)), row);
  }

  /**
   * Each group's ranges of values, in the order they were laid: ranges[2 r] to ranges[2 r + 1] for r
   * from rangeFrom[g] to rangeFrom[g + 1] (a group's last chunk up to its next place).
   */
  ranges(groupCount: number): { ranges: Float64Array; rangeFrom: Int32Array } {
    const chunks = this.chunkGroups.length;
    const groups = this.chunkGroups.array;
    const starts = this.chunkStarts.array;
    const ends = this.chunkEnds.array;
    const rangeFrom = new Int32Array(groupCount + 1);
    for (let c = 0; c < chunks; c++) rangeFrom[(groups[c] as number) + 1] = (rangeFrom[(groups[c] as number) + 1] as number) + 1;
    for (let g = 0; g < groupCount; g++) rangeFrom[g + 1] = (rangeFrom[g + 1] as number) + (rangeFrom[g] as number);
    const filled = rangeFrom.slice(0, groupCount);
    const ranges = new Float64Array(2 * chunks);
    for (let c = 0; c < chunks; c++) {
      const g = groups[c] as number;
      const r = filled[g] as number;
      filled[g] = r + 1;
      ranges[2 * r] = starts[c] as number;
      // A group's last chunk ends at its next place; the others are full.
      ranges[2 * r + 1] = r + 1 === (rangeFrom[g + 1] as number) ? (this.next.array[g] as number) : (ends[c] as number);
    }
    return { ranges, rangeFrom };
  }

  private addChunk(group: number, size: number, row: number): void {
    const needed = this.used + size;
    if (needed > this.values.length) {
      // To what the whole range would take at the rate so far (at most twice its rows, a group's chunks
      // being at most twice its values, plus a first chunk per group), and at least a quarter more, so
      // that a long scan grows its array once or twice, never by a chunk at a time.
      const walked = Math.max(1, row - this.rangeFrom);
      const expected = Math.ceil((needed * 1.1 * this.rangeRows) / walked);
      const most = 2 * this.rangeRows + this.next.length * this.firstChunk + this.chunkMaximum;
      this.values = grownValues(this.values, Math.max(Math.ceil(needed * 1.25), Math.min(expected, most)), this.used);
    }
    this.chunkGroups.push(group);
    this.chunkStarts.push(this.used);
    this.chunkEnds.push(needed);
    this.next.array[group] = this.used;
    this.chunkEnd.array[group] = needed;
    this.chunkSize.array[group] = size;
    this.used = needed;
  }
}

/*
 * A walk over a block keeps what it carries from row to row in local variables, read from and
 * written back to the PassState once a block: variables of an enclosing function that a callback
 * changes would be read and written in memory at every row.
 */

/**
 * The walk over a block: each row's group found (made when new, with its first chunk of values) and
 * counted, and its days_to_close laid in its group's chunk when closed; the values OUTSIDE stands for
 * listed apart.
 */
function countRows(walk: PassState, block: RowBlock, table: GroupTable, counts: GroupCounts, daysToClose: DaysToCloseColumn, laid: LaidValues, outsideGroups: Numbers, outsideValues: Numbers): void {
  const { rows, count, blockStart, first, second, secondFactor, hundredths } = block;
  let { nextDayStart, period, periodFirst, lastKey, lastPeriod, group } = walk;
  const { direct, base, secondCodes } = table.lookup;
  let opened = counts.opened.array;
  let closed = counts.closed.array;
  let within = counts.within.array;
  let values = laid.values;
  let next = laid.next.array;
  let chunkEnd = laid.chunkEnd.array;
  for (let i = 0; i < count; i++) {
    const row = rows[i] as number;
    const at = row - blockStart;
    if (row >= nextDayStart) {
      walk.periodAt(row, walk);
      if (walk.period !== period) periodFirst = counts.opened.length;
      ({ nextDayStart, period } = walk);
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
        laid.addGroup(row);
        values = laid.values;
        next = laid.next.array;
        chunkEnd = laid.chunkEnd.array;
      }
      lastKey = key;
      lastPeriod = period;
    }
    opened[group] = (opened[group] as number) + 1;
    const value = hundredths[at] as number;
    // Counted without a branch (whether a request is closed, or within 14 days, follows no pattern a
    // processor could predict): NOT_CLOSED and OUTSIDE stand above 1,400.
    const isClosed = (value - NOT_CLOSED) >>> 31;
    closed[group] = (closed[group] as number) + isClosed;
    within[group] = (within[group] as number) + (((WITHIN_HUNDREDTHS - value) >>> 31) ^ 1);
    // Laid without a branch too: every value is written at its group's next place, which moves on
    // only past a closed one (the place is always in the group's chunk: a full chunk is followed at once).
    const place = next[group] as number;
    values[place] = value;
    next[group] = place + isClosed;
    if (place + isClosed === chunkEnd[group]) {
      laid.grow(group, row);
      values = laid.values;
      next = laid.next.array;
      chunkEnd = laid.chunkEnd.array;
    }
    if (value === OUTSIDE) {
      // The value OUTSIDE stands for is within 14 days when below 0.
      const hundredthsOutside = outsideHundredthsOf(daysToClose, row);
      if (hundredthsOutside <= WITHIN_HUNDREDTHS) within[group] = (within[group] as number) + 1;
      outsideGroups.push(group);
      outsideValues.push(hundredthsOutside);
    }
  }
  Object.assign(walk, { nextDayStart, period, periodFirst, lastKey, lastPeriod, group });
}

/**
 * The numbers 0 to count - 1 in the order of their keys (`keys`: first code * 65,536 + second), those
 * of equal keys in their own order: a stable sort by the second code, then by the first, each by
 * counting (linear).
 */
function inKeyOrder(keys: Float64Array, count: number): Int32Array {
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
 * file's comment); keys are looked up directly up to `directKeys` pairs of codes, and a group's
 * values laid in chunks from `firstChunk` up to `chunkMaximum` values.
 */
export function scanGroups(columns: SharedRowColumns, scan: RowColumnScan, query: GroupScan, directKeys = DIRECT_KEYS, firstChunk = FIRST_CHUNK, chunkMaximum = CHUNK_MAXIMUM): PackedGroups {
  const { created, daysToClose, bytes } = columns;
  const stored = query.by.map((column) => columns.codes[column]);
  const [rangeFrom, rangeTo] = rowRange(columns, scan);
  const keyOfDay = query.period === null ? null : PERIOD_KEY_OF[query.period];
  /** The periods, numbered as found. */
  const periods: string[] = [];
  const periodIndex = new Map<string, number>();
  const table = new GroupTable(query.ranks[1]?.length ?? 1, query.ranks[0]?.length ?? 1, directKeys);

  const counts: GroupCounts = { opened: new Numbers(), closed: new Numbers(), within: new Numbers() };
  const laid = new LaidValues(rangeFrom, rangeTo - rangeFrom, firstChunk, chunkMaximum);
  const outsideGroups = new Numbers();
  const outsideValues = new Numbers();
  /** The period of a row at or after the next day's start: its day's key, numbered as found. */
  const periodAt = (row: number, walk: PassState): void => {
    const day = dayOfRow(created, row);
    walk.nextDayStart = created.dayStarts[day + 1] as number;
    const key = (keyOfDay as (day: string) => string)(new Date(day * DAY_SECONDS * 1000).toISOString().slice(0, 10));
    let index = periodIndex.get(key);
    if (index === undefined) {
      index = periods.length;
      periods.push(key);
      periodIndex.set(key, index);
    }
    walk.period = index;
  };

  const walk: PassState = { nextDayStart: keyOfDay === null ? Number.POSITIVE_INFINITY : 0, period: 0, periodFirst: 0, lastKey: -1, lastPeriod: -1, group: -1, periodAt };
  forEachMatchingRow(columns, scan, (rows, count, blockStart, blockEnd) => {
    const first = readRows(bytes, stored[0] as StoredArray, blockStart, blockEnd, GROUP_USES[0]);
    const second = stored.length > 1 ? readRows(bytes, stored[1] as StoredArray, blockStart, blockEnd, GROUP_USES[1]) : first;
    const hundredths = readRows(bytes, daysToClose.hundredths, blockStart, blockEnd, DAYS_TO_CLOSE_USE) as Uint16Array;
    const block: RowBlock = { rows, count, blockStart, first, second, secondFactor: stored.length > 1 ? 1 : 0, hundredths };
    countRows(walk, block, table, counts, daysToClose, laid, outsideGroups, outsideValues);
  });

  // The groups as they were found: in the order of their periods (the rows come in created_at order), so
  // a period's groups follow each other. A group's values lie in its ranges of `values`.
  const groupCount = table.count;
  const values = laid.values;
  const { ranges, rangeFrom: groupRangeFrom } = laid.ranges(groupCount);

  // Each group's numbers, in PACKED_FIELDS.
  const numbers = new Float64Array(groupCount * PACKED_FIELDS);
  for (let g = 0; g < groupCount; g++) {
    const at = g * PACKED_FIELDS;
    numbers[at] = table.periods.array[g] as number;
    numbers[at + 1] = counts.opened.array[g] as number;
    numbers[at + 2] = counts.closed.array[g] as number;
    numbers[at + 3] = counts.within.array[g] as number;
  }
  const { outside, outsideFrom } = outsideByGroup(outsideGroups, outsideValues, groupCount);
  // A group's middles and p90 are selected when they are needed: those of the kept keys' groups, and
  // of every key of one group when the order is by median or p90 (a group left out is counted in
  // `others` only). Its values stay in its ranges of `values`, in another order.
  const ranked = new Uint8Array(groupCount);
  const rankGroup = (g: number): void => {
    if (ranked[g] === 1) return;
    ranked[g] = 1;
    const from = groupRangeFrom[g] as number;
    const to = groupRangeFrom[g + 1] as number;
    const [oFrom, oTo] = [outsideFrom[g] as number, outsideFrom[g + 1] as number];
    if (to - from === 1) rangeMiddlesAndP90(values, ranges[2 * from] as number, ranges[2 * from + 1] as number, outside, oFrom, oTo, numbers, g * PACKED_FIELDS + 4);
    else middlesAndP90(values, { ranges: ranges.subarray(2 * from, 2 * to), rangeCount: to - from, inPlace: false, outside, outsideFrom: oFrom, outsideTo: oTo }, numbers, g * PACKED_FIELDS + 4);
  };
  /** Adds a group's ranges of values to `into`, a range that follows the one before joined to it. */
  const pushRanges = (into: Numbers, g: number): void => {
    for (let r = groupRangeFrom[g] as number; r < (groupRangeFrom[g + 1] as number); r++) {
      const [from, to] = [ranges[2 * r] as number, ranges[2 * r + 1] as number];
      if (from === to) continue;
      if (into.length > 0 && into.array[into.length - 1] === from) into.array[into.length - 1] = to;
      else {
        into.push(from);
        into.push(to);
      }
    }
  };

  // The keys (numbered as found), each with its groups in time order (keyGroups[keyFrom[k], keyFrom[k + 1]))
  // and its numbers over the whole range: its group's without a period; with one, summed (and, for an
  // order by median or p90, counted or selected over its groups' values). Listed in the order of their codes.
  const keyCount = table.keyCodes.length;
  const keyOf = table.keyOf.array;
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
    for (let f = 1; f <= 3; f++) keyNumbers[k * PACKED_FIELDS + f] = (keyNumbers[k * PACKED_FIELDS + f] as number) + (numbers[g * PACKED_FIELDS + f] as number);
  }
  const bySelection = query.order === 'median_days_to_close' || query.order === 'p90_days_to_close';
  /** The middles and p90 of the groups keyGroups[first, end) together, into `into` (PACKED_FIELDS) from its fifth field. */
  const rankGroups = (first: number, end: number, into: Float64Array, at: number): void => {
    if (end - first === 1) {
      const g = keyGroups[first] as number;
      rankGroup(g);
      into.set(numbers.subarray(g * PACKED_FIELDS + 4, (g + 1) * PACKED_FIELDS), at + 4);
      return;
    }
    const keyRanges = new Numbers(2 * (end - first));
    const groupsOutside: number[] = [];
    for (let at = first; at < end; at++) {
      const g = keyGroups[at] as number;
      pushRanges(keyRanges, g);
      for (let o = outsideFrom[g] as number; o < (outsideFrom[g + 1] as number); o++) groupsOutside.push(outside[o] as number);
    }
    middlesAndP90(values, unionSet(keyRanges, groupsOutside), into, at + 4);
  };
  for (let k = 0; k < keyCount; k++) {
    const first = keyFrom[k] as number;
    const end = keyFrom[k + 1] as number;
    if (bySelection) rankGroups(first, end, keyNumbers, k * PACKED_FIELDS);
    else if (end - first === 1) {
      const g = keyGroups[first] as number;
      keyNumbers.set(numbers.subarray(g * PACKED_FIELDS + 4, (g + 1) * PACKED_FIELDS), k * PACKED_FIELDS + 4);
    }
  }
  const keys: KeyRange[] = [];
  for (const k of inKeyOrder(table.keyCodes.array, keyCount)) {
    keys.push({ first: keyFrom[k] as number, end: keyFrom[k + 1] as number, key: table.keyCodes.array[k] as number, numbers: keyNumbers.subarray(k * PACKED_FIELDS, (k + 1) * PACKED_FIELDS) });
  }

  // The order: the measure (none last, whatever the direction), then the key's values in order (null last).
  const measures = new Float64Array(keyCount);
  const firstRanks = new Float64Array(keyCount);
  const secondRanks = new Float64Array(keyCount);
  const [ranks1, ranks2] = query.ranks;
  for (let k = 0; k < keyCount; k++) {
    const range = keys[k] as KeyRange;
    measures[k] = measureOf(query.order, range.numbers, 0) ?? Number.NaN;
    firstRanks[k] = ranks1 === undefined ? 0 : (ranks1[Math.floor(range.key / CODE_SPAN)] as number);
    secondRanks[k] = ranks2 === undefined ? 0 : (ranks2[range.key % CODE_SPAN] as number);
  }
  const direction = query.descending ? -1 : 1;
  const order = Array.from({ length: keyCount }, (_, k) => k);
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
  const kept = order.slice(0, query.limit);

  // The kept keys' groups, each key's in time order.
  const width = query.by.length;
  let rowCount = 0;
  for (const k of kept) rowCount += (keys[k] as KeyRange).end - (keys[k] as KeyRange).first;
  const codes = new Int32Array(rowCount * width);
  const rowsOut = new Float64Array(rowCount * PACKED_FIELDS);
  const isKept = new Uint8Array(groupCount);
  let row = 0;
  for (const k of kept) {
    const { first, end, key } = keys[k] as KeyRange;
    for (let at = first; at < end; at++, row++) {
      const g = keyGroups[at] as number;
      isKept[g] = 1;
      rankGroup(g);
      rowsOut.set(numbers.subarray(g * PACKED_FIELDS, (g + 1) * PACKED_FIELDS), row * PACKED_FIELDS);
      codes[row * width] = Math.floor(key / CODE_SPAN);
      if (width > 1) codes[row * width + 1] = key % CODE_SPAN;
    }
  }

  // The groups left out, per period (numbered from 0 in time order, as the groups were found): their
  // counts summed, their ranks counted or selected over their values where they lie.
  const others = new Numbers(PACKED_FIELDS);
  for (let g = 0; g < groupCount; ) {
    const period = numbers[g * PACKED_FIELDS] as number;
    const periodNumbers = new Float64Array(PACKED_FIELDS);
    periodNumbers[0] = period;
    const periodRanges = new Numbers(8);
    const periodOutside: number[] = [];
    for (; g < groupCount && numbers[g * PACKED_FIELDS] === period; g++) {
      if (isKept[g] === 1) continue;
      for (let f = 1; f <= 3; f++) periodNumbers[f] = (periodNumbers[f] as number) + (numbers[g * PACKED_FIELDS + f] as number);
      pushRanges(periodRanges, g);
      for (let o = outsideFrom[g] as number; o < (outsideFrom[g + 1] as number); o++) periodOutside.push(outside[o] as number);
    }
    if ((periodNumbers[1] as number) === 0) continue;
    middlesAndP90(values, unionSet(periodRanges, periodOutside), periodNumbers, 4);
    for (const number of periodNumbers) others.push(number);
  }
  return { periods: periods.join('\n'), codes, numbers: rowsOut, others: others.array.slice(0, others.length) };
}
