/**
 * The synthetic history (a chosen number of rows over a span of years) and the snapshot command's
 * bounded memory: the same arguments give the same bytes, cleaning keeps exactly the rows asked for,
 * the generator and the ingestion run in a V8 heap far smaller than the rows would take, and the
 * streaming build gives the default snapshot exactly as the in-memory one does.
 */
import { execFile } from 'node:child_process';
import { SERVICE_REQUEST_FIELDS } from '../../../src/snapshot/service-request.js';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import pg from 'pg';
import { dropServedSchema } from '../../../src/snapshot/postgres-snapshot-pointer.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSnapshot, prepareSnapshot } from '../../../src/ingest/nyc311/build-snapshot.js';
import { UniqueKeySet } from '../../../src/ingest/nyc311/cleaning-rules.js';
import { readSnapshotMeta, readSnapshotMetaFromPostgres } from '../../../src/snapshot/snapshot-readers.js';
import { generateSyntheticHistory, type SyntheticHistoryOptions } from '../../../src/ingest/nyc311/synthetic-export.js';
import { REPO_ROOT } from '../../support/http.js';
import { TEST_DATABASE_URL, isolatedSchemaName } from './fixture-paths.js';

const run = promisify(execFile);
const tsx = join(REPO_ROOT, 'node_modules/.bin/tsx');
const child = join(REPO_ROOT, 'test/ingest/nyc311/bounded-memory-child.ts');

let directory: string;
beforeAll(() => {
  directory = mkdtempSync(join(tmpdir(), 'snapshot-history-'));
});
afterAll(() => {
  if (directory) rmSync(directory, { recursive: true, force: true });
});

function sha256Of(options: SyntheticHistoryOptions): string {
  const hash = createHash('sha256');
  for (const chunk of generateSyntheticHistory(options).chunks) hash.update(chunk);
  return hash.digest('hex');
}

describe('synthetic history', () => {
  it('is the same bytes for the same arguments, other bytes for another seed', () => {
    const options = { rows: 8_000, fromYear: 2024, toYear: 2025 };
    expect(sha256Of(options)).toBe(sha256Of(options));
    expect(sha256Of({ ...options, seed: 312 })).not.toBe(sha256Of(options));
  }, 60_000);

  it('cleans to exactly the rows asked for, over the years asked for, and holds the planted dirt', async () => {
    const history = { rows: 12_000, fromYear: 2023, toYear: 2025 };
    const { content, syntheticCounts } = await prepareSnapshot({ kind: 'synthetic', history }, { applyFilters: false });
    const counts = syntheticCounts!;
    expect(content.meta.row_count).toBe(12_000);
    expect(counts.requests + counts.otherAgencies).toBe(12_000);
    expect(content.meta.raw_rows_read).toBe(counts.records);
    const removed = Object.fromEntries(content.meta.cleaning_rules.map((r) => [r.id, r.rows_removed]));
    expect(removed).toMatchObject({
      duplicate_unique_key: counts.duplicateUniqueKeys,
      closed_before_created: counts.closedBeforeCreation,
      repeated_submission: counts.repeatedSubmissions,
    });
    expect(counts.repeatedSubmissions).toBeGreaterThan(100);
    expect(content.meta.period_start).toBe('2023-01-01');
    expect(content.meta.period_end).toBe('2025-12-31');
    const perYear = (year: string): number => content.rows.filter((r) => r.created_at.startsWith(year)).length;
    for (const year of ['2023', '2024', '2025']) expect(perYear(year)).toBeGreaterThan(3_500);
    // Potholes peak in March; fewer requests on Sundays than on Mondays.
    const potholes = (month: string): number => content.rows.filter((r) => r.descriptor === 'Pothole' && r.created_at.slice(5, 7) === month).length;
    expect(potholes('03')).toBeGreaterThan(potholes('08'));
    const weekday = (d: number): number => content.rows.filter((r) => new Date(`${r.created_at.slice(0, 10)}T12:00:00Z`).getUTCDay() === d).length;
    expect(weekday(0)).toBeLessThan(weekday(1) * 0.8);
  }, 60_000);

  it('is generated in a 40 MB heap whatever the number of rows (150,000 rows here)', async () => {
    const { stdout } = await run(tsx, [child, 'generate', '150000'], { cwd: REPO_ROOT, env: { ...process.env, NODE_OPTIONS: '--max-old-space-size=40' } });
    expect((JSON.parse(stdout) as { records: number }).records).toBeGreaterThan(150_000);
  }, 120_000);
});

