import { describe, expect, it } from 'vitest';
import {
  AggregateSummaryBuilder,
  SUMMARY_BUCKET_COLUMNS,
  SUMMARY_FACET_COLUMNS,
  SUMMARY_FILTER_COLUMNS,
  SUMMARY_PAIR_COLUMNS,
  SUMMARY_PAIR_UNITS,
  isoWeekOf,
  type SummaryRow,
  type SummarySourceRow,
} from '../../../src/snapshot/aggregate-summaries.js';
import { CLOSED_WITHIN_DAYS } from '../../../src/snapshot/snapshot-aggregates.js';
import { SeededRandom } from '../../../src/ingest/nyc311/seeded-random.js';

/**
 * The cells of the summary buckets (requests opened, closed, closed within 14 days, the two middle
 * days_to_close, the 90th percentile by nearest rank: the value at position ceil(0.9 n)) against a plain computation over the same rows: every unit, scope and value, with
 * nulls, ties and one-row cells, for days_to_close in hundredths (as the cleaning writes them) and
 * with more decimals (which the builder orders another way).
 */
const BUCKET_UNITS = { day: (day: string) => day, week: isoWeekOf, month: (day: string) => day.slice(0, 7), year: (day: string) => day.slice(0, 4) } as const;

/** The cells of each key that `keysOf` gives a row, as a plain count and sort. */
function plainCells(rows: SummarySourceRow[], keysOf: (row: SummarySourceRow, day: string) => SummaryRow[]): SummaryRow[] {
  const cells = new Map<string, { key: SummaryRow; days: number[]; opened: number; within: number }>();
  for (const row of rows) {
    const daysToClose = row[1];
    for (const key of keysOf(row, row[0].slice(0, 10))) {
      const id = JSON.stringify(key);
      const cell = cells.get(id) ?? { key, days: [], opened: 0, within: 0 };
      cell.opened += 1;
      if (daysToClose !== null) {
        cell.days.push(daysToClose);
        if (daysToClose <= CLOSED_WITHIN_DAYS) cell.within += 1;
      }
      cells.set(id, cell);
    }
  }
  return [...cells.values()].map(({ key, days, opened, within }) => {
    const sorted = [...days].sort((a, b) => a - b);
    const n = sorted.length;
    const nearestRank = (fraction: number): number | null => (n === 0 ? null : (sorted[Math.ceil(Math.round(fraction * n * 1e6) / 1e6) - 1] as number));
    return [...key, opened, n, within, n === 0 ? null : (sorted[(n - 1) >> 1] as number), n === 0 ? null : (sorted[n >> 1] as number), nearestRank(0.9)];
  });
}

/** summary_buckets' cells: per unit, bucket and scope (every row, or a value of a filter column). */
const plainBuckets = (rows: SummarySourceRow[]): SummaryRow[] =>
  plainCells(rows, (row, day) =>
    Object.entries(BUCKET_UNITS).flatMap(([unit, bucketOf]) => [
      [unit, bucketOf(day), '', null],
      ...SUMMARY_FILTER_COLUMNS.map((column, i): SummaryRow => [unit, bucketOf(day), column, row[2 + i] as string | null]),
    ]),
  );

/** summary_pairs' cells: per month and year, per value of a filter column and value of another. */
const plainPairs = (rows: SummarySourceRow[]): SummaryRow[] =>
  plainCells(rows, (row, day) =>
    SUMMARY_PAIR_UNITS.flatMap((unit) =>
      SUMMARY_FILTER_COLUMNS.flatMap((filter, f) =>
        SUMMARY_FILTER_COLUMNS.flatMap((group, g): SummaryRow[] => (f === g ? [] : [[unit, BUCKET_UNITS[unit](day), filter, row[2 + f] as string | null, group, row[2 + g] as string | null]])),
      ),
    ),
  );

function built(rows: SummarySourceRow[], take: 'takeBuckets' | 'takePairs'): SummaryRow[] {
  const builder = new AggregateSummaryBuilder();
  const out: SummaryRow[] = [];
  rows.forEach((row, i) => {
    builder.add(row);
    if (i % 97 === 0) out.push(...builder[take]());
  });
  builder.finish();
  return [...out, ...builder[take]()];
}

const builtBuckets = (rows: SummarySourceRow[]): SummaryRow[] => built(rows, 'takeBuckets');

const byKey = (rows: SummaryRow[], keyLength = 4): SummaryRow[] => [...rows].sort((a, b) => (JSON.stringify(a.slice(0, keyLength)) < JSON.stringify(b.slice(0, keyLength)) ? -1 : 1));

function history(daysToCloseOf: (random: () => number) => number | null): SummarySourceRow[] {
  const seeded = new SeededRandom(7);
  const random = (): number => seeded.next();
  const rows: SummarySourceRow[] = [];
  for (let i = 0; i < 4_000; i += 1) {
    const day = new Date(Date.UTC(2024, 11, 1) + Math.floor(i / 40) * 86_400_000).toISOString().slice(0, 10);
    const values = SUMMARY_FACET_COLUMNS.map((_, f) => (random() < 0.05 ? null : `v${Math.floor(random() * (2 + f * 3))}`));
    rows.push([`${day}T${String(i % 24).padStart(2, '0')}:00:00`, daysToCloseOf(random), ...values]);
  }
  return rows;
}

describe('summary bucket cells', () => {
  it('days_to_close in hundredths, ties and nulls: every cell as a plain count and sort gives', () => {
    const rows = history((random) => (random() < 0.1 ? null : Math.round(random() * 3_000) / 100));
    const built = builtBuckets(rows);
    expect(built[0]).toHaveLength(SUMMARY_BUCKET_COLUMNS.length);
    expect(byKey(built)).toEqual(byKey(plainBuckets(rows)));
  });

  it('the pairs of filter columns per month and year: every cell as a plain count and sort gives', () => {
    const rows = history((random) => (random() < 0.1 ? null : Math.round(random() * 3_000) / 100));
    const pairs = built(rows, 'takePairs');
    expect(pairs[0]).toHaveLength(SUMMARY_PAIR_COLUMNS.length);
    expect(byKey(pairs, 6)).toEqual(byKey(plainPairs(rows), 6));
  });

  it('days_to_close with more decimals, and negative ones: the same', () => {
    const rows = history((random) => (random() < 0.1 ? null : random() < 0.2 ? 1 / 3 : (random() - 0.2) * 30));
    expect(byKey(builtBuckets(rows))).toEqual(byKey(plainBuckets(rows)));
  });

  it('one row, and a bucket whose rows have no days_to_close: medians and p90 null', () => {
    const values = SUMMARY_FACET_COLUMNS.map(() => 'x');
    const rows: SummarySourceRow[] = [
      ['2025-01-01T10:00:00', 2.5, ...values],
      ['2025-01-02T10:00:00', null, ...values],
    ];
    const built = builtBuckets(rows);
    expect(built).toContainEqual(['day', '2025-01-01', '', null, 1, 1, 1, 2.5, 2.5, 2.5]);
    expect(built).toContainEqual(['day', '2025-01-02', '', null, 1, 0, 0, null, null, null]);
    expect(byKey(built)).toEqual(byKey(plainBuckets(rows)));
  });
});
