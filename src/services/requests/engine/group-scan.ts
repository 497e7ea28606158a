/**
 * The numbers of `/v1/stats/groups`: the matching requests grouped by the values of one or two coded
 * columns, optionally per day, ISO week, month or year, counted by a walk worker over the row columns
 * (row-column-scan.ts), never on the event loop.
 *
 * A scan passes twice over the selected rows: the first counts each group's requests (and finds the
 * groups), the second lays every closed request's days_to_close (in hundredths) into one array where
 * each group's values are contiguous, its groups in (key, period) order, so that a key's values over
 * the whole range are contiguous too. The median (mean of the two middle values) and the 90th
 * percentile (nearest rank: the value at position ceil(0.9 n) of the sorted values) of a group are
 * then exact selections in its part of that array (a large group's by counting its values' bytes),
 * never a sort of every value, and never an approximation; those of several groups (a key over its
 * periods, the groups left out) are counted or selected from their parts, never copied whole.
 *
 * The array holds each value in two bytes, as the row columns store it (OUTSIDE for the few that two
 * bytes do not hold, which the scan lists apart per group: OUTSIDE is above every value two bytes hold,
 * so the ranks among those few are read from the list). It is the thread's, kept for its next scans:
 * a scan's memory is at most 2 bytes per matching closed request of the largest scan so far, plus its
 * groups, and leaves no garbage that grows with the rows. A row finds its group in a table indexed by
 * its codes (the key's latest period), so no row is hashed; the groups are then put in key order by
 * counting.
 *
 * The worker orders the keys (the answer's `order`, ties by key), keeps the first `limit`, and counts
 * the groups left out (`others`) in the same pass: their median needs their values, which only the
 * worker holds.
 */
import { DAY_SECONDS, medianOfMiddles, shareClosedWithin, CLOSED_WITHIN_DAYS } from '../../../snapshot/index.js';
import type { GroupMeasure, GroupPeriod, GroupScan } from './group-query.js';
import { BUCKET_KEY_OF } from './period-stats.js';
import { dayOfRow, DAYS_TO_CLOSE_USE, GROUP_USES, forEachMatchingRow, NOT_CLOSED, OUTSIDE, outsideHundredthsOf, readRows, type RowColumnScan, type SharedRowColumns, type StoredArray } from './row-column-scan.js';

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

const WITHIN_HUNDREDTHS = CLOSED_WITHIN_DAYS * 100;
/** Codes are below 2^16: a key is (first code, second code) in 32 bits. */
const CODE_SPAN = 65_536;

/**
 * Moves the value of rank `k` (an index in [lo, hi)) of a[lo, hi) to a[k], the smaller ones before it
 * and the larger ones after it (Hoare's selection, median-of-three pivot); returns it.
 */
export function selectRank(a: Uint16Array, lo: number, hi: number, k: number): number {
  let left = lo;
  let right = hi - 1;
  while (right > left) {
    if (right - left < 16) {
      for (let i = left + 1; i <= right; i++) {
        const value = a[i] as number;
        let j = i - 1;
        while (j >= left && (a[j] as number) > value) {
          a[j + 1] = a[j] as number;
          j--;
        }
        a[j + 1] = value;
      }
      break;
    }
    const x = a[left] as number;
    const y = a[(left + right) >>> 1] as number;
    const z = a[right] as number;
    const pivot = x < y ? (y < z ? y : x < z ? z : x) : x < z ? x : y < z ? z : y;
    let i = left;
    let j = right;
    while (i <= j) {
      while ((a[i] as number) < pivot) i++;
      while ((a[j] as number) > pivot) j--;
      if (i <= j) {
        const swap = a[i] as number;
        a[i] = a[j] as number;
        a[j] = swap;
        i++;
        j--;
      }
    }
    if (k <= j) right = j;
    else if (k >= i) left = i;
    else break;
  }
  return a[k] as number;
}

/** The position (from 1) of the 90th percentile among n sorted values: ceil(0.9 n), in integers (0.9 * 70 is 63.000...01 in floating point). */
export function p90Rank(n: number): number {
  return Math.floor((9 * n + 9) / 10);
}

/** Values of a set from which its ranks are counted (countedRanks) rather than selected (selectRank). */
const COUNTED_VALUES = 2_048;
/** Counts of the values' high bytes (256 of them), then of the low bytes of the three ranks' high bytes. */
const byteCounts = new Int32Array(4 * 256);

