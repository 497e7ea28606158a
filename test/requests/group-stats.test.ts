import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it, vi } from 'vitest';
import { SeededRandom } from '../../src/ingest/nyc311/seeded-random.js';
import { PACKED_FIELDS, scanGroups } from '../../src/services/requests/engine/group-scan.js';
import { valueCountedCells } from '../../src/services/requests/engine/group-value-counts.js';
import { groupsOfPacked } from '../../src/services/requests/engine/group-answers.js';
import type { RowColumns } from '../../src/services/requests/engine/row-columns-memory.js';
import { GROUP_COLUMNS, GROUP_MEASURES, GROUP_PERIODS, type GroupScan } from '../../src/services/requests/engine/group-query.js';
import { releaseRowColumns } from '../../src/services/requests/engine/row-columns-memory.js';
import { loadSqliteRowColumns } from '../../src/services/requests/engine/sqlite-row-columns.js';
import { sharedSmallSyntheticSnapshot } from '../support/shared-synthetic-snapshot.js';
import { describeGroupStats } from './support/group-stats-suite.js';
import { COUNTED_BY_VALUE, RECORDED } from './support/group-scan-ways.js';
import { checkRowsBound, GROUP_ROWS_MAXIMUM } from '../../src/services/requests/routes/group-stats.js';
import type { GroupQuery } from '../../src/services/requests/engine/group-query.js';
import { NO_FILTERS, type ListFilters } from '../../src/services/requests/list-filters.js';
import type { DatasetRecord } from '../../src/services/requests/store/service-request-store.js';
import { SqliteServiceRequestStore } from '../../src/services/requests/store/sqlite-store.js';
import { RowWalkPool } from '../../src/services/requests/engine/sqlite-row-walks.js';

describeGroupStats('sqlite');

describe('the rows of an answer of groups', () => {
  it('are made in steps, other work served between them (an answer may hold 200,000 rows)', async () => {
    const rows = 3 * 4_096 + 1;
    const numbers = new Float64Array(rows * PACKED_FIELDS);
    for (let row = 0; row < rows; row++) numbers.set([0, 3, 2, 1, 150, 250, 400], row * PACKED_FIELDS);
    const packed = { periods: '', codes: Int32Array.from({ length: rows }, (_, row) => row % 3), numbers, others: new Float64Array(0) };
    const columns = { values: { borough: [null, 'bronx', 'queens'] } } as unknown as RowColumns;
    let otherWorkRan = false;
    setImmediate(() => (otherWorkRan = true));
    const made = await groupsOfPacked(columns, { by: ['borough'], period: null, order: 'opened', descending: true, limit: rows }, packed);
    expect(otherWorkRan).toBe(true);
    expect(made.items).toHaveLength(rows);
    expect(made.items[rows - 1]).toEqual({
      key: { borough: null },
      opened: 3,
      closed: 2,
      closed_within_14_days: 1,
      share_closed_within_14_days: expect.any(Number),
      median_days_to_close: 2,
      p90_days_to_close: 4,
    });
  });
});

