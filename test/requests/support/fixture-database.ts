import { createHash } from 'node:crypto';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { dropServedSchema } from '../../../src/snapshot/postgres-snapshot-pointer.js';
import { writePostgresSnapshot } from '../../../src/ingest/nyc311/postgres-snapshot-writer.js';
import { computeComplaintTypeCounts, computeDailyStats } from '../../../src/snapshot/snapshot-aggregates.js';
import type { SnapshotContent } from '../../../src/ingest/nyc311/snapshot-content.js';
import { SNAPSHOT_SCHEMA_VERSION } from '../../../src/snapshot/snapshot-schema.js';
import type { SnapshotMeta } from '../../../src/snapshot/service-request.js';
import { writeSqliteSnapshot } from '../../../src/ingest/nyc311/sqlite-snapshot-writer.js';
import type { ServiceRequestRecord } from '../../../src/services/requests/store/service-request-store.js';
import { isPostgresUrl } from '../../../src/shared/postgres-schema.js';
import { REPO_ROOT } from '../../support/http.js';
import { duringSuite } from '../../support/during-suite.js';

/**
 * A small hand-written snapshot (test/fixtures/requests/service-requests.csv, 38 requests of January
 * 2025) stored by the snapshot builder's own writers, in a temporary SQLite file or in a PostgreSQL
 * schema of its own, dropped afterwards.
 */
