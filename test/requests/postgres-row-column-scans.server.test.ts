import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { afterAll, beforeAll, describe, expect, it, vi, type MockInstance } from 'vitest';
import { NO_FILTERS, type ListFilters } from '../../src/services/requests/list-filters.js';
import type { ServiceRequestRecord } from '../../src/services/requests/store/service-request-store.js';
import { PostgresServiceRequestStore, type PostgresStoreOptions } from '../../src/services/requests/store/postgres-store.js';
import { RowWalkPool } from '../../src/services/requests/engine/sqlite-row-walks.js';
import { SeededRandom } from '../../src/ingest/nyc311/seeded-random.js';
import { ROW_COLUMN_VALUES_TABLE, ROW_COLUMNS_TABLE } from '../../src/snapshot/row-columns.js';
import { quoteIdentifier } from '../../src/shared/postgres-schema.js';
import { RowColumnCopyReader, loadPostgresRowColumns, rowColumnsCopySql } from '../../src/services/requests/engine/postgres-row-columns.js';
import { RowColumnsAssembly, rowColumnsMemoryBytes, type RowColumns, type StoredChunk, type StoredValue } from '../../src/services/requests/engine/row-columns-memory.js';
import { createPostgresFixture, refreshFixture, TEST_POSTGRES_URL, type FixtureDatabase } from './support/fixture-database.js';
import { answersOfRows, expectPagesOfTheRows, randomAggregateQuery, randomRows } from './support/random-rows.js';
import { expectRequestsWaitForRowColumns } from './support/row-columns-loading.js';
import { recount } from './support/group-stats-suite.js';
import type { GroupQuery } from '../../src/services/requests/engine/group-query.js';

/**
 * The PostgreSQL store loads the row columns that the snapshot command stored in the snapshot schema
 * and scans them in its threads for the count, facets and statistics that no summary answers: checked
 * against a plain filter of the same rows for random filter combinations, and against its SQL on a
 * snapshot without row columns.
 */
function storeOf(fixture: FixtureDatabase, options: Pick<PostgresStoreOptions, 'rowColumnsMaxBytes' | 'pageScanLoopRows'> = {}): PostgresServiceRequestStore {
  const url = new URL(fixture.databaseUrl);
  const schema = url.searchParams.get('schema') as string;
  url.searchParams.delete('schema');
  return new PostgresServiceRequestStore({ url: url.toString(), schema, snapshotCheckMs: 0, ...options });
}

/** Runs `work` on a connection of its own, given the schema of the snapshot the fixture's served schema points at (unquoted). */
async function onSnapshotSchema<T>(fixture: FixtureDatabase, work: (client: pg.Client, schema: string) => Promise<T>): Promise<T> {
  const served = new URL(fixture.databaseUrl).searchParams.get('schema') as string;
  const client = new pg.Client({ connectionString: TEST_POSTGRES_URL });
  await client.connect();
  try {
    const schema = (await client.query<{ schema_name: string }>(`SELECT schema_name FROM ${quoteIdentifier(served)}.snapshot_pointer`)).rows[0]?.schema_name as string;
    return await work(client, schema);
  } finally {
    await client.end();
  }
}

/**
 * A snapshot of `rows` of its own, a store over it (not warmed up) and a spy on the walk pool's jobs,
 * all undone after `work`.
 */
async function withOwnSnapshot(
  rows: ServiceRequestRecord[],
  work: (fixture: FixtureDatabase, store: PostgresServiceRequestStore, run: MockInstance<RowWalkPool['run']>) => Promise<void>,
): Promise<void> {
  const fixture = await createPostgresFixture({ rows });
  const store = storeOf(fixture);
  const run = vi.spyOn(RowWalkPool.prototype, 'run');
  try {
    await work(fixture, store, run);
  } finally {
    run.mockRestore();
    await store.close();
    await fixture.drop();
  }
}

