import { describe, expect, it } from 'vitest';
import { SeededRandom } from '../../src/ingest/nyc311/seeded-random.js';
import { p90Rank, selectRank } from '../../src/services/requests/engine/group-scan.js';
import { describeGroupStats } from './support/group-stats-suite.js';
import { checkRowsBound, GROUP_ROWS_MAXIMUM } from '../../src/services/requests/routes/group-stats.js';
import type { GroupQuery } from '../../src/services/requests/engine/group-query.js';
import { NO_FILTERS, type ListFilters } from '../../src/services/requests/list-filters.js';
import type { DatasetRecord } from '../../src/services/requests/store/service-request-store.js';

describeGroupStats('sqlite');

describe('the selections of the groups', () => {
  it('the nearest rank of the 90th percentile is ceil(0.9 n) in integers', () => {
    expect([1, 2, 9, 10, 11, 70, 100, 101].map(p90Rank)).toEqual([1, 2, 9, 9, 10, 63, 90, 91]);
  });

  it('selectRank finds the value of each rank, as a sort does, with many equal values', () => {
    const random = new SeededRandom(3);
    for (let i = 0; i < 300; i += 1) {
      const n = random.int(1, 200);
      const values = Int32Array.from({ length: n }, () => random.int(0, random.pick([3, 1000])));
      const sorted = values.slice().sort();
      const k = random.int(0, n - 1);
      expect(selectRank(values.slice(), 0, n, k)).toBe(sorted[k]);
    }
  });
});

describe('the rows an answer of groups may hold', () => {
  /** A snapshot of fifteen years (2010 to 2024: 5,479 days, 783 ISO weeks, 180 months). */
  const store = { dataset: () => Promise.resolve({ snapshot_date: '2025-01-01', period: { start: '2010-01-01', end: '2024-12-31' } } as DatasetRecord) };
  const ask = (limit: number, period: GroupQuery['period'], filters: Partial<ListFilters> = {}) =>
    checkRowsBound(store, { ...NO_FILTERS, ...filters }, { by: ['borough'], period, order: 'opened', descending: false, limit });

  it(`limit times the periods the created range spans is at most ${GROUP_ROWS_MAXIMUM}: at it answered, past it 422 invalid_request, fields limit and period`, async () => {
    await expect(ask(1000, null)).resolves.toBeUndefined();
    await expect(ask(1000, 'month')).resolves.toBeUndefined();
    await expect(ask(36, 'day')).resolves.toBeUndefined();
    // 200,000 / 5,479 days = 36.5 keys.
    await expect(ask(37, 'day')).rejects.toMatchObject({ code: 'invalid_request', fields: ['limit', 'period'] });
    await expect(ask(37, 'day')).rejects.toThrow(/limit 37 times the 5479 periods of day asked could be more than 200,000 rows/);
    // A shorter created range: 200 days of 2024 times 1000 keys is exactly the bound.
    await expect(ask(1000, 'day', { created_from: '2024-01-01T00:00:00', created_to: '2024-07-19T00:00:00' })).resolves.toBeUndefined();
    await expect(ask(1000, 'day', { created_from: '2024-01-01T00:00:00', created_to: '2024-07-20T00:00:00' })).rejects.toMatchObject({ fields: ['limit', 'period'] });
  });
});
