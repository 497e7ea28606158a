import type { BucketSummary } from '../store/service-request-store.js';
import type { ListFilters } from '../list-filters.js';
// A type only: the row walk workers load this module, and the platform's has no business there.
import type { TimeSlice } from '../../../platform/work-budget.js';
import { CLOSED_WITHIN_DAYS, dailyStatOf, daysInclusive, isoWeekOf, medianOfMiddles, type SummaryUnit } from '../../../snapshot/index.js';

// The weekly numbers' key is the summaries' (one definition for both).
export { isoWeekOf };

/**
 * The numbers of `/v1/stats/daily`, `/weekly` and `/monthly` from the matching requests grouped per
 * day, computed the way the snapshot builder computes its daily_stats table (dailyStatOf: the same
 * share and median rounding), so that the filtered numbers and the precomputed ones agree.
 */
export interface PeriodNumbers {
  start: string;
  end: string;
  opened: number;
  closed_within_14_days: number;
  share_closed_within_14_days: number | null;
  median_days_to_close: number | null;
  complete: boolean;
}

export interface Period {
  start: string;
  end: string;
  /** The day the snapshot reflects (snapshot_date). */
  snapshotDate: string;
}

export function addDays(day: string, days: number): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
}

/**
 * Whether the numbers of the requests opened up to `lastDay` are final: a request opened at the end of
 * lastDay is "closed within 14 days" if it closes by the end of lastDay + 14, so the window ends at the
 * start of lastDay + 15; the snapshot is read as of the start of its date (the conservative reading).
 */
export function isComplete(lastDay: string, snapshotDate: string): boolean {
  return lastDay <= lastCompleteDay(snapshotDate);
}

/** The last day whose numbers are final at the snapshot date (isComplete), for loops over many days. */
export function lastCompleteDay(snapshotDate: string): string {
  return addDays(snapshotDate, -(CLOSED_WITHIN_DAYS + 1));
}

/**
 * The days of the statistics: the snapshot's period, narrowed by created_from and created_to to the
 * days that hold any instant of [created_from, created_to).
 */
export function statDays(period: Period, filters: ListFilters): string[] {
  let first = period.start;
  let last = period.end;
  if (filters.created_from !== null) first = maxDay(first, filters.created_from.slice(0, 10));
  if (filters.created_to !== null) {
    const to = filters.created_to;
    const lastTouched = to.slice(10) === 'T00:00:00' ? addDays(to.slice(0, 10), -1) : to.slice(0, 10);
    last = lastTouched < last ? lastTouched : last;
  }
  return first <= last ? daysInclusive(first, last) : [];
}

function maxDay(a: string, b: string): string {
  return a > b ? a : b;
}

export function monthOf(day: string): string {
  return day.slice(0, 7);
}

/** The bucket key of a day for each unit of the statistics. */
export const BUCKET_KEY_OF: Readonly<Record<SummaryUnit, (day: string) => string>> = {
  day: (day) => day,
  week: isoWeekOf,
  month: monthOf,
};

/** Days between two pauses of bucketNumbers: a few hundred days are well under a millisecond. */
const DAYS_PER_STEP = 256;

/**
 * One row per bucket (`keyOf` of each day: the day itself, its ISO week or its month) of the days, in
 * day order, from the numbers of each bucket's requests over those days (buckets absent from
 * `summaries` opened nothing): the summaries' whole buckets, or the rows' (bucketsFromRows). Years of
 * days are thousands of rows: the loop gives way to other requests between steps (`slice`, when given).
 */
export async function bucketNumbers(
  days: readonly string[],
  summaries: ReadonlyMap<string, BucketSummary>,
  snapshotDate: string,
  keyOf: (day: string) => string,
  slice?: Pick<TimeSlice, 'pause'>,
): Promise<(PeriodNumbers & { key: string })[]> {
  const rows: (PeriodNumbers & { key: string })[] = [];
  const completeThrough = lastCompleteDay(snapshotDate);
  for (let i = 0; i < days.length; i += 1) {
    if (i % DAYS_PER_STEP === 0 && i > 0) await slice?.pause();
    const day = days[i] as string;
    const key = keyOf(day);
    const last = rows.at(-1);
    if (last !== undefined && last.key === key) {
      last.end = day;
      // Whether a bucket is final depends on its last day only.
      last.complete = day <= completeThrough;
      continue;
    }
    const found = summaries.get(key);
    const stat = dailyStatOf(day, found?.opened ?? 0, found?.closedWithin ?? 0, []);
    const hasMedian = found !== undefined && found.lowMiddle !== null && found.highMiddle !== null;
    rows.push({
      key,
      start: day,
      end: day,
      opened: stat.opened,
      closed_within_14_days: stat.closed_within_14_days,
      share_closed_within_14_days: stat.share_closed_within_14_days,
      median_days_to_close: hasMedian ? medianOfMiddles(found.lowMiddle as number, found.highMiddle as number) : null,
      complete: day <= completeThrough,
    });
  }
  return rows;
}

/**
 * The numbers of one bucket from its requests: how many, and the days_to_close of those that have
 * one (any order; sorted here). The two middles are those medianOf takes.
 */
export function bucketSummaryOf(opened: number, closeDays: Float64Array): BucketSummary {
  closeDays.sort();
  let closedWithin = 0;
  for (const days of closeDays) if (days <= CLOSED_WITHIN_DAYS) closedWithin += 1;
  const n = closeDays.length;
  const mid = n >> 1;
  return {
    opened,
    closedWithin,
    lowMiddle: n === 0 ? null : (closeDays[n % 2 === 1 ? mid : mid - 1] as number),
    highMiddle: n === 0 ? null : (closeDays[mid] as number),
  };
}

/**
 * The buckets of a walk as a SQLite row walk worker sends them: the keys in one text (newline-separated) and their
 * numbers in one buffer, four per bucket (opened, closed within, low and high middle, NaN for none),
 * moved to the service's thread rather than copied. Years of days sent as thousands of objects took
 * 4 to 7 ms of the event loop to receive; these take a fraction of a millisecond.
 */
export interface PackedBuckets {
  keys: string;
  numbers: Float64Array<ArrayBuffer>;
}

export function packBuckets(buckets: readonly (readonly [string, BucketSummary])[]): PackedBuckets {
  const numbers = new Float64Array(buckets.length * 4);
  buckets.forEach(([, bucket], i) => {
    numbers.set([bucket.opened, bucket.closedWithin, bucket.lowMiddle ?? Number.NaN, bucket.highMiddle ?? Number.NaN], i * 4);
  });
  return { keys: buckets.map(([key]) => key).join('\n'), numbers };
}

export function unpackBuckets({ keys, numbers }: PackedBuckets): Map<string, BucketSummary> {
  const buckets = new Map<string, BucketSummary>();
  if (keys === '') return buckets;
  const middle = (value: number): number | null => (Number.isNaN(value) ? null : value);
  keys.split('\n').forEach((key, i) => {
    const at = i * 4;
    buckets.set(key, { opened: numbers[at] as number, closedWithin: numbers[at + 1] as number, lowMiddle: middle(numbers[at + 2] as number), highMiddle: middle(numbers[at + 3] as number) });
  });
  return buckets;
}
