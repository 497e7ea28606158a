import Database from 'better-sqlite3';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { boundSeconds, createdSecondsOf, ROW_COLUMNS_TABLE } from '../../../src/snapshot/row-columns.js';
import { loadSqliteRowColumns } from '../../../src/services/requests/engine/sqlite-row-columns.js';
import { ROW_COLUMNS_WAIT_MS, releaseRowColumns, rowColumnsLoaded, rowColumnsMemoryBytes } from '../../../src/services/requests/engine/row-columns-memory.js';
import { readRows } from '../../../src/services/requests/engine/row-column-scan.js';
import { SqliteServiceRequestStore } from '../../../src/services/requests/store/sqlite-store.js';
import { RowWalkPool } from '../../../src/services/requests/engine/sqlite-row-walks.js';
import { NO_FILTERS } from '../../../src/services/requests/list-filters.js';
import type { ServiceRequestRecord } from '../../../src/services/requests/store/service-request-store.js';
import { createSqliteFixture, type FixtureDatabase } from '../../requests/support/fixture-database.js';
import { RowColumnsBuilder } from '../../../src/ingest/nyc311/row-columns-builder.js';
import { prepareRequestsService } from '../../../src/services/requests/app.js';
import { readRequestSettings } from '../../../src/services/requests/settings.js';

/** The row columns of a SQLite snapshot: their format's bounds, and the snapshots that cannot have them. */
function row(id: number, createdAt: string, descriptor: string | null = 'Pothole'): ServiceRequestRecord {
  return {
    id,
    created_at: createdAt,
    closed_at: null,
    status: 'open',
    complaint_type: 'Street Condition',
    descriptor,
    location_type: null,
    borough: id % 2 === 0 ? 'queens' : 'bronx',
    community_board: null,
    council_district: 3,
    incident_zip: null,
    channel: 'phone',
    latitude: null,
    longitude: null,
    days_to_close: null,
  };
}

const hasRowColumns = (path: string): boolean => {
  const db = new Database(path, { readonly: true });
  try {
    return (db.prepare(`SELECT count(*) AS n FROM sqlite_master WHERE name = ?`).get(ROW_COLUMNS_TABLE) as { n: number }).n === 1;
  } finally {
    db.close();
  }
};

