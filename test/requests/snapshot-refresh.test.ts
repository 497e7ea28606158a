import { describe, expect, it } from 'vitest';
import { PostgresServiceRequestStore } from '../../src/services/requests/store/postgres-store.js';
import { textOf } from '../../src/services/requests/answers/serialized-rows.js';
import type { ListPageQuery, ServiceRequestRecord, ServiceRequestStore } from '../../src/services/requests/store/service-request-store.js';
import { SqliteServiceRequestStore } from '../../src/services/requests/store/sqlite-store.js';
import { parsePostgresTarget } from '../../src/shared/postgres-schema.js';
import { expectError } from '../support/http.js';
import { fixtureDuringSuite, inApiOrder, readFixtureRows, refreshFixture, type Backend, type FixtureDatabase } from './support/fixture-database.js';
import { EARLIER_SNAPSHOT, pageThroughRefresh, waitFor, type PagingRecord } from './support/paging-client.js';
import { json, startTestApp, type TestApp } from './support/requests-app.js';

/**
 * A snapshot refresh while the service runs, on both backends: the snapshot command loads a new
 * snapshot where the service reads (SQLite: a new file renamed onto the path; PostgreSQL: a new
 * snapshot schema published by the served schema's pointer), and the service moves to it without a
 * restart. Pages never mix the two snapshots, a cursor of the old one gets 422 invalid_cursor, and no
 * request fails meanwhile.
 */
const FIRST_ID = 'r3fre5h000000001';
const SECOND_ID = 'r3fre5h000000002';

/** The second snapshot: every request changed (so that a page shows which snapshot it came from), three gone. */
function secondSnapshotRows(rows: readonly ServiceRequestRecord[]): ServiceRequestRecord[] {
  return rows.slice(0, -3).map((row) => ({ ...row, descriptor: `${row.descriptor ?? 'none'} (refreshed)` }));
}

/** The store of the fixture; on PostgreSQL the pointer is read again every 50 ms instead of every second. */
function openStore(backend: Backend, fixture: FixtureDatabase): ServiceRequestStore {
  if (backend === 'sqlite') return new SqliteServiceRequestStore(fixture.databaseUrl);
  const target = parsePostgresTarget(fixture.databaseUrl);
  return new PostgresServiceRequestStore({ url: target.connectionString, schema: target.schema, snapshotCheckMs: 50 });
}

async function startService(backend: Backend, fixture: FixtureDatabase, store = openStore(backend, fixture)): Promise<TestApp> {
  return startTestApp(fixture.databaseUrl, {}, { store });
}