/**
 * The values of three ranks (ascending, from 0) of the values in the ranges of `a` ([ranges[2 i],
 * ranges[2 i + 1]) for i below rangeCount), into `into` from `at`, by counting: the counts of the
 * values' high bytes say which 256 values hold each rank, the counts of their low bytes which value it
 * is. Two passes over the values, none reordered.
 */
function countedRanks(a: Uint16Array, ranges: Float64Array, rangeCount: number, ranks: readonly number[], into: Float64Array, at: number): void {
  const counts = byteCounts;
  counts.fill(0);
  for (let r = 0; r < rangeCount; r++) {
    const hi = ranges[2 * r + 1] as number;
    for (let i = ranges[2 * r] as number; i < hi; i++) {
      const bucket = (a[i] as number) >>> 8;
      counts[bucket] = (counts[bucket] as number) + 1;
    }
  }
  // Each rank's high byte, and its rank among the values of that byte.
  const highs: number[] = [];
  const within: number[] = [];
  for (const rank of ranks) {
    let before = 0;
    let bucket = 0;
    while (before + (counts[bucket] as number) <= rank) before += counts[bucket++] as number;
    highs.push(bucket);
    within.push(rank - before);
  }
  const [h0, h1, h2] = highs as [number, number, number];
  for (let r = 0; r < rangeCount; r++) {
    const hi = ranges[2 * r + 1] as number;
    for (let i = ranges[2 * r] as number; i < hi; i++) {
      const value = a[i] as number;
      const bucket = value >>> 8;
      const slot = bucket === h0 ? 256 : bucket === h1 ? 512 : bucket === h2 ? 768 : -1;
      if (slot !== -1) counts[slot + (value & 255)] = (counts[slot + (value & 255)] as number) + 1;
    }
  }
  highs.forEach((high, r) => {
    const slot = high === h0 ? 256 : high === h1 ? 512 : 768;
    let before = 0;
    let low = 0;
    while (before + (counts[slot + low] as number) <= (within[r] as number)) before += counts[slot + low++] as number;
    into[at + r] = high * 256 + low;
  });
}

/** The ranks (from 0) of the low and high middles and of the 90th percentile among n values. */
function middleAndP90Ranks(n: number): [number, number, number] {
  const mid = n >> 1;
  return [n % 2 === 1 ? mid : mid - 1, mid, p90Rank(n) - 1];
}

/** One range of a scan's values, as countedRanks takes them. */
const oneRange = new Float64Array(2);
/** The thread's array that a set of values in several ranges is gathered into when it is small enough to select in. */
const gatheredValues = new Uint16Array(COUNTED_VALUES);

/** A set of a scan's values: its ranges of the two-byte values, as countedRanks takes them, and its values that two bytes do not hold. */
export interface ValueSet {
  ranges: Float64Array;
  rangeCount: number;
  /** Whether its values may be reordered (else a small set is copied before it is selected in). */
  inPlace: boolean;
  /** outside[outsideFrom, outsideTo): the values of its OUTSIDEs, sorted. */
  outside: Int32Array;
  outsideFrom: number;
  outsideTo: number;
}

/**
 * The low and high middles and the 90th percentile of a set of values (NaN for none), into `into`
 * from `at`. Each OUTSIDE among the two-byte values stands for one of the set's values that two bytes
 * do not hold; it is above every value two bytes hold, so the ranks below the set's negative outside
 * values and above its two-byte ones are read from those values, the others selected (or counted)
 * among the two bytes.
 */