describe('row columns', () => {
  let fixture: FixtureDatabase | null = null;
  afterEach(async () => {
    await fixture?.drop();
    fixture = null;
  });

  it('a created_at bound is the first second it does not precede: a fraction rounds up, a date is its midnight, before 1970 and from 2106 are open', () => {
    const second = createdSecondsOf('2025-01-05T10:00:03') as number;
    expect(boundSeconds('2025-01-05T10:00:03')).toBe(second);
    expect(boundSeconds('2025-01-05T10:00:02.5')).toBe(second);
    expect(boundSeconds('2025-01-05T10:00:03.000001')).toBe(second + 1);
    expect(boundSeconds('2025-01-05')).toBe(createdSecondsOf('2025-01-05T00:00:00'));
    expect(boundSeconds('0001-01-01')).toBe(Number.NEGATIVE_INFINITY);
    expect(boundSeconds('2106-01-01')).toBe(Number.POSITIVE_INFINITY);
    expect(createdSecondsOf('1969-12-31T23:59:59')).toBeNull();
    expect(createdSecondsOf('1970-01-01T00:00:00')).toBe(0);
  });

  it('a stored time in another form than YYYY-MM-DDTHH:MM:SS (a fraction, a day alone) has no seconds: a page finds its rows by their seconds\' texts', () => {
    expect(createdSecondsOf('2025-01-05T10:00:03')).not.toBeNull();
    expect(createdSecondsOf('2025-01-05T10:00:03.000')).toBeNull();
    expect(createdSecondsOf('2025-01-05')).toBeNull();
  });

  it('a snapshot with a request created before 1970 has no row columns, and its counts walk the rows', async () => {
    fixture = createSqliteFixture({ rows: [row(1, '1969-07-20T20:17:40'), row(2, '2025-01-02T10:00:00'), row(3, '2025-01-03T10:00:00')] });
    expect(hasRowColumns(fixture.databaseUrl)).toBe(false);
    const store = new SqliteServiceRequestStore(fixture.databaseUrl);
    try {
      await store.warmUp();
      expect(await store.count({ ...NO_FILTERS, borough: ['bronx'], status: ['open'] })).toBe(2);
    } finally {
      await store.close();
    }
  });

  it('a column of more than 65,535 values has no row columns (the writers store none when the builder finds no room, as for a request before 1970 above)', () => {
    const columnsOf = (values: number): ReturnType<RowColumnsBuilder['finish']> => {
      const builder = new RowColumnsBuilder();
      for (let i = 0; i < values; i++) builder.add(row(i + 1, `2025-01-0${1 + Math.floor((i * 9) / values)}T10:00:00`, `descriptor ${i}`));
      return builder.finish();
    };
    expect(columnsOf(65_535)?.filter((value) => value.column === 'descriptor')).toHaveLength(65_535);
    expect(columnsOf(65_536)).toBeNull();
  });

  it('loads the columns of every row, codes of one byte when a column has at most 255 values', async () => {
    const rows = Array.from({ length: 70_000 }, (_, i) => row(i + 1, `2025-01-0${1 + Math.floor(i / 10_000)}T10:00:00`, i % 300 === 0 ? null : `descriptor ${i % 300}`));
    fixture = createSqliteFixture({ rows });
    const db = new Database(fixture.databaseUrl, { readonly: true });
    try {
      const columns = await loadSqliteRowColumns(db, () => true);
      expect(columns?.rows).toBe(70_000);
      if (columns === null) throw new Error('no row columns');
      expect(columns.codes.borough.bytesPerRow).toBe(1);
      expect(columns.codes.descriptor.bytesPerRow).toBe(2);
      // Rows in list order: the last chunk's rows are the last day's (10,000 a day from 2025-01-01).
      const lastDay = (createdSecondsOf('2025-01-07T00:00:00') as number) / 86_400;
      expect([columns.created.dayStarts[lastDay], columns.created.dayStarts[lastDay + 1]]).toEqual([60_000, 70_000]);
      expect(readRows(columns.bytes, columns.created.secondsLow, 69_999, 70_000, 0)[0]).toBe(10 * 3_600);
      expect(columns.values.descriptor[readRows(columns.bytes, columns.codes.descriptor, 0, 1, 0)[0] as number]).toBeNull();
      releaseRowColumns(columns.bytes);
      // A load whose file was replaced meanwhile stops.
      expect(await loadSqliteRowColumns(db, () => false)).toBeNull();
    } finally {
      db.close();
    }
  });

  it('row columns larger than the memory allowed are not loaded: the counts walk the rows (33 bytes a row here: 9 one-byte codes, two for created_at, two for days_to_close, four for closed_at, sixteen for the location; and the arrays per day)', async () => {
    fixture = createSqliteFixture({ rows: [row(1, '2025-01-01T10:00:00'), row(2, '2025-01-02T10:00:00'), row(3, '2025-01-03T10:00:00')] });
    const db = new Database(fixture.databaseUrl, { readonly: true });
    try {
      expect(await loadSqliteRowColumns(db, () => true, rowColumnsMemoryBytes(3, 9))).not.toBeNull();
      expect(await loadSqliteRowColumns(db, () => true, rowColumnsMemoryBytes(3, 9) - 1)).toBeNull();
    } finally {
      db.close();
    }
    const run = vi.spyOn(RowWalkPool.prototype, 'run');
    const store = new SqliteServiceRequestStore(fixture.databaseUrl, { rowColumnsMaxBytes: rowColumnsMemoryBytes(3, 9) - 1 });
    try {
      await store.warmUp();
      expect(await store.count({ ...NO_FILTERS, borough: ['bronx'], status: ['open'] })).toBe(2);
      expect(run.mock.calls.map(([, work]) => 'scan' in work)).toEqual([false]);
    } finally {
      run.mockRestore();
      await store.close();
    }
  });

  it('a request waits for the row columns being loaded at most ROW_COLUMNS_WAIT_MS (3 s): a load that never ends, or one that fails, does not hold it', async () => {
    expect(ROW_COLUMNS_WAIT_MS).toBe(3_000);
    const started = performance.now();
    await rowColumnsLoaded(new Promise<void>(() => undefined), 50);
    expect(performance.now() - started).toBeGreaterThanOrEqual(45);
    await rowColumnsLoaded(Promise.reject(new Error('the COPY failed')), 60_000);
    let loaded = false;
    const load = new Promise<void>((resolve) => setTimeout(resolve, 20)).then(() => {
      loaded = true;
    });
    await rowColumnsLoaded(load, 60_000);
    expect(loaded).toBe(true);
  });

  it('ROW_COLUMNS_MAX_MB=0: the service as the start command prepares it loads no row columns, and a count of two filters walks the rows', async () => {
    fixture = createSqliteFixture({ rows: [row(1, '2025-01-01T10:00:00'), row(2, '2025-01-02T10:00:00'), row(3, '2025-01-03T10:00:00')] });
    const run = vi.spyOn(RowWalkPool.prototype, 'run');
    const { app } = await prepareRequestsService(readRequestSettings({ API_KEY: 'row-columns-key-0123', DATABASE_URL: fixture.databaseUrl, ROW_COLUMNS_MAX_MB: '0' }));
    try {
      await app.ready();
      const response = await app.inject({ method: 'GET', url: '/v1/service-requests/count?borough=bronx&status=open', headers: { 'x-api-key': 'row-columns-key-0123' } });
      expect(JSON.parse(response.body)).toMatchObject({ count: 2 });
      expect(run.mock.calls.map(([, work]) => 'scan' in work)).toEqual([false]);
    } finally {
      run.mockRestore();
      await app.close();
    }
  });
});
