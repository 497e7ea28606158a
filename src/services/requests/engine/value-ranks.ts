/**
 * The ranks of a scan's days_to_close, held in two bytes a value as the row columns store them
 * (row-column-scan.ts: hundredths up to 655.33 days, OUTSIDE for the few that two bytes do not hold,
 * whose values a scan lists apart): the low and high middles (the median is their mean) and the 90th
 * percentile (nearest rank), each an exact selection among the values, or a count of their bytes for
 * a large set, never a sort of every value and never an approximation. The group scans
 * (group-scan.ts) and the period numbers (row-column-scan.ts, scanBuckets) rank their values here, in
 * an array each walk thread keeps for its next scans.
 */
import { p90Rank } from '../../../snapshot/index.js';

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

/** Values of a set from which its ranks are counted (countedRanks) rather than selected (selectRank). */
const COUNTED_VALUES = 128;
/**
 * Counts of the values' high bytes (256 of them, in four sets: the values of a range are counted in turn
 * in each, so that values of one high byte that follow each other add to different counts, not
 * each waiting for the one before), then of the low bytes of the three ranks' high bytes, then of the
 * other values' low bytes (counted, never read: no branch asks whether a value's high byte is a rank's).
 */
const byteCounts = new Int32Array(5 * 256);
/** Where the low bytes of a value with each high byte are counted: 256, 512 or 768 for a rank's, else 1,024. */
const lowSlots = new Int32Array(256);

/** The high byte of the value of rank `rank` (from 0), from the counts of the values' high bytes (byteCounts[0, 256)). */
function highByteOf(rank: number): number {
  const counts = byteCounts;
  let before = 0;
  let high = 0;
  while (before + (counts[high] as number) <= rank) before += counts[high++] as number;
  return high;
}

/** The value of rank `rank` (from 0), from the counts of the values' high bytes and of the low bytes of its high byte's values (at lowSlots[high]). */
function valueOfRank(rank: number): number {
  const counts = byteCounts;
  let before = 0;
  let high = 0;
  while (before + (counts[high] as number) <= rank) before += counts[high++] as number;
  const slot = lowSlots[high] as number;
  let low = 0;
  while (before + (counts[slot + low] as number) <= rank) before += counts[slot + low++] as number;
  return high * 256 + low;
}

/**
 * The values of three ranks (ascending, from 0: r0, r1, r2) of the values in the ranges of `a`
 * ([ranges[2 i], ranges[2 i + 1]) for i below rangeCount), into `into` from `at`, by counting: the
 * counts of the values' high bytes say which 256 values hold each rank, the counts of their low bytes
 * which value it is. Two passes over the values, none reordered.
 */