export function middlesAndP90(a: Uint16Array, set: ValueSet, into: Float64Array, at: number): void {
  const { ranges, rangeCount, outside, outsideFrom, outsideTo } = set;
  let n = 0;
  for (let r = 0; r < rangeCount; r++) n += (ranges[2 * r + 1] as number) - (ranges[2 * r] as number);
  if (n === 0) {
    into[at] = into[at + 1] = into[at + 2] = Number.NaN;
    return;
  }
  const ranks = middleAndP90Ranks(n);
  let below = 0;
  while (outsideFrom + below < outsideTo && (outside[outsideFrom + below] as number) < 0) below++;
  const inside = n - (outsideTo - outsideFrom);
  // The ranks among the two-byte values (clamped: those outside them are replaced below).
  const insideRanks = ranks.map((rank) => Math.min(Math.max(rank - below, 0), Math.max(inside - 1, 0)));
  if (inside > 0) {
    if (n >= COUNTED_VALUES) countedRanks(a, ranges, rangeCount, insideRanks, into, at);
    else {
      let values = a;
      let lo = ranges[0] as number;
      let hi = ranges[1] as number;
      if (!set.inPlace) {
        values = gatheredValues;
        for (let r = 0, filled = 0; r < rangeCount; r++) {
          values.set(a.subarray(ranges[2 * r], ranges[2 * r + 1]), filled);
          filled += (ranges[2 * r + 1] as number) - (ranges[2 * r] as number);
        }
        lo = 0;
        hi = n;
      }
      // Ascending ranks: each next one lies after the one before once that is in its place.
      let from = lo;
      for (let r = 0; r < 3; r++) {
        const k = insideRanks[r] as number;
        into[at + r] = r > 0 && k === insideRanks[r - 1] ? (into[at + r - 1] as number) : selectRank(values, from, hi, lo + k);
        from = lo + k + 1;
      }
    }
  }
  ranks.forEach((rank, r) => {
    if (rank < below) into[at + r] = outside[outsideFrom + rank] as number;
    else if (rank - below >= inside) into[at + r] = outside[outsideFrom + rank - inside] as number;
  });
}

/** The set of one group: a[lo, hi) (reordered), its values that two bytes do not hold outside[outsideFrom, outsideTo). */
function groupSet(lo: number, hi: number, outside: Int32Array, outsideFrom: number, outsideTo: number): ValueSet {
  oneRange[0] = lo;
  oneRange[1] = hi;
  return { ranges: oneRange, rangeCount: 1, inPlace: true, outside, outsideFrom, outsideTo };
}

/** The set of several groups (`ranges`: theirs; `outside`: their values that two bytes do not hold, in any order), left as it is. */
function unionSet(ranges: Numbers, outside: number[]): ValueSet {
  const sortedOutside = Int32Array.from(outside).sort();
  return { ranges: ranges.array, rangeCount: ranges.length / 2, inPlace: false, outside: sortedOutside, outsideFrom: 0, outsideTo: sortedOutside.length };
}

/** The thread's array of a scan's values, kept for its next scans (a scan runs to its end before another starts). */
let scanValueArray = new Uint16Array(0);

/** An array of n values for a scan: the thread's, grown when it holds fewer. */
function scanValues(n: number): Uint16Array {
  if (scanValueArray.length < n) {
    scanValueArray = new Uint16Array(0);
    scanValueArray = new Uint16Array(Math.ceil(n * 1.125));
  }
  return scanValueArray.subarray(0, n);
}

/**
 * The values that two bytes do not hold of each group, found in the order of the rows (`groups`: the
 * group of each, `values`: its value), by the groups' places in key order (`sorted[at]`: the group at
 * place `at`): outside[outsideFrom[at], outsideFrom[at + 1]), sorted.
 */