export const FIXTURE_PERIOD = { start: '2025-01-01', end: '2025-01-31' } as const;
export const FIXTURE_SNAPSHOT_ID = 'f1x7u4e000000001';
export const TEST_POSTGRES_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export const FIXTURE_RULES: SnapshotMeta['cleaning_rules'] = [
  { id: 'duplicate_unique_key', kind: 'removal', description: 'A record whose Unique Key was already read is left out.', rows_removed: 2, values_changed: 0, applied: true },
  { id: 'closed_before_created', kind: 'removal', description: 'A request closed before it was created is left out.', rows_removed: 3, values_changed: 0, applied: true },
  { id: 'placeholder_to_null', kind: 'transformation', description: 'Unspecified, N/A and empty values become null.', rows_removed: 0, values_changed: 7, applied: true },
];

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
    const text = (i: number): string | null => (cells[i] === undefined || cells[i] === '' ? null : cells[i]);
    const num = (i: number): number | null => (text(i) === null ? null : Number(text(i)));
    const created_at = text(1) as string;
    const closed_at = text(2);
    return {
      id: Number(cells[0]),
      created_at,
      closed_at,
      status: text(3) as ServiceRequestRecord['status'],
      complaint_type: text(4),
      descriptor: text(5),
      location_type: text(6),
      borough: text(7) as ServiceRequestRecord['borough'],
      community_board: text(8),
      council_district: num(9),
      incident_zip: text(10),
      channel: text(11) as ServiceRequestRecord['channel'],
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

/** The fixture as the snapshot writers take it: rows in (created_at, id) order, numbers, metadata. */
export function fixtureContent(rows: readonly ServiceRequestRecord[], snapshotId: string): SnapshotContent {
  const sorted = inApiOrder(rows);
  const meta: SnapshotMeta = {
    snapshot_id: snapshotId,
    content_sha256: `${snapshotId}${'0'.repeat(48)}`,
    schema_version: SNAPSHOT_SCHEMA_VERSION,
    source: {
      kind: 'synthetic',
      description: 'hand-written test fixture in the layout of NYC Open Data erm2-nwe9',
      dataset: 'erm2-nwe9',
      file_name: 'service-requests.csv',
      sha256: 'a'.repeat(64),
      seed: 311,
      generator_version: 'fixture',
      layout: 'standard-41',
      format: 'portal_csv',
      column_count: 41,
      missing_columns: ['Council District'],
    },
    snapshot_date: '2025-07-01',
    row_count: sorted.length,
    raw_rows_read: sorted.length + 5,
    created_at_min: sorted[0]?.created_at ?? null,
    created_at_max: sorted[sorted.length - 1]?.created_at ?? null,
    period_start: FIXTURE_PERIOD.start,
    period_end: FIXTURE_PERIOD.end,
    filters_applied: true,
    cleaning_rules: FIXTURE_RULES.map((rule) => ({ ...rule })),
    built_at: '2025-07-01T00:00:00Z',
  };
  return {
    rows: sorted,
    dailyStats: computeDailyStats(sorted, FIXTURE_PERIOD.start, FIXTURE_PERIOD.end),
    complaintTypeCounts: computeComplaintTypeCounts(sorted),
    meta,
  };
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

/**
 * The files the SQLite writer wrote in this process, by their content: the writer's bytes depend on the
 * rows and the snapshot id only (fixtureContent fixes the rest), so each content is written once and
 * copied for every fixture of it (many test files build an app on the same 38 rows per test). Removed
 * when the process exits.
 */
const writtenFiles = new Map<string, string>();
let writtenFolder: string | undefined;

function writtenOnce(rows: readonly ServiceRequestRecord[], snapshotId: string): string {
  const key = createHash('sha256').update(snapshotId).update('\0').update(JSON.stringify(rows)).digest('hex');
  const known = writtenFiles.get(key);
  if (known !== undefined) return known;
  if (writtenFolder === undefined) {
    const folder = mkdtempSync(join(tmpdir(), 'requests-fixture-written-'));
    process.once('exit', () => rmSync(folder, { recursive: true, force: true }));
    writtenFolder = folder;
  }
  const path = join(writtenFolder, `${key.slice(0, 16)}.sqlite`);
  writeSqliteSnapshot(path, fixtureContent(rows, snapshotId));
  writtenFiles.set(key, path);
  return path;
}

/** A temporary SQLite file written by the snapshot builder's SQLite writer. */
export function createSqliteFixture(options: FixtureOptions = {}): FixtureDatabase {
  const rows = options.rows ?? readFixtureRows();
  const folder = mkdtempSync(join(tmpdir(), 'requests-fixture-'));
  const path = join(folder, 'snapshot.sqlite');
  copyFileSync(writtenOnce(rows, options.snapshotId ?? FIXTURE_SNAPSHOT_ID), path);
  return { databaseUrl: path, rows, drop: () => {
      rmSync(folder, { recursive: true, force: true });
      return Promise.resolve();
    } };
}

/** A schema of its own in the test PostgreSQL, loaded by the snapshot builder's PostgreSQL loader. */
export async function createPostgresFixture(options: FixtureOptions = {}): Promise<FixtureDatabase> {
  const rows = options.rows ?? readFixtureRows();
  // In mixed case: every name of it must be quoted wherever it goes into SQL.
  const schema = `Requests_Test_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  const url = new URL(TEST_POSTGRES_URL);
  url.searchParams.set('schema', schema);
  await writePostgresSnapshot(url.toString(), fixtureContent(rows, options.snapshotId ?? FIXTURE_SNAPSHOT_ID));
  return {
    databaseUrl: url.toString(),
    rows,
    drop: () => dropPostgresSchema(schema),
  };
}

export async function dropPostgresSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: TEST_POSTGRES_URL });
  await client.connect();
  try {
    await dropServedSchema(client, schema);
  } finally {
    await client.end();
  }
}

/**
 * Loads another snapshot where the fixture is, as the snapshot command would while the service runs: a
 * new SQLite file renamed onto the path, or a new snapshot schema published under the served schema.
 */
export async function refreshFixture(fixture: Pick<FixtureDatabase, 'databaseUrl'>, rows: readonly ServiceRequestRecord[], snapshotId: string): Promise<void> {
  const content = fixtureContent(rows, snapshotId);
  if (isPostgresUrl(fixture.databaseUrl)) await writePostgresSnapshot(fixture.databaseUrl, content);
  else writeSqliteSnapshot(fixture.databaseUrl, content);
}

export type Backend = 'sqlite' | 'postgres';

export async function createFixture(backend: Backend, options: FixtureOptions = {}): Promise<FixtureDatabase> {
  return backend === 'sqlite' ? createSqliteFixture(options) : createPostgresFixture(options);
}

/** A fixture database made before the suite's first test and dropped after its last (SQLite by default). */
export function fixtureDuringSuite(backend: Backend = 'sqlite', options: FixtureOptions = {}): FixtureDatabase {
  return duringSuite(() => createFixture(backend, options), (fixture) => fixture.drop());
}