describe('the groups a scan finds', () => {
  /** Calls `check` with `count` random groupings (1 or 2 columns, any period, order and limit) over the small synthetic history's row columns. */
  const forRandomGroupings = async (seed: number, count: number, check: (columns: RowColumns, query: GroupScan, random: SeededRandom) => void): Promise<void> => {
    const database = new Database(await sharedSmallSyntheticSnapshot(), { readonly: true });
    const columns = await loadSqliteRowColumns(database, () => true);
    database.close();
    if (columns === null) throw new Error('the small synthetic history has row columns');
    try {
      const random = new SeededRandom(seed);
      for (let i = 0; i < count; i += 1) {
        const by = [...new Set([random.pick(GROUP_COLUMNS), random.pick(GROUP_COLUMNS)])].slice(0, random.int(1, 2));
        const query: GroupScan = {
          by,
          period: random.pick([null, ...GROUP_PERIODS]),
          order: random.pick(GROUP_MEASURES),
          descending: random.pick([true, false]),
          limit: random.int(1, 30),
          ranks: by.map((column) => Uint32Array.from(columns.values[column], (_, code) => code)),
        };
        check(columns, query, random);
      }
    } finally {
      releaseRowColumns(columns.bytes);
    }
  };

  it('keys looked up in a hash table (more pairs of codes than the direct table holds) give the groups the direct table gives', async () => {
    await forRandomGroupings(11, 40, (columns, query) => {
      const scan = { columns: 0, filters: [], from: null, to: null };
      expect(scanGroups(columns, scan, query, 0)).toEqual(scanGroups(columns, scan, query));
    });
  });

  it('a scan of more rows than its recording holds at once lays its complete periods as it goes (by year or without a period: counted by quarter or month, then merged), and a period of more rows in runs, to the same groups', async () => {
    await forRandomGroupings(13, 30, (columns, query, random) => {
      const column = random.pick(['borough', 'status', 'channel'] as const);
      const filters = random.chance(0.5) ? [{ column, accepted: [random.int(1, columns.values[column].length - 1)] }] : [];
      const scan = { columns: 0, filters, from: null, to: null };
      const recorded = scanGroups(columns, scan, query);
      for (const bound of [0, 1, 64, random.int(2, columns.rows)]) expect(scanGroups(columns, scan, query, undefined, bound)).toEqual(recorded);
    });
  });

  it('counted by value (a grouping of very few cells) are the groups a recording gives, for any columns, period, order, limit and filter', async () => {
    let counted = 0;
    await forRandomGroupings(17, 60, (columns, query, random) => {
      const column = random.pick(['borough', 'status', 'channel'] as const);
      const filters = random.chance(0.5) ? [{ column, accepted: [random.int(1, columns.values[column].length - 1)] }] : [];
      const scan = { columns: 0, filters, from: null, to: null };
      if (valueCountedCells(columns, scan, query, COUNTED_BY_VALUE) > 0) counted++;
      expect(scanGroups(columns, scan, query, undefined, undefined, COUNTED_BY_VALUE)).toEqual(scanGroups(columns, scan, query, undefined, undefined, RECORDED));
    });
    expect(counted).toBeGreaterThanOrEqual(15);
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

describe('the groups of one column per period, from the summaries or the rows', () => {
  /**
   * The groups of a copy of the small history whose summaries `alter` changes (so that it scans them),
   * against the history's own (read from its summaries: no walk runs).
   */
  async function expectAlteredAnswersAlike(alter: string, queries: readonly GroupQuery[], filters: ListFilters = NO_FILTERS): Promise<void> {
    const folder = mkdtempSync(join(tmpdir(), 'groups-older-summaries-'));
    const older = join(folder, 'snapshot.sqlite');
    copyFileSync(await sharedSmallSyntheticSnapshot(), older);
    const db = new Database(older);
    db.exec(alter);
    db.close();
    const current = new SqliteServiceRequestStore(await sharedSmallSyntheticSnapshot());
    const scanned = new SqliteServiceRequestStore(older);
    const run = vi.spyOn(RowWalkPool.prototype, 'run');
    try {
      for (const query of queries) {
        run.mockClear();
        const answer = await current.groups(filters, query);
        expect(answer.items.length).toBeGreaterThan(0);
        expect(run, JSON.stringify(query)).not.toHaveBeenCalled();
        expect(await scanned.groups(filters, query), JSON.stringify(query)).toEqual(answer);
        expect(run, JSON.stringify(query)).toHaveBeenCalled();
      }
    } finally {
      run.mockRestore();
      await current.close();
      await scanned.close();
      rmSync(folder, { recursive: true, force: true });
    }
  }

  it('a snapshot whose summaries predate the groups\' numbers (schema 5: no closed, no p90 per bucket) has its groups scanned, the same answers', async () => {
    const periods = ['day', 'week', 'month', 'year'] as const;
    await expectAlteredAnswersAlike(
      'DROP INDEX summary_buckets_scope; ALTER TABLE summary_buckets DROP COLUMN closed; ALTER TABLE summary_buckets DROP COLUMN p90_days_to_close',
      periods.map((period) => ({ by: ['borough'], period, order: 'opened', descending: true, limit: 20 })),
    );
  });

  it('a snapshot whose summaries hold no years (schema 6) has its groups per year scanned, the same answers', async () => {
    await expectAlteredAnswersAlike("DELETE FROM summary_buckets WHERE unit = 'year'", [{ by: ['status'], period: 'year', order: 'closed', descending: false, limit: 20 }]);
  });

  it('a snapshot without summary_pairs (schema 7) has its groups per month or year within one value of another column, or of two columns, scanned, the same answers', async () => {
    const db = new Database(await sharedSmallSyntheticSnapshot(), { readonly: true });
    const borough = db.prepare('SELECT borough FROM service_requests WHERE borough IS NOT NULL LIMIT 1').pluck().get() as string;
    db.close();
    await expectAlteredAnswersAlike(
      'DROP TABLE summary_pairs',
      [
        { by: ['complaint_type'], period: 'month', order: 'opened', descending: true, limit: 100 },
        { by: ['status'], period: 'year', order: 'share_closed_within_14_days', descending: false, limit: 20 },
        { by: ['complaint_type', 'borough'], period: 'month', order: 'closed', descending: true, limit: 1000 },
        { by: ['borough', 'channel'], period: 'year', order: 'opened', descending: false, limit: 1000 },
      ],
      { ...NO_FILTERS, borough: [borough] },
    );
  });
});
