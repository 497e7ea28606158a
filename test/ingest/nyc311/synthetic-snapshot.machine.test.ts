/**
 * The synthetic export, prepared in memory for this file: determinism, the exact count, the default
 * SQLite snapshot as the snapshot command builds it (streamed; the build the test files share,
 * test/support/shared-synthetic-snapshot.ts) read back against the in-memory preparation, the
 * precomputed numbers against the rows (the same load into PostgreSQL:
 * synthetic-snapshot.server.test.ts).
 */
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { medianOf, round4 } from '../../../src/snapshot/snapshot-aggregates.js';
import { readComplaintTypeCounts, readDailyStats, readSnapshotMeta } from '../../../src/snapshot/snapshot-readers.js';
import { SERVICE_REQUEST_FIELDS, type ServiceRequest } from '../../../src/snapshot/service-request.js';
import { SYNTHETIC_REQUEST_COUNT } from '../../../src/ingest/nyc311/synthetic-export.js';
import { prepareSnapshot } from '../../../src/ingest/nyc311/build-snapshot.js';
import { duringSuite } from '../../support/during-suite.js';
import { sharedSyntheticSnapshot } from '../../support/shared-synthetic-snapshot.js';
import { SERVICE_REQUEST_INDEXES } from './export-snapshot.js';

/** SHA-256 of the synthetic export's bytes for seed 311, generator 1.1.0. Changes only with the generator. */
const SYNTHETIC_EXPORT_SHA256 = '20266ea38a7bae3d43701eac569e79babbd52c64a170b2a534bdb1b0da16decb';

// Prepared in memory, and built by the snapshot command's streaming build: the two must agree.
const built = duringSuite(
  async () => {
    const path = await sharedSyntheticSnapshot();
    return { prepared: await prepareSnapshot({ kind: 'synthetic' }), db: new Database(path, { readonly: true }) };
  },
  (snapshot) => snapshot.db.close(),
  180_000,
);

describe('synthetic export', () => {
  it('yields exactly 109,915 requests after cleaning', () => {
    expect(built.prepared.content.rows).toHaveLength(SYNTHETIC_REQUEST_COUNT);
    expect(built.prepared.content.meta.row_count).toBe(109_915);
  });

  it('holds the dirt it was built with, and cleaning removes exactly that', () => {
    const counts = built.prepared.syntheticCounts!;
    const removed = Object.fromEntries(built.prepared.content.meta.cleaning_rules.map((r) => [r.id, r.rows_removed]));
    expect(removed).toMatchObject({
      malformed_record: 0,
      agency_not_dot: counts.otherAgencies,
      created_outside_period: counts.outsidePeriod,
      duplicate_unique_key: counts.duplicateUniqueKeys,
      closed_before_created: counts.closedBeforeCreation,
      repeated_submission: counts.repeatedSubmissions,
    });
    expect(counts.repeatedSubmissions).toBeGreaterThan(1000);
    expect(built.prepared.content.meta.raw_rows_read).toBe(counts.records);
    const changed = Object.fromEntries(built.prepared.content.meta.cleaning_rules.map((r) => [r.id, r.values_changed]));
    expect(changed.placeholder_to_null).toBeGreaterThan(1000);
    expect(changed.canonical_spelling).toBeGreaterThan(100);
    expect(changed.status_code).toBeGreaterThan(100);
    expect(changed.incident_zip_text).toBeGreaterThan(100);
    expect(changed.council_district_integer).toBeGreaterThan(50);
  });

  it('is the same bytes on every run (fixed seed)', () => {
    // Two generations: the one prepared here and the one the SQLite snapshot was streamed from (in
    // this run or an earlier one of the same code), each hashed over the export's bytes as read.
    expect(built.prepared.content.meta.source.sha256).toBe(SYNTHETIC_EXPORT_SHA256);
    expect(readSnapshotMeta(built.db).source.sha256).toBe(SYNTHETIC_EXPORT_SHA256);
  });

  it('looks like DOT data: all six months, every borough and channel, several complaint types', () => {
    const rows = built.prepared.content.rows;
    expect(rows[0]!.created_at >= '2025-01-01T00:00:00').toBe(true);
    expect(rows[rows.length - 1]!.created_at < '2025-07-01T00:00:00').toBe(true);
    const share = (pred: (r: ServiceRequest) => boolean): number => rows.filter(pred).length / rows.length;
    expect(share((r) => r.borough === 'brooklyn')).toBeGreaterThan(0.25);
    expect(share((r) => r.borough === 'staten_island')).toBeLessThan(0.12);
    expect(share((r) => r.status === 'closed')).toBeGreaterThan(0.8);
    for (const channel of ['online', 'phone', 'mobile', 'other', null]) expect(share((r) => r.channel === channel)).toBeGreaterThan(0);
    const counts = built.prepared.content.complaintTypeCounts;
    expect(counts[0]!.complaint_type).toBe('Street Condition');
    expect(counts.length).toBeGreaterThanOrEqual(10);
    // Potholes peak in spring: March has more than January and June.
    const potholes = (month: string): number => rows.filter((r) => r.descriptor === 'Pothole' && r.created_at.startsWith(month)).length;
    expect(potholes('2025-03')).toBeGreaterThan(potholes('2025-01'));
    expect(potholes('2025-03')).toBeGreaterThan(potholes('2025-06'));
    // Fewer requests on Sundays than on Mondays.
    const weekday = (d: number): number => rows.filter((r) => new Date(`${r.created_at.slice(0, 10)}T12:00:00Z`).getUTCDay() === d).length;
    expect(weekday(0)).toBeLessThan(weekday(1) * 0.8);
  });
});

