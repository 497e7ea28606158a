import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { computeComplaintTypeCounts, computeDailyStats } from '../../../src/services/requests/snapshot/snapshot-aggregates.js';
import { createIndexesSql, createTablesSql, type SqlDialect } from '../../../src/services/requests/snapshot/snapshot-schema.js';
import type { ServiceRequest } from '../../../src/services/requests/snapshot/service-request.js';
import type { ServiceRequestRecord } from '../../../src/services/requests/service-request-store.js';
import { REPO_ROOT } from '../../support/http.js';

/**
 * A small hand-written snapshot (test/fixtures/requests/service-requests.csv, 38 requests of January
 * 2025) written into the snapshot's tables (the builder's own CREATE TABLE statements), in a temporary
 * SQLite file or in a PostgreSQL schema of its own, dropped afterwards.
 */
export const FIXTURE_PERIOD = { start: '2025-01-01', end: '2025-01-31' } as const;
export const FIXTURE_SNAPSHOT_ID = 'f1x7u4e000000001';
export const TEST_POSTGRES_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export const FIXTURE_RULES = [
  { id: 'duplicate_unique_key', kind: 'removal', description: 'A record whose Unique Key was already read is left out.', rows_removed: 2, values_changed: 0, applied: true },
  { id: 'closed_before_created', kind: 'removal', description: 'A request closed before it was created is left out.', rows_removed: 3, values_changed: 0, applied: true },
  { id: 'placeholder_to_null', kind: 'transformation', description: 'Unspecified, N/A and empty values become null.', rows_removed: 0, values_changed: 7, applied: true },
] as const;

const round2 = (x: number): number => Math.round(x * 100) / 100;

function daysBetween(createdAt: string, closedAt: string): number {
  // January to early March 2025: no change of daylight-saving time, local differences are real ones.
  return round2((Date.parse(`${closedAt}Z`) - Date.parse(`${createdAt}Z`)) / 86_400_000);
}

/** The fixture rows, in file order (not sorted). */
export function readFixtureRows(): ServiceRequestRecord[] {
  const lines = readFileSync(resolve(REPO_ROOT, 'test/fixtures/requests/service-requests.csv'), 'utf8').trim().split('\n');
  return lines.slice(1).map((line) => {
    const cells = line.split(',');
    const text = (i: number): string | null => (cells[i] === undefined || cells[i] === '' ? null : (cells[i] as string));
    const num = (i: number): number | null => (text(i) === null ? null : Number(text(i)));
    const created_at = text(1) as string;
    const closed_at = text(2);
    return {
      id: Number(cells[0]),
      created_at,
      closed_at,
      status: text(3) as string,
      complaint_type: text(4),
      descriptor: text(5),
      location_type: text(6),
      borough: text(7),
      community_board: text(8),
      council_district: num(9),
      incident_zip: text(10),
      channel: text(11),
      latitude: num(12),
      longitude: num(13),
      days_to_close: closed_at === null ? null : daysBetween(created_at, closed_at),
    };
  });
}

/** Rows ordered as the API orders them: created_at, then id. */
export function inApiOrder(rows: readonly ServiceRequestRecord[]): ServiceRequestRecord[] {
  return [...rows].sort((a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.id - b.id));
}

interface Statement {
  sql: string;
  values: unknown[];
}

