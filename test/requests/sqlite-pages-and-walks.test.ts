import { copyFileSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it, vi } from 'vitest';
import { ROW_COLUMN_VALUES_TABLE, ROW_COLUMNS_TABLE } from '../../src/snapshot/row-columns.js';
import type { CursorPosition } from '../../src/services/requests/cursor.js';
import { NO_FILTERS, type FilterValue, type ListFilters } from '../../src/services/requests/list-filters.js';
import type { ServiceRequestRecord } from '../../src/services/requests/store/service-request-store.js';
import { SqliteServiceRequestStore } from '../../src/services/requests/store/sqlite-store.js';
import { RowWalkPool } from '../../src/services/requests/engine/sqlite-row-walks.js';
import { pageIdsAmong } from '../../src/services/requests/engine/page-seconds.js';
import { countSql, pageIdsQuery, type FilterValueCounts } from '../../src/services/requests/store/sqlite-queries.js';
import { SeededRandom } from '../../src/ingest/nyc311/seeded-random.js';
import { answersOfRows, byScan, expectPagesOfTheRows, randomAggregateQuery, randomRows, sqliteStoreOfRows } from './support/random-rows.js';
import { expectRequestsWaitForRowColumns } from './support/row-columns-loading.js';

/**
 * The SQLite store answers every list page from walks of the snapshot's indexes, and count, facets
 * and day groups from walks of the rows in its worker threads: checked here against a plain filter
 * and sort of the same rows, for random filter combinations (several values, `none`, the map box),
 * time bounds, cursor positions and page sizes (the API suites check it again through HTTP, against
 * the expected rows, on SQLite and PostgreSQL).
 */
