import { describe, expect, it } from 'vitest';
import { NO_FILTERS } from '../../src/services/requests/list-filters.js';
import { bucketNumbers, bucketSummaryOf, isComplete, isoWeekOf, monthOf, packBuckets, statDays, unpackBuckets } from '../../src/services/requests/engine/period-stats.js';

/** The calendar arithmetic of the daily, weekly and monthly numbers (the dashboard API decisions). */
describe('period statistics', () => {
  it('ISO 8601 weeks, across the turns of the year', () => {
    expect(isoWeekOf('2024-12-30')).toBe('2025-W01'); // a Monday in December belongs to week 1 of 2025
    expect(isoWeekOf('2025-01-01')).toBe('2025-W01');
    expect(isoWeekOf('2025-01-05')).toBe('2025-W01');
    expect(isoWeekOf('2025-01-06')).toBe('2025-W02');
    expect(isoWeekOf('2021-01-03')).toBe('2020-W53'); // a Sunday in January belongs to the last week of 2020
    expect(isoWeekOf('2025-06-30')).toBe('2025-W27');
    expect(monthOf('2025-06-30')).toBe('2025-06');
  });

  it('a day is complete when its 14-day window ended before the snapshot date', () => {
    expect(isComplete('2025-06-16', '2025-07-01')).toBe(true); // window ends at the start of 1 July
    expect(isComplete('2025-06-17', '2025-07-01')).toBe(false);
    expect(isComplete('2025-06-30', '2025-07-01')).toBe(false);
  });

  it('the days of the statistics: the period, narrowed to the days created_from and created_to touch', () => {
    const period = { start: '2025-01-01', end: '2025-01-31', snapshotDate: '2025-07-01' };
    expect(statDays(period, NO_FILTERS)).toHaveLength(31);
    expect(statDays(period, { ...NO_FILTERS, created_from: '2025-01-30T12:00:00', created_to: '2025-02-10T00:00:00' })).toEqual(['2025-01-30', '2025-01-31']);
    expect(statDays(period, { ...NO_FILTERS, created_to: '2025-01-03T00:00:00' })).toEqual(['2025-01-01', '2025-01-02']);
    expect(statDays(period, { ...NO_FILTERS, created_to: '2025-01-03T00:00:01' })).toEqual(['2025-01-01', '2025-01-02', '2025-01-03']);
    expect(statDays(period, { ...NO_FILTERS, created_from: '2025-03-01T00:00:00' })).toEqual([]);
  });

  it("a bucket's numbers: its requests, those closed within 14 days, the two middle days to close (one for an odd number)", () => {
    expect(bucketSummaryOf(3, Float64Array.from([20, 1]))).toEqual({ opened: 3, closedWithin: 1, lowMiddle: 1, highMiddle: 20 });
    expect(bucketSummaryOf(4, Float64Array.from([14, 3, 15]))).toEqual({ opened: 4, closedWithin: 2, lowMiddle: 14, highMiddle: 14 });
    expect(bucketSummaryOf(2, new Float64Array(0))).toEqual({ opened: 2, closedWithin: 0, lowMiddle: null, highMiddle: null });
  });

  it('one row per bucket of the days, with the median of its two middles and the share closed in time', async () => {
    const buckets = new Map([
      ['2025-W01', bucketSummaryOf(3, Float64Array.from([1, 20]))],
      ['2025-W02', bucketSummaryOf(2, Float64Array.from([3, 4]))],
    ]);
    const weeks = await bucketNumbers(['2025-01-04', '2025-01-05', '2025-01-06'], buckets, '2025-01-20', isoWeekOf);
    expect(weeks).toEqual([
      { key: '2025-W01', start: '2025-01-04', end: '2025-01-05', opened: 3, closed_within_14_days: 1, share_closed_within_14_days: 0.3333, median_days_to_close: 10.5, complete: true },
      { key: '2025-W02', start: '2025-01-06', end: '2025-01-06', opened: 2, closed_within_14_days: 2, share_closed_within_14_days: 1, median_days_to_close: 3.5, complete: false },
    ]);
  });

  it('years of days give way to other requests: a pause between steps of 256 days, the same rows', async () => {
    const days = statDays({ start: '2016-01-01', end: '2025-12-31', snapshotDate: '2026-01-01' }, NO_FILTERS);
    const buckets = new Map([['2020-W10', bucketSummaryOf(4, Float64Array.from([1, 2, 30]))]]);
    let pauses = 0;
    const paced = await bucketNumbers(days, buckets, '2026-01-01', isoWeekOf, { pause: () => Promise.resolve(void (pauses += 1)) });
    expect(pauses).toBe(Math.ceil(days.length / 256) - 1);
    expect(paced).toEqual(await bucketNumbers(days, buckets, '2026-01-01', isoWeekOf));
    expect(paced.find((week) => week.key === '2020-W10')).toMatchObject({ opened: 4, closed_within_14_days: 2, median_days_to_close: 2 });
  });

  it('the buckets a walk worker sends, packed into one text and one buffer, unpack to the same buckets (no median, one median, none at all)', () => {
    const buckets = new Map([
      ['2020-W10', { opened: 4, closedWithin: 2, lowMiddle: 1.5, highMiddle: 2.25 }],
      ['2020-W11', { opened: 3, closedWithin: 0, lowMiddle: null, highMiddle: null }],
      ['2020-W12', { opened: 1, closedWithin: 1, lowMiddle: 0, highMiddle: 0 }],
    ]);
    const packed = packBuckets([...buckets]);
    expect(packed.numbers).toHaveLength(12);
    expect(unpackBuckets(packed)).toEqual(buckets);
    expect(unpackBuckets(packBuckets([]))).toEqual(new Map());
  });
});