function insertStatements(dialect: SqlDialect, schema: string | undefined, rows: readonly ServiceRequestRecord[], snapshotId: string): Statement[] {
  const t = (name: string): string => (dialect === 'postgres' && schema ? `"${schema}".${name}` : name);
  const insert = (table: string, record: Record<string, unknown>): Statement => {
    const columns = Object.keys(record);
    const marks = columns.map((_, i) => (dialect === 'postgres' ? `$${i + 1}` : '?'));
    return { sql: `INSERT INTO ${t(table)} (${columns.join(', ')}) VALUES (${marks.join(', ')})`, values: Object.values(record) };
  };
  const statements: Statement[] = [];
  for (const row of rows) statements.push(insert('service_requests', { ...row }));
  const snapshotRows = rows as unknown as ServiceRequest[];
  for (const stat of computeDailyStats(snapshotRows, FIXTURE_PERIOD.start, FIXTURE_PERIOD.end)) {
    statements.push(insert('daily_stats', { ...stat }));
  }
  for (const count of computeComplaintTypeCounts(snapshotRows)) {
    statements.push(insert('complaint_type_counts', { complaint_type: count.complaint_type, request_count: count.count }));
  }
  FIXTURE_RULES.forEach((rule, position) =>
    statements.push(insert('cleaning_rules', { position, ...rule, applied: rule.applied ? 1 : 0 })),
  );
  const sorted = inApiOrder(rows);
  statements.push(
    insert('snapshot_meta', {
      id: 1,
      snapshot_id: snapshotId,
      content_sha256: `${snapshotId}${'0'.repeat(48)}`,
      schema_version: 1,
      source_kind: 'synthetic',
      source_description: 'hand-written test fixture in the layout of NYC Open Data erm2-nwe9',
      source_dataset: 'erm2-nwe9',
      source_file_name: 'service-requests.csv',
      source_sha256: 'a'.repeat(64),
      source_seed: 311,
      generator_version: 'fixture',
      source_layout: 'standard-41',
      snapshot_date: '2025-07-01',
      row_count: rows.length,
      raw_rows_read: rows.length + 5,
      created_at_min: sorted[0]?.created_at ?? null,
      created_at_max: sorted[sorted.length - 1]?.created_at ?? null,
      period_start: FIXTURE_PERIOD.start,
      period_end: FIXTURE_PERIOD.end,
      filters_applied: 1,
      built_at: '2025-07-01T00:00:00Z',
    }),
  );
  return statements;
}

export interface FixtureDatabase {
  /** DATABASE_URL of the fixture. */
  databaseUrl: string;
  rows: ServiceRequestRecord[];
  drop(): Promise<void>;
}

export interface FixtureOptions {
  snapshotId?: string;
  rows?: ServiceRequestRecord[];
}

export function createSqliteFixture(options: FixtureOptions = {}): FixtureDatabase {
  const rows = options.rows ?? readFixtureRows();
  const folder = mkdtempSync(join(tmpdir(), 'requests-fixture-'));
  const path = join(folder, 'snapshot.sqlite');
  const database = new Database(path);
  database.transaction(() => {
    for (const sql of createTablesSql('sqlite')) database.exec(sql);
    for (const sql of createIndexesSql('sqlite')) database.exec(sql);
    for (const statement of insertStatements('sqlite', undefined, rows, options.snapshotId ?? FIXTURE_SNAPSHOT_ID)) {
      database.prepare(statement.sql).run(...(statement.values as never[]));
    }
  })();
  database.close();
  return { databaseUrl: path, rows, drop: async () => rmSync(folder, { recursive: true, force: true }) };
}

export async function createPostgresFixture(options: FixtureOptions = {}): Promise<FixtureDatabase> {
  const rows = options.rows ?? readFixtureRows();
  const schema = `requests_test_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  const client = new pg.Client({ connectionString: TEST_POSTGRES_URL });
  await client.connect();
  try {
    await client.query('BEGIN');
    await client.query(`CREATE SCHEMA "${schema}"`);
    for (const sql of createTablesSql('postgres', schema)) await client.query(sql);
    for (const sql of createIndexesSql('postgres', schema)) await client.query(sql);
    for (const statement of insertStatements('postgres', schema, rows, options.snapshotId ?? FIXTURE_SNAPSHOT_ID)) {
      await client.query(statement.sql, statement.values);
    }
    await client.query('COMMIT');
  } finally {
    await client.end();
  }
  const url = new URL(TEST_POSTGRES_URL);
  url.searchParams.set('schema', schema);
  return {
    databaseUrl: url.toString(),
    rows,
    drop: async () => {
      const dropper = new pg.Client({ connectionString: TEST_POSTGRES_URL });
      await dropper.connect();
      try {
        await dropper.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      } finally {
        await dropper.end();
      }
    },
  };
}

export type Backend = 'sqlite' | 'postgres';

export async function createFixture(backend: Backend, options: FixtureOptions = {}): Promise<FixtureDatabase> {
  return backend === 'sqlite' ? createSqliteFixture(options) : createPostgresFixture(options);
}