describe('row column scans of the PostgreSQL store', () => {
  const random = new SeededRandom(2026);
  const rows = randomRows(random, 600);
  let fixture: FixtureDatabase;
  let store: PostgresServiceRequestStore;
  beforeAll(async () => {
    fixture = await createPostgresFixture({ rows });
    store = storeOf(fixture);
    await store.warmUp();
  }, 60_000);
  afterAll(async () => {
    await store.close();
    await fixture.drop();
  });

  it('counts, facets and the numbers per day, week or month scan the row columns to the answers of the matching rows, a map box included (300 queries)', async () => {
    const run = vi.spyOn(RowWalkPool.prototype, 'run');
    try {
      let scans = 0;
      for (let i = 0; i < 300; i += 1) {
        const { filters, column, unit } = randomAggregateQuery(random);
        const expected = answersOfRows(rows, filters, column, unit);
        run.mockClear();
        expect(await store.count(filters), JSON.stringify(filters)).toBe(expected.count);
        expect(await store.facet(column, filters), column).toEqual(expected.facet);
        expect(await store.bucketsFromRows(filters, unit), unit).toEqual(expected.buckets);
        const works = run.mock.calls.map(([, work]) => 'scan' in work);
        expect(works.every((scan) => scan), JSON.stringify(filters)).toBe(true);
        scans += works.length;
      }
      expect(scans).toBeGreaterThan(300);
    } finally {
      run.mockRestore();
    }
  });

  it('every random page is a plain filter and sort of the rows; a page that checks its rows reads only its rows\' seconds, found in the row columns on the event loop (300 queries)', async () => {
    const run = vi.spyOn(RowWalkPool.prototype, 'run');
    try {
      await expectPagesOfTheRows(store, rows, random, 300);
      expect(run.mock.calls.filter(([kind]) => kind === 'page seconds')).toEqual([]);
    } finally {
      run.mockRestore();
    }
  });

  it('the same with no rows scanned on the event loop: the seconds are found in the workers (300 queries)', async () => {
    const inWorkers = storeOf(fixture, { pageScanLoopRows: 0 });
    const run = vi.spyOn(RowWalkPool.prototype, 'run');
    try {
      await inWorkers.warmUp();
      await expectPagesOfTheRows(inWorkers, rows, random, 300);
      expect(run.mock.calls.filter(([kind]) => kind === 'page seconds').length).toBeGreaterThan(100);
    } finally {
      run.mockRestore();
      await inWorkers.close();
    }
  });

  it('the groups per month or year of one column within one value of another, or of two columns with no filter or one on either, are read from summary_pairs, no rows scanned: those of the matching rows; two values of another column are scanned', async () => {
    const run = vi.spyOn(RowWalkPool.prototype, 'run');
    try {
      const cases = [
        [{ ...NO_FILTERS, borough: ['bronx'] }, ['status'], 'month', (row: ServiceRequestRecord) => row.borough === 'bronx'],
        [{ ...NO_FILTERS, status: ['closed'] }, ['borough'], 'year', (row: ServiceRequestRecord) => row.status === 'closed'],
        [NO_FILTERS, ['status', 'borough'], 'month', () => true],
        [{ ...NO_FILTERS, borough: ['bronx', 'queens'] }, ['complaint_type', 'borough'], 'year', (row: ServiceRequestRecord) => row.borough === 'bronx' || row.borough === 'queens'],
      ] as const;
      for (const [filters, by, period, matches] of cases) {
        const query: GroupQuery = { by, period, order: 'opened', descending: true, limit: 1000 };
        run.mockClear();
        expect(await store.groups(filters, query), JSON.stringify(query)).toEqual(recount(rows.filter(matches), by, period, '-opened', 1000));
        expect(run).not.toHaveBeenCalled();
      }
      const twoValues: ListFilters = { ...NO_FILTERS, borough: ['bronx', 'queens'] };
      const query: GroupQuery = { by: ['status'], period: 'month', order: 'opened', descending: true, limit: 1000 };
      run.mockClear();
      expect(await store.groups(twoValues, query)).toEqual(recount(rows.filter((row) => row.borough === 'bronx' || row.borough === 'queens'), ['status'], 'month', '-opened', 1000));
      expect(run).toHaveBeenCalled();
    } finally {
      run.mockRestore();
    }
  });

  it('a count that arrives before the row columns are loaded waits for them and scans them; a ping waits for the first warm-up, row columns included', () =>
    expectRequestsWaitForRowColumns(() => storeOf(fixture), rows));

  it('a snapshot without row columns answers the same by SQL; a new snapshot with them is scanned once loaded', () =>
    withOwnSnapshot(rows, async (other, reading, run) => {
      await onSnapshotSchema(other, (client, schema) =>
        client.query(`DROP TABLE ${quoteIdentifier(schema)}.${ROW_COLUMNS_TABLE}, ${quoteIdentifier(schema)}.${ROW_COLUMN_VALUES_TABLE} CASCADE`),
      );
      await reading.warmUp();
      for (let i = 0; i < 100; i += 1) {
        const { filters, column, unit } = randomAggregateQuery(random);
        const expected = answersOfRows(rows, filters, column, unit);
        expect([await reading.count(filters), await reading.facet(column, filters), await reading.bucketsFromRows(filters, unit)]).toEqual([expected.count, expected.facet, expected.buckets]);
      }
      expect(run).not.toHaveBeenCalled();

      const refreshed = rows.filter((row) => row.id % 3 !== 0);
      await refreshFixture(other, refreshed, 'f1x7u4e000000002');
      await expect.poll(() => reading.snapshotId(), { timeout: 5_000 }).toBe('f1x7u4e000000002');
      await reading.warmUp();
      // Two filters: no summary answers them.
      const filters: ListFilters = { ...NO_FILTERS, borough: ['bronx', 'queens'], status: ['closed'] };
      const expected = answersOfRows(refreshed, filters, 'borough', 'week');
      await expect.poll(async () => {
        run.mockClear();
        const answers = [await reading.count(filters), await reading.facet('borough', filters), await reading.bucketsFromRows(filters, 'week')];
        return run.mock.calls.length === 3 ? answers : null;
      }, { timeout: 5_000 }).toEqual([expected.count, expected.facet, expected.buckets]);
    }), 60_000);

  it('a snapshot with a request created before 1970 has no row column tables, and its counts are read by SQL', () => {
    const early = [{ ...(rows[0] as ServiceRequestRecord), created_at: '1969-07-20T20:17:40' }, ...rows.slice(1)];
    return withOwnSnapshot(early, async (other, reading, run) => {
      const found = await onSnapshotSchema(other, async (client, schema) => {
        return (await client.query<{ chunks: string | null }>('SELECT to_regclass($1) AS chunks', [`${quoteIdentifier(schema)}.${ROW_COLUMNS_TABLE}`])).rows[0]?.chunks;
      });
      expect(found).toBeNull();
      await reading.warmUp();
      const filters: ListFilters = { ...NO_FILTERS, borough: ['bronx'], status: ['open', 'closed'] };
      expect(await reading.count(filters)).toBe(answersOfRows(early, filters, 'borough', 'day').count);
      expect(run).not.toHaveBeenCalled();
    });
  }, 60_000);

  it('row columns larger than the memory allowed are not loaded: their answers come from SQL (600 rows of 33 bytes, and the arrays per day)', async () => {
    const run = vi.spyOn(RowWalkPool.prototype, 'run');
    const filters: ListFilters = { ...NO_FILTERS, borough: ['bronx', 'queens'], status: ['closed'] };
    const expected = answersOfRows(rows, filters, 'borough', 'day').count;
    try {
      for (const [maxBytes, scans] of [
        [rowColumnsMemoryBytes(600, 9), 1],
        [rowColumnsMemoryBytes(600, 9) - 1, 0],
      ] as const) {
        const bounded = storeOf(fixture, { rowColumnsMaxBytes: maxBytes });
        try {
          await bounded.warmUp();
          run.mockClear();
          expect(await bounded.count(filters)).toBe(expected);
          expect(run.mock.calls.filter(([, work]) => 'scan' in work), `${maxBytes} bytes`).toHaveLength(scans);
        } finally {
          await bounded.close();
        }
      }
    } finally {
      run.mockRestore();
    }
  });

  it('the binary COPY of the row columns is read the same in pieces of any size, down to one byte; a cut or altered stream is refused', async () => {
    await onSnapshotSchema(fixture, async (client, schema) => {
      const table = `${quoteIdentifier(schema)}.${ROW_COLUMNS_TABLE}`;
      const chunks = (await client.query<StoredChunk>(`SELECT column_name, chunk, row_count, bytes_per_row FROM ${table} ORDER BY column_name, chunk`)).rows;
      const values = (await client.query<StoredValue>(`SELECT column_name, code, value FROM ${quoteIdentifier(schema)}.${ROW_COLUMN_VALUES_TABLE} ORDER BY column_name, code`)).rows;
      const pieces: Buffer[] = [];
      const stream = client.query(copyTo(rowColumnsCopySql(schema, chunks.map((chunk) => chunk.column_name))));
      for await (const piece of stream as AsyncIterable<Buffer>) pieces.push(piece);
      const whole = Buffer.concat(pieces);
      const pool = new pg.Pool({ connectionString: TEST_POSTGRES_URL, max: 1 });
      const loaded = await loadPostgresRowColumns(pool, schema, () => true).finally(() => pool.end());
      expect(loaded?.rows).toBe(rows.length);
      const readIn = (bytes: Buffer, size: number): RowColumns | null => {
        const assembly = RowColumnsAssembly.begin(values, chunks) as RowColumnsAssembly;
        const reader = new RowColumnCopyReader(assembly);
        for (let at = 0; at < bytes.length; at += size) if (!reader.push(bytes.subarray(at, at + size))) return null;
        return reader.finished(chunks.length) ? assembly.finish() : null;
      };
      for (const size of [1, 2, 3, 5, 7, 64, 4_096, whole.length]) {
        const columns = readIn(whole, size);
        expect(columns, `pieces of ${size} bytes`).not.toBeNull();
        expect({ codes: columns?.codes, created: columns?.created, daysToClose: columns?.daysToClose }).toEqual({ codes: loaded?.codes, created: loaded?.created, daysToClose: loaded?.daysToClose });
      }
      expect(readIn(whole.subarray(0, whole.length - 2), 7), 'without its trailer').toBeNull();
      expect(readIn(Buffer.concat([whole, Buffer.from([0])]), 7), 'with a byte after its trailer').toBeNull();
      const renamed = Buffer.from(whole);
      renamed.write('X', whole.indexOf('created_at'), 'latin1');
      expect(readIn(renamed, 7), 'a chunk of a column not listed').toBeNull();
    });
  });
});
