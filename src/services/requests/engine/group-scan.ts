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
 * then exact selections in its part of that array, never a sort of every value, and never an
 * approximation. The memory of a scan is 4 bytes per matching closed request, plus its groups.
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
export function selectRank(a: Int32Array, lo: number, hi: number, k: number): number {
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

/**
 * The low and high middles and the 90th percentile of a[lo, hi) (reordered), into `into` from `at`;
 * NaN for none.
 */
function middlesAndP90(a: Int32Array, lo: number, hi: number, into: Float64Array, at: number): void {
  const n = hi - lo;
  if (n === 0) {
    into[at] = into[at + 1] = into[at + 2] = Number.NaN;
    return;
  }
  const mid = lo + (n >> 1);
  const lowAt = n % 2 === 1 ? mid : mid - 1;
  const low = selectRank(a, lo, hi, lowAt);
  const high = lowAt === mid ? low : selectRank(a, lowAt + 1, hi, mid);
  const p90At = lo + p90Rank(n) - 1;
  into[at] = low;
  into[at + 1] = high;
  into[at + 2] = p90At === mid ? high : selectRank(a, mid + 1, hi, p90At);
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
  array = new Float64Array(256);
  length = 0;

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
 * The groups found: an open-addressing table from a key (the codes: first * 65,536 + second, below
 * 2^32) and a period to the group's number (numbered as found).
 */
class GroupTable {
  readonly keys = new Numbers();
  readonly periods = new Numbers();
  private slots = new Int32Array(1024).fill(-1);

  /** The group of (key, period), made when new (its number is then the groups' count before). */
  find(key: number, period: number): number {
    const mask = this.slots.length - 1;
    for (let slot = slotOf(key, period) & mask; ; slot = (slot + 1) & mask) {
      const group = this.slots[slot] as number;
      if (group === -1) {
        const made = this.keys.length;
        this.keys.push(key);
        this.periods.push(period);
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

/** A hash of (key, period) in 32 bits. */
function slotOf(key: number, period: number): number {
  let h = Math.imul(key | 0, 0x9e3779b1) ^ Math.imul(period + 1, 0x85ebca6b);
  h ^= h >>> 16;
  h = Math.imul(h, 0x7feb352d);
  return (h ^ (h >>> 15)) & 0x3fffffff;
}

/** The groups of the matching rows, ordered and limited, with the numbers of those left out (see the file's comment). */
export function scanGroups(columns: SharedRowColumns, scan: RowColumnScan, query: GroupScan): PackedGroups {
  const { created, daysToClose, bytes } = columns;
  const stored = query.by.map((column) => columns.codes[column]);
  const keyOfDay = query.period === null ? null : PERIOD_KEY_OF[query.period];
  const periods: string[] = [];
  const periodIndex = new Map<string, number>();
  const table = new GroupTable();
  const opened = new Numbers();
  const closed = new Numbers();
  const within = new Numbers();

  /** Calls `visit` with each selected row's group (found or made) and its days_to_close hundredths (-1: not closed). */
  /**
   * One pass over the matching rows: the first (`next` null) finds and counts the groups; the second
   * lays each closed row's days_to_close at its group's next place (`next`) of `values`.
   */
  const pass = (next: Float64Array | null, values: Int32Array | null): void => {
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
        const key = (first[at] as number) * CODE_SPAN + (second[at] as number) * secondFactor;
        if (key !== lastKey || period !== lastPeriod) {
          group = table.find(key, period);
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
        let value = hundredths[at] as number;
        if (value === NOT_CLOSED) {
          if (next === null) openedOf[group] = (openedOf[group] as number) + 1;
          continue;
        }
        if (value === OUTSIDE) value = outsideHundredthsOf(daysToClose, row);
        if (next === null) {
          openedOf[group] = (openedOf[group] as number) + 1;
          closedOf[group] = (closedOf[group] as number) + 1;
          if (value <= WITHIN_HUNDREDTHS) withinOf[group] = (withinOf[group] as number) + 1;
        } else {
          const place = next[group] as number;
          (values as Int32Array)[place] = value;
          next[group] = place + 1;
        }
      }
    });
  };

  pass(null, null);

  // The groups in (key, period) order; periods are numbered in time order (the rows come in created_at order).
  const groupCount = table.keys.length;
  const keyOf = (g: number): number => table.keys.array[g] as number;
  const periodOf = (g: number): number => table.periods.array[g] as number;
  const sorted = Array.from({ length: groupCount }, (_, g) => g).sort((a, b) => keyOf(a) - keyOf(b) || periodOf(a) - periodOf(b));
  const start = new Float64Array(groupCount + 1);
  let total = 0;
  for (const g of sorted) {
    start[g] = total;
    total += closed.array[g] as number;
  }
  const values = new Int32Array(total);
  pass(start.slice(), values);

  // Each group's numbers, in PACKED_FIELDS.
  const numbers = new Float64Array(groupCount * PACKED_FIELDS);
  for (let g = 0; g < groupCount; g++) {
    const at = g * PACKED_FIELDS;
    numbers[at] = periodOf(g);
    numbers[at + 1] = opened.array[g] as number;
    numbers[at + 2] = closed.array[g] as number;
    numbers[at + 3] = within.array[g] as number;
    middlesAndP90(values, start[g] as number, (start[g] as number) + (closed.array[g] as number), numbers, at + 4);
  }

  // The keys: runs of `sorted` with the same codes. A key's numbers over the whole range are its group's
  // without a period; with one, summed (and, for an order by median or p90, selected from a copy of its values).
  const keys: KeyRange[] = [];
  const bySelection = query.order === 'median_days_to_close' || query.order === 'p90_days_to_close';
  for (let i = 0; i < groupCount; ) {
    let end = i + 1;
    while (end < groupCount && keyOf(sorted[end] as number) === keyOf(sorted[i] as number)) end++;
    const g = sorted[i] as number;
    let keyNumbers = numbers.subarray(g * PACKED_FIELDS, (g + 1) * PACKED_FIELDS);
    if (end - i > 1) {
      keyNumbers = new Float64Array(PACKED_FIELDS);
      for (let s = i; s < end; s++) for (let f = 1; f <= 3; f++) keyNumbers[f] = (keyNumbers[f] as number) + (numbers[(sorted[s] as number) * PACKED_FIELDS + f] as number);
      if (bySelection) {
        const from = start[g] as number;
        const copy = values.slice(from, from + (keyNumbers[2] as number));
        middlesAndP90(copy, 0, copy.length, keyNumbers, 4);
      }
    }
    keys.push({ first: i, end, numbers: keyNumbers });
    i = end;
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
    const key = keyOf(sorted[range.first] as number);
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
    for (let s = first; s < end; s++, row++) {
      const g = sorted[s] as number;
      const key = keyOf(g);
      codes[row * width] = Math.floor(key / CODE_SPAN);
      if (width > 1) codes[row * width + 1] = key % CODE_SPAN;
      rowsOut.set(numbers.subarray(g * PACKED_FIELDS, (g + 1) * PACKED_FIELDS), row * PACKED_FIELDS);
    }
  }

  // The groups left out, per period: their counts summed, their values gathered and selected.
  const leftGroups = left.flatMap((k) => sorted.slice((keys[k] as KeyRange).first, (keys[k] as KeyRange).end));
  const perPeriod = new Map<number, number[]>();
  for (const g of leftGroups) {
    const period = periodOf(g);
    let list = perPeriod.get(period);
    if (list === undefined) perPeriod.set(period, (list = []));
    list.push(g);
  }
  const others = new Float64Array(perPeriod.size * PACKED_FIELDS);
  let o = 0;
  for (const period of [...perPeriod.keys()].sort((a, b) => a - b)) {
    const groups = perPeriod.get(period) as number[];
    const at = o * PACKED_FIELDS;
    others[at] = period;
    let size = 0;
    for (const g of groups) {
      for (let f = 1; f <= 3; f++) others[at + f] = (others[at + f] as number) + (numbers[g * PACKED_FIELDS + f] as number);
      size += closed.array[g] as number;
    }
    const gathered = new Int32Array(size);
    let filled = 0;
    for (const g of groups) {
      const from = start[g] as number;
      const n = closed.array[g] as number;
      gathered.set(values.subarray(from, from + n), filled);
      filled += n;
    }
    middlesAndP90(gathered, 0, size, others, at + 4);
    o++;
  }
  return { periods: periods.join('\n'), codes, numbers: rowsOut, others };
}