describe('SQLite snapshot of the synthetic export', () => {
  it('reads back exactly the cleaned rows of the in-memory preparation', () => {
    const rows = built.db.prepare(`SELECT ${SERVICE_REQUEST_FIELDS.join(', ')} FROM service_requests ORDER BY created_at, id`).all() as ServiceRequest[];
    expect(rows).toHaveLength(109_915);
    expect(rows).toEqual(built.prepared.content.rows);
  });

  it('holds the metadata: source, seed, snapshot date, counts, range, rules', () => {
    const meta = readSnapshotMeta(built.db);
    expect(meta).toEqual({ ...built.prepared.content.meta, built_at: meta.built_at });
    expect(meta.source).toMatchObject({
      kind: 'synthetic',
      description: 'synthetic, in the layout of NYC Open Data erm2-nwe9 (seed 311, generator 1.1.0)',
      seed: 311,
      generator_version: '1.1.0',
      layout: 'extended',
      format: 'portal_csv',
      column_count: 43,
      missing_columns: [],
    });
    expect(meta.snapshot_date).toBe('2025-07-01');
    expect(meta.snapshot_id).toMatch(/^[0-9a-f]{16}$/);
    // Same export, same cleaning: same snapshot id on every build (changes when the cleaning does).
    expect(meta.snapshot_id).toBe('46a605d2e8b67a81');
    expect(meta.period_start).toBe('2025-01-01');
    expect(meta.period_end).toBe('2025-06-30');
    expect(meta.cleaning_rules.map((r) => r.id)).toContain('repeated_submission');
  });

  it('holds the daily numbers of the in-memory preparation, row for row', () => {
    const days = built.db.prepare(
      'SELECT borough, complaint_type, day, opened, closed_within_14_days, share_closed_within_14_days, median_days_to_close FROM daily_stats ORDER BY borough, complaint_type, day',
    );
    expect(days.all()).toEqual(built.prepared.content.dailyStats);
  });

  it('has the indexes for the filters and keyset pages, and uses them', () => {
    const names = (built.db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'service_requests'").all() as { name: string }[]).map((r) => r.name);
    expect(names).toEqual(expect.arrayContaining(SERVICE_REQUEST_INDEXES));
    const plan = (sql: string, ...params: unknown[]): string =>
      (built.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[]).map((r) => r.detail).join('; ');
    expect(plan('SELECT * FROM service_requests WHERE (created_at, id) > (?, ?) ORDER BY created_at, id LIMIT 51', '2025-03-01T00:00:00', 0)).toMatch(
      /USING INDEX service_requests_created_at_id/,
    );
    expect(
      plan('SELECT * FROM service_requests WHERE borough = ? AND (created_at, id) > (?, ?) ORDER BY created_at, id LIMIT 51', 'queens', '2025-03-01T00:00:00', 0),
    ).toMatch(/USING INDEX service_requests_borough_created_at_id/);
    expect(plan('SELECT * FROM service_requests WHERE status = ? ORDER BY created_at, id LIMIT 51', 'open')).not.toMatch(/TEMP B-TREE/);
    // Several values of a filter: one walk per value, merged in list order without a sort.
    const index = 'INDEXED BY service_requests_borough_created_at_id';
    const merged = plan(
      `SELECT id, created_at FROM service_requests ${index} WHERE borough = ? UNION ALL SELECT id, created_at FROM service_requests ${index} WHERE borough IS NULL ORDER BY created_at, id LIMIT 51`,
      'queens',
    );
    expect(merged).toMatch(/MERGE \(UNION ALL\)/);
    expect(merged).not.toMatch(/TEMP B-TREE/);
  });

  it('counts the rows of each filter value (filter_value_counts: the cost of a page walk)', () => {
    const counted = built.db.prepare("SELECT row_count FROM filter_value_counts WHERE column_name = 'borough' AND value = 'queens'").pluck().get();
    expect(counted).toBe(built.db.prepare("SELECT count(*) FROM service_requests WHERE borough = 'queens'").pluck().get());
    const total = built.db.prepare("SELECT sum(row_count) FROM filter_value_counts WHERE column_name = 'council_district'").pluck().get();
    expect(total).toBe(built.db.prepare('SELECT count(*) FROM service_requests').pluck().get());
  });

  it('has daily numbers for 181 days that match the rows, for all and for each scope', () => {
    const scopes: { borough?: 'queens'; complaintType?: string }[] = [{}, { borough: 'queens' }, { complaintType: 'Sidewalk Condition' }, { borough: 'queens', complaintType: 'Street Condition' }];
    for (const scope of scopes) {
      const days = readDailyStats(built.db, scope);
      expect(days).toHaveLength(181);
      expect(days[0]!.day).toBe('2025-01-01');
      expect(days[180]!.day).toBe('2025-06-30');
      const rows = built.prepared.content.rows.filter(
        (r) => (scope.borough === undefined || r.borough === scope.borough) && (scope.complaintType === undefined || r.complaint_type === scope.complaintType),
      );
      const byDay = new Map<string, ServiceRequest[]>();
      for (const r of rows) {
        const key = r.created_at.slice(0, 10);
        const list = byDay.get(key);
        if (list) list.push(r);
        else byDay.set(key, [r]);
      }
      for (const day of days) {
        const opened = byDay.get(day.day) ?? [];
        const closeDays = opened.map((r) => r.days_to_close).filter((d): d is number => d !== null);
        const within = closeDays.filter((d) => d <= 14).length;
        expect(day).toEqual({
          day: day.day,
          opened: opened.length,
          closed_within_14_days: within,
          share_closed_within_14_days: opened.length === 0 ? null : round4(within / opened.length),
          median_days_to_close: medianOf(closeDays),
        });
      }
    }
  });

  it('agrees with SQL over the rows for every scope and day', () => {
    const fromRows = built.db
      .prepare(
        `SELECT substr(created_at, 1, 10) AS day, count(*) AS opened, sum(days_to_close <= 14) AS within
         FROM service_requests GROUP BY day ORDER BY day`,
      )
      .all() as { day: string; opened: number; within: number }[];
    const stored = built.db.prepare("SELECT day, opened, closed_within_14_days AS within FROM daily_stats WHERE borough = '*' AND complaint_type = '*' ORDER BY day").all();
    expect(stored).toEqual(fromRows);
    const perScope = built.db
      .prepare(
        `SELECT d.borough, d.complaint_type, sum(d.opened) AS opened FROM daily_stats d WHERE d.borough <> '*' AND d.complaint_type <> '*' GROUP BY 1, 2`,
      )
      .all() as { borough: string; complaint_type: string; opened: number }[];
    const counted = built.db.prepare('SELECT borough, complaint_type, count(*) AS opened FROM service_requests WHERE borough IS NOT NULL AND complaint_type IS NOT NULL GROUP BY 1, 2').all();
    expect(perScope.filter((r) => r.opened > 0)).toEqual(expect.arrayContaining(counted as never[]));
    expect(perScope.filter((r) => r.opened > 0)).toHaveLength(counted.length);
  });

  it('answers 181 days of zeros for a complaint type that does not occur', () => {
    const days = readDailyStats(built.db, { complaintType: 'No Such Type' });
    expect(days).toHaveLength(181);
    expect(days.every((d) => d.opened === 0 && d.median_days_to_close === null && d.share_closed_within_14_days === null)).toBe(true);
  });

  it('counts complaint types like the rows, largest first', () => {
    const counts = readComplaintTypeCounts(built.db);
    const fromRows = built.db
      .prepare('SELECT complaint_type, count(*) AS count FROM service_requests WHERE complaint_type IS NOT NULL GROUP BY complaint_type ORDER BY count DESC, complaint_type')
      .all();
    expect(counts).toEqual(fromRows);
    expect(counts.reduce((a, c) => a + c.count, 0)).toBe(109_915 - built.prepared.content.rows.filter((r) => r.complaint_type === null).length);
  });
});