function countedRanks(a: Uint16Array, ranges: Float64Array, rangeCount: number, r0: number, r1: number, r2: number, into: Float64Array, at: number): void {
  const counts = byteCounts;
  counts.fill(0);
  for (let r = 0; r < rangeCount; r++) {
    const hi = ranges[2 * r + 1] as number;
    let i = ranges[2 * r] as number;
    for (; i + 3 < hi; i += 4) {
      const b0 = (a[i] as number) >>> 8;
      const b1 = 256 + ((a[i + 1] as number) >>> 8);
      const b2 = 512 + ((a[i + 2] as number) >>> 8);
      const b3 = 768 + ((a[i + 3] as number) >>> 8);
      counts[b0] = (counts[b0] as number) + 1;
      counts[b1] = (counts[b1] as number) + 1;
      counts[b2] = (counts[b2] as number) + 1;
      counts[b3] = (counts[b3] as number) + 1;
    }
    for (; i < hi; i++) {
      const bucket = (a[i] as number) >>> 8;
      counts[bucket] = (counts[bucket] as number) + 1;
    }
  }
  for (let high = 0; high < 256; high++) {
    counts[high] = (counts[high] as number) + (counts[256 + high] as number) + (counts[512 + high] as number) + (counts[768 + high] as number);
  }
  // Each rank's high byte: the low bytes of its values are counted apart.
  counts.fill(0, 256);
  const slots = lowSlots;
  slots.fill(1_024);
  slots[highByteOf(r2)] = 768;
  slots[highByteOf(r1)] = 512;
  slots[highByteOf(r0)] = 256;
  for (let r = 0; r < rangeCount; r++) {
    const hi = ranges[2 * r + 1] as number;
    for (let i = ranges[2 * r] as number; i < hi; i++) {
      const value = a[i] as number;
      const slot = (slots[value >>> 8] as number) + (value & 255);
      counts[slot] = (counts[slot] as number) + 1;
    }
  }
  into[at] = valueOfRank(r0);
  into[at + 1] = valueOfRank(r1);
  into[at + 2] = valueOfRank(r2);
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
  const plan = rankPlanOf(n, outside, outsideFrom, outsideTo);
  if (plan === null) {
    into[at] = into[at + 1] = into[at + 2] = Number.NaN;
    return;
  }
  const { inside, insideRanks } = plan;
  if (inside > 0) {
    if (n >= COUNTED_VALUES) countedRanks(a, ranges, rangeCount, insideRanks[0], insideRanks[1], insideRanks[2], into, at);
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
  placeOutsideRanks(plan, outside, outsideFrom, into, at);
}

/**
 * Where the middles and p90 of a set of n values lie (null for none): their ranks among the n, the
 * count of its values that two bytes do not hold below every two-byte value (the negative ones of
 * outside[outsideFrom, outsideTo), sorted) and of its two-byte values, and the ranks among those
 * (clamped: placeOutsideRanks replaces those that fall among the outside values).
 */
export function rankPlanOf(n: number, outside: Int32Array, outsideFrom: number, outsideTo: number): RankPlan | null {
  if (n === 0) return null;
  const ranks = middleAndP90Ranks(n);
  let below = 0;
  while (outsideFrom + below < outsideTo && (outside[outsideFrom + below] as number) < 0) below++;
  const inside = n - (outsideTo - outsideFrom);
  const insideRanks = ranks.map((rank) => Math.min(Math.max(rank - below, 0), Math.max(inside - 1, 0))) as [number, number, number];
  return { ranks, below, inside, insideRanks };
}

/** The places of a set's middles and p90 among its values (rankPlanOf). */
export interface RankPlan {
  ranks: [number, number, number];
  below: number;
  inside: number;
  insideRanks: [number, number, number];
}

/** The middles and p90 (into[at, at + 3)) that lie among a set's values that two bytes do not hold, read from them; the others are left as selected. */
export function placeOutsideRanks(plan: RankPlan, outside: Int32Array, outsideFrom: number, into: Float64Array, at: number): void {
  const { ranks, below, inside } = plan;
  ranks.forEach((rank, r) => {
    if (rank < below) into[at + r] = outside[outsideFrom + rank] as number;
    else if (rank - below >= inside) into[at + r] = outside[outsideFrom + rank - inside] as number;
  });
}

/**
 * The items 0 to length - 1 by set (`sets`: the set of each; below 0: none), each set's in their
 * order: order[from[s], from[s + 1]) those of set s, for s below setCount (a counting sort).
 */
export function itemsBySet(sets: ArrayLike<number>, length: number, setCount: number): { from: Int32Array; order: Int32Array } {
  const from = new Int32Array(setCount + 1);
  for (let i = 0; i < length; i++) if ((sets[i] as number) >= 0) from[(sets[i] as number) + 1] = (from[(sets[i] as number) + 1] as number) + 1;
  for (let s = 0; s < setCount; s++) from[s + 1] = (from[s + 1] as number) + (from[s] as number);
  const order = new Int32Array(from[setCount] as number);
  const filled = from.slice(0, setCount);
  for (let i = 0; i < length; i++) {
    const s = sets[i] as number;
    if (s < 0) continue;
    order[filled[s] as number] = i;
    filled[s] = (filled[s] as number) + 1;
  }
  return { from, order };
}

/**
 * The values that two bytes do not hold of a scan's sets (of groups), listed in the order of the rows
 * (`sets`: the set of each, `values`: its value, `length` of them; a set below 0: none), by set:
 * outside[outsideFrom[s], outsideFrom[s + 1]), sorted.
 */
export function outsideBySet(sets: ArrayLike<number>, values: ArrayLike<number>, length: number, setCount: number): { outside: Int32Array; outsideFrom: Int32Array } {
  const { from: outsideFrom, order } = itemsBySet(sets, length, setCount);
  const outside = Int32Array.from(order, (i) => values[i] as number);
  for (let s = 0; s < setCount; s++) if ((outsideFrom[s + 1] as number) - (outsideFrom[s] as number) > 1) outside.subarray(outsideFrom[s], outsideFrom[s + 1]).sort();
  return { outside, outsideFrom };
}

/**
 * middlesAndP90 of the values of one range: a[lo, hi) (reordered), its values that two bytes do not hold
 * outside[outsideFrom, outsideTo). A small range with none of them (nearly every group of a grouping
 * by day) is selected in directly, allocating nothing.
 */
export function rangeMiddlesAndP90(a: Uint16Array, lo: number, hi: number, outside: Int32Array, outsideFrom: number, outsideTo: number, into: Float64Array, at: number): void {
  const n = hi - lo;
  if (n === 0 || outsideFrom !== outsideTo || n >= COUNTED_VALUES) {
    oneRange[0] = lo;
    oneRange[1] = hi;
    middlesAndP90(a, { ranges: oneRange, rangeCount: 1, inPlace: true, outside, outsideFrom, outsideTo }, into, at);
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

/**
 * The most values the thread's kept array holds (16 MB): a scan of more lays them in an array of its
 * own, which the collector takes once the scan ends, so that a thread does not hold the largest scan's
 * values (at 40 million requests, 80 MB) from then on. Every scan of the 50x history (5.5 million
 * requests) fits: a scan's own array is garbage until the thread's next collection, which at 50x held
 * 30 MB more after the groups with a bound of 8 MB.
 */
const KEPT_VALUES_MAXIMUM = 1 << 23;

/** The thread's array of a scan's values, kept for its next scans (a scan runs to its end before another starts). */
let scanValueArray = new Uint16Array(0);

/** An array of n values for a scan: the thread's, grown when it holds fewer, or one of its own past KEPT_VALUES_MAXIMUM. */
export function scanValues(n: number): Uint16Array {
  if (n > KEPT_VALUES_MAXIMUM) return new Uint16Array(n);
  if (scanValueArray.length < n) {
    scanValueArray = new Uint16Array(0);
    scanValueArray = new Uint16Array(Math.min(KEPT_VALUES_MAXIMUM, Math.ceil(n * 1.125)));
  }
  return scanValueArray.subarray(0, n);
}

/** A scan's array of n values with the first `keep` of `values` (a scan that lays its values before it knows how many). */
export function grownValues(values: Uint16Array, n: number, keep: number): Uint16Array {
  const laid = values.subarray(0, keep);
  const larger = scanValues(n);
  if (larger.buffer !== values.buffer) larger.set(laid);
  return larger;
}
