/**
 * The synthetic history (a chosen number of rows over a span of years): the same arguments give the
 * same bytes, and cleaning keeps exactly the rows asked for. The generator and the snapshot command in
 * a small V8 heap: synthetic-history.process.test.ts; loaded into PostgreSQL:
 * synthetic-history.server.test.ts; the streaming build of the default snapshot against the
 * in-memory one: synthetic-snapshot.machine.test.ts.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { prepareSnapshot } from '../../../src/ingest/nyc311/build-snapshot.js';
import { UniqueKeySet } from '../../../src/ingest/nyc311/cleaning-rules.js';
import { generateSyntheticHistory, type SyntheticHistoryOptions } from '../../../src/ingest/nyc311/synthetic-export.js';

function sha256Of(options: SyntheticHistoryOptions): string {
  const hash = createHash('sha256');
  for (const chunk of generateSyntheticHistory(options).chunks) hash.update(chunk);
  return hash.digest('hex');
}

describe('synthetic history', () => {
  it('is the same bytes for the same arguments, other bytes for another seed', () => {
    const options = { rows: 8_000, fromYear: 2024, toYear: 2025 };
    expect(sha256Of(options)).toBe(sha256Of(options));
    expect(sha256Of({ ...options, seed: 312 })).not.toBe(sha256Of(options));
  }, 60_000);

  it('cleans to exactly the rows asked for, over the years asked for, and holds the planted dirt', async () => {
    const history = { rows: 12_000, fromYear: 2023, toYear: 2025 };
    const { content, syntheticCounts } = await prepareSnapshot({ kind: 'synthetic', history }, { applyFilters: false });
    const counts = syntheticCounts!;
    expect(content.meta.row_count).toBe(12_000);
    expect(counts.requests + counts.otherAgencies).toBe(12_000);
    expect(content.meta.raw_rows_read).toBe(counts.records);
    const removed = Object.fromEntries(content.meta.cleaning_rules.map((r) => [r.id, r.rows_removed]));
    expect(removed).toMatchObject({
      duplicate_unique_key: counts.duplicateUniqueKeys,
      closed_before_created: counts.closedBeforeCreation,
      repeated_submission: counts.repeatedSubmissions,
    });
    expect(counts.repeatedSubmissions).toBeGreaterThan(100);
    expect(content.meta.period_start).toBe('2023-01-01');
    expect(content.meta.period_end).toBe('2025-12-31');
    const perYear = (year: string): number => content.rows.filter((r) => r.created_at.startsWith(year)).length;
    for (const year of ['2023', '2024', '2025']) expect(perYear(year)).toBeGreaterThan(3_500);
    // Potholes peak in March; fewer requests on Sundays than on Mondays.
    const potholes = (month: string): number => content.rows.filter((r) => r.descriptor === 'Pothole' && r.created_at.slice(5, 7) === month).length;
    expect(potholes('03')).toBeGreaterThan(potholes('08'));
    const weekday = (d: number): number => content.rows.filter((r) => new Date(`${r.created_at.slice(0, 10)}T12:00:00Z`).getUTCDay() === d).length;
    expect(weekday(0)).toBeLessThan(weekday(1) * 0.8);
  }, 60_000);

});

describe('Unique Keys bitmap', () => {
  it('holds keys far apart and next to each other', () => {
    const keys = new UniqueKeySet();
    for (const id of [1, 2, 65_535, 65_536, 999_999_999_999_999]) {
      expect(keys.has(id)).toBe(false);
      keys.add(id);
      expect(keys.has(id)).toBe(true);
    }
    expect(keys.has(3)).toBe(false);
    expect(keys.has(999_999_999_999_998)).toBe(false);
  });
});