/** The same store, where the refresh `refresh` lands (and is served) right after the next listIds: between a page's two reads. */
function refreshingAfterNextListIds(store: ServiceRequestStore, refresh: () => Promise<void>, snapshotId: string): ServiceRequestStore & { landed: boolean } {
  let armed = true;
  const state = { landed: false };
  return new Proxy(store, {
    get(target, property, receiver) {
      if (property === 'landed') return state.landed;
      const value = Reflect.get(target, property, receiver) as unknown;
      if (property === 'listIds') {
        return async (query: ListPageQuery) => {
          const ids = await target.listIds(query);
          if (armed) {
            armed = false;
            await refresh();
            await waitFor(async () => (await target.snapshotId()) === snapshotId, 'the store to move to the new snapshot');
            state.landed = true;
          }
          return ids;
        };
      }
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  }) as ServiceRequestStore & { landed: boolean };
}

async function servedSnapshot(service: TestApp): Promise<string> {
  return json<{ snapshot_id: string }>(await service.get('/v1/dataset')).snapshot_id;
}

/**
 * Clients paging with pages of `limits` while `refresh` lands, once each has read pages of the first
 * snapshot; they go on until each has read pages of the second. None got a failed request or a mixed
 * page; their records.
 */
async function pagesAcrossRefresh(
  service: TestApp,
  first: readonly ServiceRequestRecord[],
  second: readonly ServiceRequestRecord[],
  limits: readonly number[],
  refresh: () => Promise<void>,
): Promise<PagingRecord[]> {
  let refreshDone!: () => void;
  const refreshed = new Promise<void>((resolve) => {
    refreshDone = resolve;
  });
  const clients = limits.map((limit) => pageThroughRefresh(service.get, first, second, refreshed, limit));
  await waitFor(() => clients.every((client) => client.record.pagesOfFirst >= 3), 'pages of the first snapshot');
  await refresh();
  await waitFor(() => clients.every((client) => client.record.pagesOfSecond >= 3), 'pages of the second snapshot');
  refreshDone();
  const records = await Promise.all(clients.map((client) => client.finished));
  for (const client of records) {
    expect(client.failures).toEqual([]);
    expect(client.mixedPages).toEqual([]);
  }
  return records;
}

describe.each(['sqlite', 'postgres'] as const)('requests: a snapshot refresh while the service runs (%s)', (backend) => {
  const first = readFixtureRows();
  const second = secondSnapshotRows(first);
  const fixture = fixtureDuringSuite(backend, { rows: first, snapshotId: FIRST_ID });

  it('clients paging across the refresh never get a mixed page nor a failed request; an old cursor gets 422', async () => {
    const service = await startService(backend, fixture);
    try {
      expect(await servedSnapshot(service)).toBe(FIRST_ID);
      const firstPage = json<{ next_cursor: string }>(await service.get('/v1/service-requests?limit=5'));

      const records = await pagesAcrossRefresh(service, first, second, [3, 4, 7], async () => {
        await refreshFixture(fixture, second, SECOND_ID);
        await waitFor(async () => (await servedSnapshot(service)) === SECOND_ID, 'the service to serve the second snapshot', 10_000);
      });
      for (const client of records) {
        expect(client.pagesOfFirst).toBeGreaterThan(0);
        expect(client.pagesOfSecond).toBeGreaterThan(0);
      }
      // The cursor of a page of the first snapshot, sent after the refresh.
      expectError(await service.get(`/v1/service-requests?limit=5&cursor=${firstPage.next_cursor}`), 422, 'invalid_cursor', ['cursor'], EARLIER_SNAPSHOT);
      // The new snapshot, whole: its rows and its count.
      const all = json<{ items: ServiceRequestRecord[] }>(await service.get('/v1/service-requests?limit=1000')).items;
      expect(all.map((row) => row.descriptor)).toEqual(expect.arrayContaining(second.map((row) => row.descriptor)));
      expect(all).toHaveLength(second.length);
      expect(json<{ count: number }>(await service.get('/v1/service-requests/count')).count).toBe(second.length);
      // A combination no summary answers (on SQLite a scan of the row columns, loaded again for the new file).
      const { descriptor, status } = second[0]!;
      const combination = `descriptor=${encodeURIComponent(descriptor ?? 'none')}&status=${status}`;
      const expected = second.filter((row) => row.descriptor === descriptor && row.status === status).length;
      expect(expected).toBeGreaterThan(0);
      expect(json<{ count: number }>(await service.get(`/v1/service-requests/count?${combination}`)).count).toBe(expected);
      expect((await service.app.inject({ method: 'GET', url: '/ready' })).statusCode).toBe(200);
    } finally {
      await service.app.close();
    }
  }, 60_000);

  it('a refresh landing between the two reads of a page: the page is built again, whole, on the new snapshot', async () => {
    await refreshFixture(fixture, first, FIRST_ID);
    // The second snapshot lacks the first five requests of the first: a page of ids read on the first and
    // rows read on the second would show the wrong requests.
    const firstInOrder = inApiOrder(first);
    const gone = new Set(firstInOrder.slice(0, 5).map((row) => row.id));
    const shifted = secondSnapshotRows(first).filter((row) => !gone.has(row.id));
    const store = refreshingAfterNextListIds(openStore(backend, fixture), () => refreshFixture(fixture, shifted, SECOND_ID), SECOND_ID);
    const service = await startService(backend, fixture, store);
    try {
      expect(await servedSnapshot(service)).toBe(FIRST_ID);
      const page = json<{ items: ServiceRequestRecord[]; next_cursor: string }>(await service.get('/v1/service-requests?limit=5'));
      expect(store.landed).toBe(true);
      expect(page.items).toEqual(inApiOrder(shifted).slice(0, 5).map((row) => JSON.parse(textOf(row)) as unknown));
      // Its cursor is the new snapshot's: the next page follows on.
      const next = json<{ items: ServiceRequestRecord[] }>(await service.get(`/v1/service-requests?limit=5&cursor=${page.next_cursor}`));
      expect(next.items.map((row) => row.id)).toEqual(inApiOrder(shifted).slice(5, 10).map((row) => row.id));
    } finally {
      await service.app.close();
    }
  }, 60_000);
});

describe('requests: loads landing faster than a replica reads the pointer again (postgres)', () => {
  const first = readFixtureRows();
  const second = secondSnapshotRows(first);
  const fixture = fixtureDuringSuite('postgres', { rows: first, snapshotId: FIRST_ID });

  it(
    'loads landing faster than the pointer is read again: a replica whose snapshot was dropped moves on at its next statement, no request fails',
    async () => {
      await refreshFixture(fixture, first, FIRST_ID);
      // The pointer is never read again by time: only a retired snapshot can move the store.
      const target = parsePostgresTarget(fixture.databaseUrl);
      const store = new PostgresServiceRequestStore({ url: target.connectionString, schema: target.schema, snapshotCheckMs: 3_600_000 });
      const service = await startService('postgres', fixture, store);
      try {
        expect(await servedSnapshot(service)).toBe(FIRST_ID);
        await pagesAcrossRefresh(service, first, second, [3, 5], async () => {
          // Two loads: the second drops the schema the service still reads (only the current and the previous are kept).
          await refreshFixture(fixture, first, 'r3fre5h000000003');
          await refreshFixture(fixture, second, SECOND_ID);
        });
        expect(await servedSnapshot(service)).toBe(SECOND_ID);
        expect(json<{ count: number }>(await service.get('/v1/service-requests/count')).count).toBe(second.length);
      } finally {
        await service.app.close();
      }
    },
    60_000,
  );
});