describe('pages and row walks of the SQLite store', () => {
  const random = new SeededRandom(2025);
  const rows = randomRows(random, 600);
  const sqlite = sqliteStoreOfRows(rows);

  it('answers every random page as a plain filter and sort of the rows (300 queries; 2,000 in sqlite-pages-and-walks.machine.test.ts)', async () => {
    await expectPagesOfTheRows(sqlite.store, rows, random, 300);
  });

  it('counts, facets and the numbers per day, week or month are those of the matching rows (300 queries)', async () => {
    for (let i = 0; i < 300; i += 1) {
      const { filters, column, unit } = randomAggregateQuery(random);
      const expected = answersOfRows(rows, filters, column, unit);
      expect(await sqlite.store.count(filters)).toBe(expected.count);
      expect(await sqlite.store.facet(column, filters), column).toEqual(expected.facet);
      expect(await sqlite.store.bucketsFromRows(filters, unit), unit).toEqual(expected.buckets);
    }
  });

  it('counts, facets and numbers scan the row columns (a map box too); a file without row columns walks its rows to the same answers (300 queries)', async () => {
    const copy = join(dirname(sqlite.path), 'without-row-columns.sqlite');
    copyFileSync(sqlite.path, copy);
    const writable = new Database(copy);
    writable.exec(`DROP TABLE ${ROW_COLUMNS_TABLE}; DROP TABLE ${ROW_COLUMN_VALUES_TABLE}`);
    writable.close();
    const walking = new SqliteServiceRequestStore(copy);
    await walking.warmUp();
    const run = vi.spyOn(RowWalkPool.prototype, 'run');
    try {
      let scans = 0;
      for (let i = 0; i < 300; i += 1) {
        const { filters, column, unit } = randomAggregateQuery(random);
        run.mockClear();
        const scanned = [await sqlite.store.count(filters), await sqlite.store.facet(column, filters), await sqlite.store.bucketsFromRows(filters, unit)];
        const works = run.mock.calls.map(([, work]) => 'scan' in work);
        expect(works.every((scan) => scan), JSON.stringify(filters)).toBe(true);
        scans += works.filter(Boolean).length;
        run.mockClear();
        expect([await walking.count(filters), await walking.facet(column, filters), await walking.bucketsFromRows(filters, unit)], JSON.stringify(filters)).toEqual(scanned);
        expect(run.mock.calls.some(([, work]) => 'scan' in work)).toBe(false);
      }
      expect(scans).toBeGreaterThan(300);
    } finally {
      run.mockRestore();
      await walking.close();
    }
  });

  it('a count that arrives before the row columns are loaded waits for them and scans them; a ping waits for the first warm-up, row columns included', () =>
    expectRequestsWaitForRowColumns(() => new SqliteServiceRequestStore(sqlite.path), rows));

  it.runIf(existsSync('/proc/thread-self'))('the walk threads run at a lower priority than the event loop (nice 10), so walks never keep the loop waiting for a core', () => {
    // Field 19 of /proc/<pid>/task/<tid>/stat is the nice value (fields counted after the command's closing parenthesis).
    const niceOf = (tid: string): number => Number(readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1]?.split(' ')[16]);
    const nice = readdirSync('/proc/self/task').map(niceOf);
    expect(nice.filter((value) => value === 10).length).toBeGreaterThanOrEqual(2);
    expect(niceOf(readFileSync('/proc/thread-self/stat', 'utf8').split(' ')[0] as string)).toBe(0);
  });

  it('walks every row of a filter page by page, none skipped or repeated', async () => {
    const filters: ListFilters = { ...NO_FILTERS, borough: ['brooklyn', null], created_from: '2025-01-02' };
    const expected = byScan(rows, filters, null, rows.length);
    const byId = new Map(rows.map((row) => [row.id, row]));
    const walked: number[] = [];
    let after: CursorPosition | null = null;
    for (;;) {
      const page: number[] = await sqlite.store.listIds({ filters, after, fetch: 4 });
      walked.push(...page.slice(0, 3));
      if (page.length <= 3) break;
      const last: ServiceRequestRecord = byId.get(page[2]!)!;
      after = { created_at: last.created_at, id: last.id };
    }
    expect(walked).toEqual(expected);
    expect(expected.length).toBeGreaterThan(10);
  });

  it('is empty for a value no row has, and for an empty range', async () => {
    const none: ListFilters = { ...NO_FILTERS, complaint_type: ['Pothole'] };
    expect(await sqlite.store.listIds({ filters: none, after: null, fetch: 50 })).toEqual([]);
    const empty: ListFilters = { ...NO_FILTERS, created_from: '2025-01-05', created_to: '2025-01-05' };
    expect(await sqlite.store.listIds({ filters: empty, after: null, fetch: 50 })).toEqual([]);
  });

  it('a small map box walks the map cells it touches, merged; a larger one, or a snapshot without cells, walks in list order', () => {
    const small: ListFilters = { ...NO_FILTERS, bbox: { minLongitude: -74.0, minLatitude: 40.7, maxLongitude: -73.99, maxLatitude: 40.71 }, status: ['open'] };
    const page = pageIdsQuery({ filters: small, after: null, fetch: 51 }, new Map(), { name: 'service_requests', mapCells: true });
    // 0.01 degree each way, off the grid's lines: two cells each way.
    expect(page.sql.split(' UNION ALL ')).toHaveLength(4);
    expect(page.sql).toContain('INDEXED BY service_requests_map_cell_created_at_id WHERE map_cell = ? AND status = ? AND longitude BETWEEN ? AND ? AND latitude BETWEEN ? AND ?');
    expect(countSql(small, new Map(), { name: 'service_requests', mapCells: true }).sql).toContain('INDEXED BY service_requests_map_cell_created_at_id');
    expect(pageIdsQuery({ filters: small, after: null, fetch: 51 }, new Map(), { name: 'service_requests', mapCells: false }).sql).not.toContain('map_cell');
    const large: ListFilters = { ...NO_FILTERS, bbox: { minLongitude: -74.1, minLatitude: 40.6, maxLongitude: -73.9, maxLatitude: 40.8 } };
    expect(pageIdsQuery({ filters: large, after: null, fetch: 51 }, new Map(), { name: 'service_requests', mapCells: true }).sql).not.toContain('map_cell');
  });

  it('a walk of several equality filters reads the index of the one whose values hold the fewest rows; a list with none is left to the planner', () => {
    const counts: FilterValueCounts = new Map([
      ['status', new Map([['closed', 5_000]])],
      ['borough', new Map<FilterValue, number>([['queens', 900], [null, 10]])],
    ]);
    expect(countSql({ ...NO_FILTERS, status: ['closed'], borough: ['queens'] }, counts, { name: 'service_requests', mapCells: true }).sql).toBe(
      'SELECT count(*) FROM service_requests INDEXED BY service_requests_borough_created_at_id WHERE borough = ? AND status = ?',
    );
    expect(countSql({ ...NO_FILTERS, status: ['closed'], borough: ['queens', null] }, counts, { name: 'service_requests', mapCells: true }).sql).not.toContain('INDEXED BY');
  });

  describe('where a page walks: on the event loop when its index seeks every condition; else the row columns find its rows first (on the event loop within their first rows, in the workers past them), and the (created_at, id) index gives their ids on the event loop, or the workers walk the rows of their seconds when those hold too many', () => {
    const box = { minLongitude: -74.1, minLatitude: 40.6, maxLongitude: -73.9, maxLatitude: 40.8 };
    const scannedInWorkers = sqliteStoreOfRows(rows, { scanRows: 0, indexRows: 2_048 });
    const walkedInWorkers = sqliteStoreOfRows(rows, { scanRows: 65_536, indexRows: 0 });
    const cases: [string, ListFilters, 'its index' | 'rows checked'][] = [
      ['no filter', NO_FILTERS, 'its index'],
      ['one equality filter', { ...NO_FILTERS, borough: ['brooklyn'] }, 'its index'],
      ['one equality filter of several values and none', { ...NO_FILTERS, borough: ['brooklyn', 'queens', null] }, 'its index'],
      ['a time range', { ...NO_FILTERS, created_from: '2025-01-03', created_to: '2025-01-07' }, 'its index'],
      ['a time range and one equality filter', { ...NO_FILTERS, status: ['closed'], created_from: '2025-01-03' }, 'its index'],
      ['the map box alone', { ...NO_FILTERS, bbox: box }, 'rows checked'],
      ['a small map box (its map cells)', { ...NO_FILTERS, bbox: { minLongitude: -74.0, minLatitude: 40.7, maxLongitude: -73.98, maxLatitude: 40.72 } }, 'rows checked'],
      ['the map box and one equality filter', { ...NO_FILTERS, bbox: box, channel: ['phone'] }, 'rows checked'],
      ['two equality filters', { ...NO_FILTERS, borough: ['brooklyn'], status: ['closed'] }, 'rows checked'],
    ];
    /** The jobs the workers were given for a page of `filters`. */
    async function workerJobs(store: SqliteServiceRequestStore, filters: ListFilters): Promise<string[]> {
      const run = vi.spyOn(RowWalkPool.prototype, 'run');
      try {
        expect(await store.listIds({ filters, after: null, fetch: 51 })).toEqual(byScan(rows, filters, null, 51));
        return run.mock.calls.map(([kind]) => kind);
      } finally {
        run.mockRestore();
      }
    }
    for (const [name, filters, where] of cases) {
      if (where === 'its index') {
        it(`${name}: its index, on the event loop`, async () => {
          expect(await workerJobs(sqlite.store, filters)).toEqual([]);
        });
        continue;
      }
      it(`${name}: its rows found in the row columns and their ids in the (created_at, id) index, on the event loop`, async () => {
        expect(await workerJobs(sqlite.store, filters)).toEqual([]);
      });
      it(`${name}, no row scanned on the event loop: its rows found in the workers`, async () => {
        expect(await workerJobs(scannedInWorkers.store, filters)).toEqual(['page seconds']);
      });
      it(`${name}, no index entry read on the event loop: the rows of its seconds walked in the workers`, async () => {
        expect(await workerJobs(walkedInWorkers.store, filters)).toEqual(['ids']);
      });
    }

    it('two equality filters that no row holds after its time range starts: no walk', async () => {
      expect(await workerJobs(sqlite.store, { ...NO_FILTERS, borough: ['brooklyn'], status: ['closed'], created_from: '2099-01-01' })).toEqual([]);
    });

    it('answers every random page as a plain filter and sort of the rows when its rows are found in the workers, and when its seconds are walked there (100 queries each)', async () => {
      await expectPagesOfTheRows(scannedInWorkers.store, rows, random, 100);
      await expectPagesOfTheRows(walkedInWorkers.store, rows, random, 100);
    });

    it('the ids among the index entries of a page\'s seconds: those at its matching places after its cursor, at most fetch; none when the index holds another number of rows there', () => {
      const seconds = { texts: ['2025-01-01T10:00:00', '2025-01-01T10:00:01'], rowsAtSeconds: 4, matchingPlaces: [0, 2, 3] };
      const entries: [string, number][] = [['2025-01-01T10:00:00', 7], ['2025-01-01T10:00:00', 9], ['2025-01-01T10:00:01', 3], ['2025-01-01T10:00:01', 5]];
      expect(pageIdsAmong(seconds, entries, { filters: NO_FILTERS, after: null, fetch: 51 })).toEqual([7, 3, 5]);
      expect(pageIdsAmong(seconds, entries, { filters: NO_FILTERS, after: null, fetch: 2 })).toEqual([7, 3]);
      expect(pageIdsAmong(seconds, entries, { filters: NO_FILTERS, after: { created_at: '2025-01-01T10:00:00', id: 7 }, fetch: 51 })).toEqual([3, 5]);
      expect(pageIdsAmong(seconds, entries, { filters: NO_FILTERS, after: { created_at: '2025-01-01T10:00:01', id: 3 }, fetch: 51 })).toEqual([5]);
      expect(pageIdsAmong(seconds, entries.slice(1), { filters: NO_FILTERS, after: null, fetch: 51 })).toBeNull();
    });

    it('a page that checks its rows reads only the rows of its rows\' seconds (and of its cursor\'s), as the row columns find them', async () => {
      const filters: ListFilters = { ...NO_FILTERS, borough: ['brooklyn', 'queens'], status: ['closed'] };
      const rowOf = new Map(rows.map((row) => [row.id, row]));
      const cursor = rowOf.get(byScan(rows, filters, null, 20).at(-1) as number) as ServiceRequestRecord;
      const after: CursorPosition = { created_at: cursor.created_at, id: cursor.id };
      const run = vi.spyOn(RowWalkPool.prototype, 'run');
      try {
        const page = byScan(rows, filters, after, 21);
        expect(await walkedInWorkers.store.listIds({ filters, after, fetch: 21 })).toEqual(page);
        // The cursor's row matches: its second is read again (rows of that second after its id may follow it).
        const seconds = [...new Set([after.created_at, ...page.map((id) => (rowOf.get(id) as ServiceRequestRecord).created_at)])];
        const walk = run.mock.calls.find(([kind]) => kind === 'ids')?.[1] as { parameters: unknown[] };
        const lists = walk.parameters.filter((parameter) => typeof parameter === 'string' && parameter.startsWith('['));
        expect(lists.length).toBeGreaterThan(0);
        for (const list of lists) expect(JSON.parse(list as string)).toEqual(seconds);
      } finally {
        run.mockRestore();
      }
    });
  });
});
