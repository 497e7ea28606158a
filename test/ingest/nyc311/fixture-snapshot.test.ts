/**
 * The hand-written export through the whole command: the SQLite snapshot, its precomputed numbers,
 * ensureSnapshot under concurrency, the PostgreSQL target's schema (the PostgreSQL snapshot in
 * fixture-snapshot.server.test.ts, the command line and two processes at once in
 * fixture-snapshot.process.test.ts).
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { ensureSnapshot, isCurrentSnapshot } from '../../../src/ingest/nyc311/ensure-snapshot.js';
import { parsePostgresTarget } from '../../../src/shared/postgres-schema.js';
import { readComplaintTypeCounts, readDailyStats, readSnapshotMeta } from '../../../src/snapshot/snapshot-readers.js';
import { SERVICE_REQUEST_FIELDS, type ServiceRequest } from '../../../src/snapshot/service-request.js';
import { FILTERED_COLUMNS, createTablesSql, filterIndexName } from '../../../src/snapshot/snapshot-schema.js';
import { duringSuite } from '../../support/during-suite.js';
import { exportSnapshot } from './export-snapshot.js';
import { COUNCIL_DISTRICT_FIXTURE, STANDARD_41_FIXTURE } from './fixture-paths.js';

const built = duringSuite(() => exportSnapshot({ kind: 'file', path: COUNCIL_DISTRICT_FIXTURE }, 'built'), (snapshot) => snapshot.remove());

describe('SQLite snapshot of the hand-written export', () => {
  it('reads back the cleaned rows with their types', () => {
    const rows = built.db.prepare(`SELECT ${SERVICE_REQUEST_FIELDS.join(', ')} FROM service_requests ORDER BY created_at, id`).all() as ServiceRequest[];
    expect(rows).toEqual(built.prepared.content.rows);
    expect(rows).toHaveLength(15);
    const row1001 = rows.find((r) => r.id === 1001)!;
    expect(row1001).toEqual({
      id: 1001,
      created_at: '2025-01-15T08:00:00',
      closed_at: '2025-01-17T08:00:00',
      status: 'closed',
      complaint_type: 'Street Condition',
      descriptor: 'Pothole',
      location_type: 'Street',
      borough: 'brooklyn',
      community_board: '06 BROOKLYN',
      council_district: 39,
      incident_zip: '11215',
      channel: 'phone',
      latitude: 40.6712345678,
      longitude: -73.9812345678,
      days_to_close: 2,
    });
  });

  it('has 181 days of numbers, days without requests as zeros', () => {
    const days = readDailyStats(built.db);
    expect(days).toHaveLength(181);
    expect(days.filter((d) => d.opened > 0).map((d) => [d.day, d.opened])).toEqual([
      ['2025-01-01', 1],
      ['2025-01-15', 2],
      ['2025-03-03', 1],
      ['2025-03-08', 1],
      ['2025-03-09', 1],
      ['2025-04-04', 1],
      ['2025-05-05', 2],
      ['2025-05-06', 1],
      ['2025-05-07', 1],
      ['2025-05-08', 1],
      ['2025-05-09', 1],
      ['2025-05-10', 1],
      ['2025-06-30', 1],
    ]);
    expect(days.find((d) => d.day === '2025-02-01')).toEqual({
      day: '2025-02-01',
      opened: 0,
      closed_within_14_days: 0,
      share_closed_within_14_days: null,
      median_days_to_close: null,
    });
    // 2025-01-15: 1001 closed in 2 days, 1009 open: share 0.5, median over the closed one.
    expect(days.find((d) => d.day === '2025-01-15')).toEqual({
      day: '2025-01-15',
      opened: 2,
      closed_within_14_days: 1,
      share_closed_within_14_days: 0.5,
      median_days_to_close: 2,
    });
    // Requests with no borough count in "all" only.
    expect(readDailyStats(built.db, { borough: 'brooklyn' }).find((d) => d.day === '2025-05-06')!.opened).toBe(0);
    expect(readDailyStats(built.db, { borough: 'queens', complaintType: 'Street Light Condition' }).find((d) => d.day === '2025-01-01')!.opened).toBe(1);
  });

  it('counts complaint types, largest first', () => {
    expect(readComplaintTypeCounts(built.db)).toEqual([
      { complaint_type: 'Street Condition', count: 10 },
      { complaint_type: 'Bridge Condition', count: 2 },
      { complaint_type: 'Sidewalk Condition', count: 1 },
      { complaint_type: 'Street Light Condition', count: 1 },
      { complaint_type: 'Traffic Signal Condition', count: 1 },
    ]);
  });

  it('describes its source: the file, its SHA-256 and layout; the snapshot date from its latest time', () => {
    const meta = readSnapshotMeta(built.db);
    expect(meta.source).toMatchObject({ kind: 'file', file_name: 'dot-2025-with-council-district.csv', seed: null, layout: 'extended' });
    expect(meta.source.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(meta.snapshot_date).toBe('2025-07-01');
    expect(meta.row_count).toBe(15);
    expect(meta.raw_rows_read).toBe(23);
    expect(meta.created_at_min).toBe('2025-01-01T00:00:00');
    expect(meta.created_at_max).toBe('2025-06-30T23:59:59');
    expect(meta.filters_applied).toBe(true);
    expect(meta.snapshot_id).toBe(built.prepared.content.meta.snapshot_id);
  });

  it('refuses a status, borough or channel outside its codes; borough and channel may be null', () => {
    const scratch = new Database(':memory:');
    scratch.exec(createTablesSql('sqlite')[0] as string);
    const insert = scratch.prepare('INSERT INTO service_requests (id, created_at, status, borough, channel) VALUES (?, ?, ?, ?, ?)');
    expect(() => insert.run(1, '2025-01-01T00:00:00', 'closed', 'queens', 'phone')).not.toThrow();
    expect(() => insert.run(2, '2025-01-01T00:00:00', 'closed', null, null)).not.toThrow();
    expect(() => insert.run(3, '2025-01-01T00:00:00', 'Closed', 'queens', 'phone')).toThrow(/CHECK constraint failed/);
    expect(() => insert.run(4, '2025-01-01T00:00:00', 'closed', 'QUEENS', 'phone')).toThrow(/CHECK constraint failed/);
    expect(() => insert.run(5, '2025-01-01T00:00:00', 'closed', 'queens', 'fax')).toThrow(/CHECK constraint failed/);
    scratch.close();
  });
});

describe('ensureSnapshot', () => {
  it('builds the file once when absent, safely when called twice at the same time, and leaves no temporary file', async () => {
    const path = join(built.directory, 'ensure', 'snapshot.sqlite');
    const options = { input: { kind: 'file', path: STANDARD_41_FIXTURE } as const };
    const [a, b] = await Promise.all([ensureSnapshot(path, options), ensureSnapshot(path, options)]);
    expect([a.built, b.built].filter(Boolean)).toHaveLength(1);
    expect(existsSync(path)).toBe(true);
    expect(readdirSync(join(built.directory, 'ensure'))).toEqual(['snapshot.sqlite']);
    const again = await ensureSnapshot(path, options);
    expect(again.built).toBe(false);
    const check = new Database(path, { readonly: true });
    expect(readSnapshotMeta(check).row_count).toBe(15);
    check.close();
  });

  it('builds the file again when it was written in an older layout (another schema_version)', async () => {
    const path = join(built.directory, 'ensure-older', 'snapshot.sqlite');
    const options = { input: { kind: 'file', path: STANDARD_41_FIXTURE } as const };
    expect((await ensureSnapshot(path, options)).built).toBe(true);
    const older = new Database(path);
    older.prepare('UPDATE snapshot_meta SET schema_version = schema_version - 1').run();
    older.close();
    expect(isCurrentSnapshot(path)).toBe(false);
    expect((await ensureSnapshot(path, options)).built).toBe(true);
    expect(isCurrentSnapshot(path)).toBe(true);
  });

  it('builds the file again when it lacks the index of a filtered column (a filter added since, with no version bump)', async () => {
    const path = join(built.directory, 'ensure-filter', 'snapshot.sqlite');
    const options = { input: { kind: 'file', path: STANDARD_41_FIXTURE } as const };
    expect((await ensureSnapshot(path, options)).built).toBe(true);
    const older = new Database(path);
    older.exec(`DROP INDEX ${filterIndexName(FILTERED_COLUMNS.at(-1)!)}`);
    older.close();
    expect(isCurrentSnapshot(path)).toBe(false);
    expect((await ensureSnapshot(path, options)).built).toBe(true);
    expect(isCurrentSnapshot(path)).toBe(true);
  });
});

describe('the PostgreSQL target of the snapshot command', () => {
  it('takes the schema from ?schema= and refuses names that are not plain identifiers', () => {
    expect(parsePostgresTarget('postgres://u@h:5432/db?schema=abc_1')).toEqual({ connectionString: 'postgres://u@h:5432/db', schema: 'abc_1' });
    expect(parsePostgresTarget('postgres://u@h:5432/db').schema).toBe('public');
    expect(() => parsePostgresTarget('postgres://u@h/db?schema=a;drop')).toThrow(/Invalid PostgreSQL schema name/);
  });
});