describe('snapshot command in bounded memory', () => {
  it('loads a history of 150,000 rows into SQLite in a 64 MB heap', async () => {
    const output = join(directory, 'history.sqlite');
    const { stdout } = await run(tsx, [child, 'snapshot', '150000', output], { cwd: REPO_ROOT, env: { ...process.env, NODE_OPTIONS: '--max-old-space-size=64' } });
    expect((JSON.parse(stdout) as { row_count: number }).row_count).toBe(150_000);
    const db = new Database(output, { readonly: true });
    try {
      expect(db.prepare('SELECT count(*) FROM service_requests').pluck().get()).toBe(150_000);
    } finally {
      db.close();
    }
  }, 240_000);

  it('builds the default snapshot exactly as the in-memory preparation does: same id, rows and daily numbers', async () => {
    const output = join(directory, 'default.sqlite');
    const [built, prepared] = [await buildSnapshot({ kind: 'synthetic' }, { kind: 'sqlite', path: output }), await prepareSnapshot({ kind: 'synthetic' })];
    expect(built.meta.snapshot_id).toBe('46a605d2e8b67a81');
    expect(built.meta.content_sha256).toBe(prepared.content.meta.content_sha256);
    const db = new Database(output, { readonly: true });
    try {
      expect(readSnapshotMeta(db)).toEqual({ ...prepared.content.meta, built_at: built.meta.built_at });
      expect(db.prepare(`SELECT ${SERVICE_REQUEST_FIELDS.join(', ')} FROM service_requests ORDER BY created_at, id`).all()).toEqual(prepared.content.rows);
      const days = db.prepare(
        'SELECT borough, complaint_type, day, opened, closed_within_14_days, share_closed_within_14_days, median_days_to_close FROM daily_stats ORDER BY borough, complaint_type, day',
      );
      expect(days.all()).toEqual(prepared.content.dailyStats);
    } finally {
      db.close();
    }
  }, 180_000);

  it('loads a history into PostgreSQL with the same content as into SQLite', async () => {
    const history = { rows: 5_000, fromYear: 2024, toYear: 2025 };
    const schema = isolatedSchemaName('history');
    const sqlite = await buildSnapshot({ kind: 'synthetic', history }, { kind: 'sqlite', path: join(directory, 'small.sqlite') }, { applyFilters: false });
    const postgres = await buildSnapshot({ kind: 'synthetic', history }, { kind: 'postgres', url: TEST_DATABASE_URL, schema }, { applyFilters: false });
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    try {
      expect(postgres.meta.content_sha256).toBe(sqlite.meta.content_sha256);
      const meta = await readSnapshotMetaFromPostgres(client, schema);
      expect(meta.row_count).toBe(5_000);
      expect(Number((await client.query(`SELECT count(*) AS n FROM "${schema}".service_requests`)).rows[0].n)).toBe(5_000);
    } finally {
      await dropServedSchema(client, schema);
      await client.end();
    }
  }, 120_000);
});

describe('Unique Keys bitmap', () => {
  it('holds keys far apart and next to each other', () => {
    const keys = new UniqueKeySet();
    for (const id of [1, 2, 65_535, 65_536, 999_999_999_999_999]) {
      expect(keys.has(id)).toBe(false);
      keys.add(id);
      expect(keys.has(id)).toBe(true);
    }
    expect(keys.has(3)).toBe(false);
    expect(keys.has(999_999_999_999_998)).toBe(false);
  });
});