function outsideByPlace(groups: Numbers, values: Numbers, sorted: Int32Array, groupCount: number): { outside: Int32Array; outsideFrom: Int32Array } {
  const outsideFrom = new Int32Array(groupCount + 1);
  const outside = new Int32Array(groups.length);
  if (groups.length === 0) return { outside, outsideFrom };
  const placeOf = new Int32Array(groupCount);
  for (let at = 0; at < groupCount; at++) placeOf[sorted[at] as number] = at;
  for (let i = 0; i < groups.length; i++) {
    const at = (placeOf[groups.array[i] as number] as number) + 1;
    outsideFrom[at] = (outsideFrom[at] as number) + 1;
  }
  for (let at = 0; at < groupCount; at++) outsideFrom[at + 1] = (outsideFrom[at + 1] as number) + (outsideFrom[at] as number);
  const filled = outsideFrom.slice(0, groupCount);
  for (let i = 0; i < groups.length; i++) {
    const at = placeOf[groups.array[i] as number] as number;
    outside[filled[at] as number] = values.array[i] as number;
    filled[at] = (filled[at] as number) + 1;
  }
  for (let at = 0; at < groupCount; at++) if ((outsideFrom[at + 1] as number) - (outsideFrom[at] as number) > 1) outside.subarray(outsideFrom[at], outsideFrom[at + 1]).sort();
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

/** A key's groups in the (key, period) order, and its numbers over the whole range. */
interface KeyRange {
  first: number;
  end: number;
  numbers: Float64Array;
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
 * open-addressing table of (key, period). Replayed over the same rows (`replay`), the groups are found
 * again with the same numbers.
 */
class GroupTable {
  readonly keys = new Numbers();
  readonly periods = new Numbers();
  private slots = new Int32Array(1024).fill(-1);
  private readonly direct: Int32Array | null;
  /** The direct table's places hold base + group; a place below base is empty. */
  private base = 0;
  /** While replaying: the number of the next group to find. */
  private replayed = -1;

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
    const found = this.replayed === -1 ? this.add(key, period) : this.replayed++;
    table[place] = this.base + found;
    direct.next = Math.max(direct.next, this.base + found + 1);
    return found;
  }

  /** Starts finding the groups again over the same rows: a group is then the next one in the order they were made. */
  replay(): void {
    if (this.direct === null) return;
    this.base = direct.next;
    this.replayed = 0;
  }

  private add(key: number, period: number): number {
    const made = this.keys.length;
    this.keys.push(key);
    this.periods.push(period);
    return made;
  }

  private hashed(key: number, period: number): number {
    const mask = this.slots.length - 1;
    for (let slot = slotOf(key, period) & mask; ; slot = (slot + 1) & mask) {
      const group = this.slots[slot] as number;
      if (group === -1) {
        const made = this.add(key, period);
        this.slots[slot] = made;
        if (made * 2 >= this.slots.length) this.grow();
        return made;
      }
      if (this.keys.array[group] === key && this.periods.array[group] === period) return group;
    }
  }

  private grow(): void {
    this.slots = new Int32Array(this.slots.length * 2).fill(-1);
    const mask = this.slots.length - 1;
    for (let group = 0; group < this.keys.length; group++) {
      let slot = slotOf(this.keys.array[group] as number, this.periods.array[group] as number) & mask;
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

/**
 * The groups 0 to count - 1 in the order of their keys (`keys`: first code * 65,536 + second), groups
 * of a key in the order they were made, which is their periods' (the rows come in created_at order):
 * a stable sort by the second code, then by the first, each by counting (linear in the groups).
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
 * file's comment); keys are looked up directly up to `directKeys` pairs of codes.
 */
export function scanGroups(columns: SharedRowColumns, scan: RowColumnScan, query: GroupScan, directKeys = DIRECT_KEYS): PackedGroups {
  const { created, daysToClose, bytes } = columns;
  const stored = query.by.map((column) => columns.codes[column]);
  const keyOfDay = query.period === null ? null : PERIOD_KEY_OF[query.period];
  const periods: string[] = [];
  const periodIndex = new Map<string, number>();
  const table = new GroupTable(query.ranks[1]?.length ?? 1, query.ranks[0]?.length ?? 1, directKeys);
  const opened = new Numbers();
  const closed = new Numbers();
  const within = new Numbers();

  /**
   * One pass over the matching rows: the first (`next` null) finds and counts the groups; the second
   * lays each closed row's days_to_close at its group's next place (`next`) of `values`.
   */
  const pass = (next: Float64Array | null, values: Uint16Array | null): void => {
    let nextDayStart = 0;
    let period = 0;
    let lastKey = -1;
    let lastPeriod = -1;
    let group = -1;
    let openedOf = opened.array;
    let closedOf = closed.array;
    let withinOf = within.array;
    forEachMatchingRow(columns, scan, (rows, count, blockStart, blockEnd) => {
      const first = readRows(bytes, stored[0] as StoredArray, blockStart, blockEnd, GROUP_USES[0]);
      const second = stored.length > 1 ? readRows(bytes, stored[1] as StoredArray, blockStart, blockEnd, GROUP_USES[1]) : first;
      const secondFactor = stored.length > 1 ? 1 : 0;
      const hundredths = readRows(bytes, daysToClose.hundredths, blockStart, blockEnd, DAYS_TO_CLOSE_USE);
      for (let i = 0; i < count; i++) {
        const row = rows[i] as number;
        const at = row - blockStart;
        if (keyOfDay !== null && row >= nextDayStart) {
          const day = dayOfRow(created, row);
          nextDayStart = created.dayStarts[day + 1] as number;
          const key = keyOfDay(new Date(day * DAY_SECONDS * 1000).toISOString().slice(0, 10));
          let index = periodIndex.get(key);
          if (index === undefined) {
            index = periods.length;
            periods.push(key);
            periodIndex.set(key, index);
          }
          period = index;
        }
        const firstCode = first[at] as number;
        const secondCode = (second[at] as number) * secondFactor;
        const key = firstCode * CODE_SPAN + secondCode;
        if (key !== lastKey || period !== lastPeriod) {
          group = table.find(firstCode, secondCode, period);
          if (group === opened.length) {
            opened.push(0);
            closed.push(0);
            within.push(0);
            openedOf = opened.array;
            closedOf = closed.array;
            withinOf = within.array;
          }
          lastKey = key;
          lastPeriod = period;
        }
        const value = hundredths[at] as number;
        if (value === NOT_CLOSED) {
          if (next === null) openedOf[group] = (openedOf[group] as number) + 1;
          continue;
        }
        // OUTSIDE (above 1,400) is never within 14 days: its value is looked up in the second pass only.
        if (next === null) {
          openedOf[group] = (openedOf[group] as number) + 1;
          closedOf[group] = (closedOf[group] as number) + 1;
          if (value <= WITHIN_HUNDREDTHS) withinOf[group] = (withinOf[group] as number) + 1;
        } else {
          const place = next[group] as number;
          (values as Uint16Array)[place] = value;
          next[group] = place + 1;
          if (value === OUTSIDE) {
            outsideGroups.push(group);
            outsideValues.push(outsideHundredthsOf(daysToClose, row));
          }
        }
      }
    });
  };

  pass(null, null);
  table.replay();

  // The groups in (key, period) order; periods are numbered in time order (the rows come in created_at order).
  const groupCount = table.keys.length;
  const sorted = inKeyOrder(table.keys.array, groupCount);
  const start = new Float64Array(groupCount + 1);
  let total = 0;
  for (const g of sorted) {
    start[g] = total;
    total += closed.array[g] as number;
  }
  const values = scanValues(total);
  const outsideGroups = new Numbers();
  const outsideValues = new Numbers();
  pass(start.slice(), values);

  // From here on a group is its place in that order (`at`), its values values[from[at], from[at + 1]).
  const inOrder = (array: Float64Array): Float64Array => {
    const ordered = new Float64Array(groupCount);
    for (let at = 0; at < groupCount; at++) ordered[at] = array[sorted[at] as number] as number;
    return ordered;
  };
  const keyAt = inOrder(table.keys.array);
  const from = new Float64Array(groupCount + 1);
  from.set(inOrder(start));
  from[groupCount] = total;

  // Each group's numbers, in PACKED_FIELDS.
  const numbers = new Float64Array(groupCount * PACKED_FIELDS);
  for (const [field, array] of [table.periods.array, opened.array, closed.array, within.array].entries()) {
    const ordered = inOrder(array);
    for (let at = 0; at < groupCount; at++) numbers[at * PACKED_FIELDS + field] = ordered[at] as number;
  }
  const { outside, outsideFrom } = outsideByPlace(outsideGroups, outsideValues, sorted, groupCount);
  for (let at = 0; at < groupCount; at++) {
    middlesAndP90(values, groupSet(from[at] as number, from[at + 1] as number, outside, outsideFrom[at] as number, outsideFrom[at + 1] as number), numbers, at * PACKED_FIELDS + 4);
  }

  // The keys: runs of groups with the same codes. A key's numbers over the whole range are its group's
  // without a period; with one, summed (and, for an order by median or p90, selected from a copy of its values).
  const keys: KeyRange[] = [];
  const bySelection = query.order === 'median_days_to_close' || query.order === 'p90_days_to_close';
  for (let first = 0; first < groupCount; ) {
    let end = first + 1;
    while (end < groupCount && keyAt[end] === keyAt[first]) end++;
    let keyNumbers = numbers.subarray(first * PACKED_FIELDS, (first + 1) * PACKED_FIELDS);
    if (end - first > 1) {
      keyNumbers = new Float64Array(PACKED_FIELDS);
      for (let at = first; at < end; at++) for (let f = 1; f <= 3; f++) keyNumbers[f] = (keyNumbers[f] as number) + (numbers[at * PACKED_FIELDS + f] as number);
      if (bySelection) {
        const ranges = new Numbers(2);
        ranges.push(from[first] as number);
        ranges.push(from[end] as number);
        middlesAndP90(values, unionSet(ranges, [...outside.subarray(outsideFrom[first], outsideFrom[end])]), keyNumbers, 4);
      }
    }
    keys.push({ first, end, numbers: keyNumbers });
    first = end;
  }

  // The order: the measure (none last, whatever the direction), then the key's values in order (null last).
  const keyCount = keys.length;
  const measures = new Float64Array(keyCount);
  const firstRanks = new Float64Array(keyCount);
  const secondRanks = new Float64Array(keyCount);
  const [ranks1, ranks2] = query.ranks;
  for (let k = 0; k < keyCount; k++) {
    const range = keys[k] as KeyRange;
    measures[k] = measureOf(query.order, range.numbers, 0) ?? Number.NaN;
    const key = keyAt[range.first] as number;
    firstRanks[k] = ranks1 === undefined ? 0 : (ranks1[Math.floor(key / CODE_SPAN)] as number);
    secondRanks[k] = ranks2 === undefined ? 0 : (ranks2[key % CODE_SPAN] as number);
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
  const left = order.slice(query.limit);

  // The kept keys' groups.
  const width = query.by.length;
  let rowCount = 0;
  for (const k of kept) rowCount += (keys[k] as KeyRange).end - (keys[k] as KeyRange).first;
  const codes = new Int32Array(rowCount * width);
  const rowsOut = new Float64Array(rowCount * PACKED_FIELDS);
  let row = 0;
  for (const k of kept) {
    const { first, end } = (keys[k] as KeyRange);
    for (let at = first; at < end; at++, row++) {
      const key = keyAt[at] as number;
      codes[row * width] = Math.floor(key / CODE_SPAN);
      if (width > 1) codes[row * width + 1] = key % CODE_SPAN;
    }
    rowsOut.set(numbers.subarray(first * PACKED_FIELDS, end * PACKED_FIELDS), (row - (end - first)) * PACKED_FIELDS);
  }

  // The groups left out, per period (numbered from 0 in time order): their counts summed, their values gathered and selected.
  const periodCount = periods.length === 0 ? 1 : periods.length;
  const leftNumbers = new Float64Array(periodCount * PACKED_FIELDS);
  const forEachLeftGroup = (visit: (at: number, period: number) => void): void => {
    for (const k of left) for (let at = (keys[k] as KeyRange).first; at < (keys[k] as KeyRange).end; at++) visit(at, numbers[at * PACKED_FIELDS] as number);
  };
  forEachLeftGroup((at, period) => {
    for (let f = 1; f <= 3; f++) leftNumbers[period * PACKED_FIELDS + f] = (leftNumbers[period * PACKED_FIELDS + f] as number) + (numbers[at * PACKED_FIELDS + f] as number);
  });
  const leftRanges = Array.from({ length: periodCount }, () => new Numbers(8));
  const leftOutside = Array.from({ length: periodCount }, () => [] as number[]);
  forEachLeftGroup((at, period) => {
    const ranges = leftRanges[period] as Numbers;
    // Ranges that follow each other are one.
    if (ranges.length > 0 && ranges.array[ranges.length - 1] === from[at]) ranges.array[ranges.length - 1] = from[at + 1] as number;
    else {
      ranges.push(from[at] as number);
      ranges.push(from[at + 1] as number);
    }
    for (let o = outsideFrom[at] as number; o < (outsideFrom[at + 1] as number); o++) leftOutside[period]?.push(outside[o] as number);
  });
  const leftPeriods: number[] = [];
  for (let period = 0; period < periodCount; period++) if ((leftNumbers[period * PACKED_FIELDS + 1] as number) > 0) leftPeriods.push(period);
  const others = new Float64Array(leftPeriods.length * PACKED_FIELDS);
  leftPeriods.forEach((period, o) => {
    const at = o * PACKED_FIELDS;
    others.set(leftNumbers.subarray(period * PACKED_FIELDS, (period + 1) * PACKED_FIELDS), at);
    others[at] = period;
    middlesAndP90(values, unionSet(leftRanges[period] as Numbers, leftOutside[period] as number[]), others, at + 4);
  });
  return { periods: periods.join('\n'), codes, numbers: rowsOut, others };
}
