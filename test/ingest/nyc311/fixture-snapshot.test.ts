/**
 * The hand-written export through the whole command: SQLite and PostgreSQL snapshots, their
 * precomputed numbers, ensureSnapshot under concurrency, and the command line.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import pg from 'pg';
import { dropServedSchema } from '../../../src/snapshot/postgres-snapshot-pointer.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSnapshot, prepareSnapshot, type PreparedSnapshot } from '../../../src/ingest/nyc311/build-snapshot.js';
import { ensureSnapshot, isCurrentSnapshot } from '../../../src/ingest/nyc311/ensure-snapshot.js';
import { parsePostgresTarget } from '../../../src/shared/postgres-schema.js';
import {
  readComplaintTypeCounts,
  readComplaintTypeCountsFromPostgres,
  readDailyStats,
  readDailyStatsFromPostgres,
  readSnapshotMeta,
  readSnapshotMetaFromPostgres,
} from '../../../src/snapshot/snapshot-readers.js';
import { SERVICE_REQUEST_FIELDS, type ServiceRequest } from '../../../src/snapshot/service-request.js';
import { FILTERED_COLUMNS, createTablesSql, filterIndexName } from '../../../src/snapshot/snapshot-schema.js';
import {
  COUNCIL_DISTRICT_FIXTURE,
  MALFORMED_FIXTURE,
  STANDARD_41_FIXTURE,
  TEST_DATABASE_URL,
  isolatedSchemaName,
} from './fixture-paths.js';
import { REPO_ROOT } from '../../support/http.js';

const run = promisify(execFile);

let directory: string;
let prepared: PreparedSnapshot;
let db: Database.Database | undefined;

beforeAll(async () => {
  directory = mkdtempSync(join(tmpdir(), 'snapshot-fixture-'));
  prepared = await prepareSnapshot({ kind: 'file', path: COUNCIL_DISTRICT_FIXTURE });
  await buildSnapshot({ kind: 'file', path: COUNCIL_DISTRICT_FIXTURE }, { kind: 'sqlite', path: join(directory, 'fixture.sqlite') });
  db = new Database(join(directory, 'fixture.sqlite'), { readonly: true });
});

afterAll(() => {
  db?.close();
  if (directory) rmSync(directory, { recursive: true, force: true });
});

describe('SQLite snapshot of the hand-written export', () => {
  it('reads back the cleaned rows with their types', () => {
    const rows = db!.prepare(`SELECT ${SERVICE_REQUEST_FIELDS.join(', ')} FROM service_requests ORDER BY created_at, id`).all() as ServiceRequest[];
    expect(rows).toEqual(prepared.content.rows);
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
    const days = readDailyStats(db!);
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
    expect(readDailyStats(db!, { borough: 'brooklyn' }).find((d) => d.day === '2025-05-06')!.opened).toBe(0);
    expect(readDailyStats(db!, { borough: 'queens', complaintType: 'Street Light Condition' }).find((d) => d.day === '2025-01-01')!.opened).toBe(1);
  });

  it('counts complaint types, largest first', () => {
    expect(readComplaintTypeCounts(db!)).toEqual([
      { complaint_type: 'Street Condition', count: 10 },
      { complaint_type: 'Bridge Condition', count: 2 },
      { complaint_type: 'Sidewalk Condition', count: 1 },
      { complaint_type: 'Street Light Condition', count: 1 },
      { complaint_type: 'Traffic Signal Condition', count: 1 },
    ]);
  });

  it('describes its source: the file, its SHA-256 and layout; the snapshot date from its latest time', () => {
    const meta = readSnapshotMeta(db!);
    expect(meta.source).toMatchObject({ kind: 'file', file_name: 'dot-2025-with-council-district.csv', seed: null, layout: 'extended' });
    expect(meta.source.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(meta.snapshot_date).toBe('2025-07-01');
    expect(meta.row_count).toBe(15);
    expect(meta.raw_rows_read).toBe(23);
    expect(meta.created_at_min).toBe('2025-01-01T00:00:00');
    expect(meta.created_at_max).toBe('2025-06-30T23:59:59');
    expect(meta.filters_applied).toBe(true);
    expect(meta.snapshot_id).toBe(prepared.content.meta.snapshot_id);
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

describe('PostgreSQL snapshot of the hand-written export (real database, isolated schema)', () => {
  const schema = isolatedSchemaName('snapshot_fixture');
  let pool: pg.Pool | undefined;

  beforeAll(async () => {
    pool = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 2 });
    await buildSnapshot({ kind: 'file', path: COUNCIL_DISTRICT_FIXTURE }, { kind: 'postgres', url: `${TEST_DATABASE_URL}?schema=${schema}` });
  });

  afterAll(async () => {
    if (pool) await dropServedSchema(pool, schema);
    await pool?.end();
  });

  it('holds the same rows, numbers and metadata as SQLite', async () => {
    const { rows } = await pool!.query(`SELECT ${SERVICE_REQUEST_FIELDS.join(', ')} FROM "${schema}".service_requests ORDER BY created_at, id`);
    expect(rows).toEqual(prepared.content.rows);
    expect(await readDailyStatsFromPostgres(pool!, schema)).toEqual(readDailyStats(db!));
    expect(await readDailyStatsFromPostgres(pool!, schema, { complaintType: 'No Such Type' })).toEqual(readDailyStats(db!, { complaintType: 'No Such Type' }));
    expect(await readComplaintTypeCountsFromPostgres(pool!, schema)).toEqual(readComplaintTypeCounts(db!));
    const meta = await readSnapshotMetaFromPostgres(pool!, schema);
    expect({ ...meta, built_at: '' }).toEqual({ ...readSnapshotMeta(db!), built_at: '' });
  });

  it('replaces the snapshot in one transaction when loaded again', async () => {
    await buildSnapshot({ kind: 'file', path: STANDARD_41_FIXTURE }, { kind: 'postgres', url: TEST_DATABASE_URL, schema });
    const meta = await readSnapshotMetaFromPostgres(pool!, schema);
    expect(meta.source.file_name).toBe('dot-2025-standard-41-columns.csv');
    const { rows } = await pool!.query(`SELECT count(*)::int AS n, count(council_district)::int AS districts FROM "${schema}".service_requests`);
    expect(rows[0]).toEqual({ n: 15, districts: 0 });
  });

  it('rejects the load of a file with more than 1% of its records malformed and keeps the loaded snapshot', async () => {
    await expect(buildSnapshot({ kind: 'file', path: MALFORMED_FIXTURE }, { kind: 'postgres', url: TEST_DATABASE_URL, schema })).rejects.toThrow(
      /^6 of 8 records \(75\.0%\) hold a value in a form no export uses/,
    );
    const { rows } = await pool!.query(`SELECT count(*)::int AS n FROM "${schema}".service_requests`);
    expect(rows[0].n).toBe(15);
  });

  it('takes the schema from ?schema= and refuses names that are not plain identifiers', () => {
    expect(parsePostgresTarget('postgres://u@h:5432/db?schema=abc_1')).toEqual({ connectionString: 'postgres://u@h:5432/db', schema: 'abc_1' });
    expect(parsePostgresTarget('postgres://u@h:5432/db').schema).toBe('public');
    expect(() => parsePostgresTarget('postgres://u@h/db?schema=a;drop')).toThrow(/Invalid PostgreSQL schema name/);
  });
});

describe('ensureSnapshot', () => {
  it('builds the file once when absent, safely when called twice at the same time, and leaves no temporary file', async () => {
    const path = join(directory, 'ensure', 'snapshot.sqlite');
    const options = { input: { kind: 'file', path: STANDARD_41_FIXTURE } as const };
    const [a, b] = await Promise.all([ensureSnapshot(path, options), ensureSnapshot(path, options)]);
    expect([a.built, b.built].filter(Boolean)).toHaveLength(1);
    expect(existsSync(path)).toBe(true);
    expect(readdirSync(join(directory, 'ensure'))).toEqual(['snapshot.sqlite']);
    const again = await ensureSnapshot(path, options);
    expect(again.built).toBe(false);
    const check = new Database(path, { readonly: true });
    expect(readSnapshotMeta(check).row_count).toBe(15);
    check.close();
  });

  it('builds the file again when it was written in an older layout (another schema_version)', async () => {
    const path = join(directory, 'ensure-older', 'snapshot.sqlite');
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
    const path = join(directory, 'ensure-filter', 'snapshot.sqlite');
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

describe('ensureSnapshot from two processes at once', () => {
  it('builds once; both processes find a complete snapshot', async () => {
    const path = join(directory, 'two-processes', 'snapshot.sqlite');
    const tsx = join(REPO_ROOT, 'node_modules/.bin/tsx');
    const child = join(REPO_ROOT, 'test/ingest/nyc311/ensure-snapshot-child.ts');
    const results = await Promise.all([0, 1].map(() => run(tsx, [child, path, STANDARD_41_FIXTURE], { cwd: REPO_ROOT })));
    const built = results.map((r) => (JSON.parse(r.stdout) as { built: boolean }).built);
    expect(built.filter(Boolean)).toHaveLength(1);
    expect(readdirSync(join(directory, 'two-processes'))).toEqual(['snapshot.sqlite']);
    const check = new Database(path, { readonly: true });
    expect(readSnapshotMeta(check).row_count).toBe(15);
    check.close();
  }, 60_000);
});

describe('the snapshot command', () => {
  const cli = join(REPO_ROOT, 'src/ingest/nyc311/cli.ts');
  const tsx = join(REPO_ROOT, 'node_modules/.bin/tsx');

  it('builds a SQLite snapshot from an export and prints a summary', async () => {
    const output = join(directory, 'cli.sqlite');
    const { stdout, stderr } = await run(tsx, [cli, '--input', STANDARD_41_FIXTURE, '--output', output], { cwd: REPO_ROOT });
    const summary = JSON.parse(stdout) as { row_count: number; removed: Record<string, number> };
    expect(summary.row_count).toBe(15);
    expect(summary.removed.repeated_submission).toBe(3);
    expect(stderr).toMatch(/reading and cleaning/);
    expect(existsSync(output)).toBe(true);
  }, 60_000);

  it('--threads 2 (staging and writer threads) builds the snapshot of --threads 0; --threads takes a count', async () => {
    const snapshotIdWith = async (threads: string): Promise<string> => {
      const output = join(directory, `cli-threads-${threads}.sqlite`);
      const { stdout } = await run(tsx, [cli, '--input', STANDARD_41_FIXTURE, '--output', output, '--threads', threads, '--quiet'], { cwd: REPO_ROOT });
      return (JSON.parse(stdout) as { snapshot_id: string }).snapshot_id;
    };
    expect(await snapshotIdWith('2')).toBe(await snapshotIdWith('0'));
    const attempt = run(tsx, [cli, '--input', STANDARD_41_FIXTURE, '--output', join(directory, 'never.sqlite'), '--threads', 'two'], { cwd: REPO_ROOT });
    await expect(attempt).rejects.toMatchObject({ code: 2, stderr: expect.stringMatching(/--threads must be an integer from 0 to 64/) });
  }, 60_000);

  it('stops, writing nothing, when more than 1% of the records are malformed: each column named with an example and the forms it is read in', async () => {
    const attempt = run(tsx, [cli, '--input', MALFORMED_FIXTURE, '--output', join(directory, 'never.sqlite'), '--quiet'], { cwd: REPO_ROOT });
    await expect(attempt).rejects.toMatchObject({ code: 1 });
    const { stderr } = (await attempt.catch((error: unknown) => error)) as { stderr: string };
    expect(stderr).toContain('snapshot: 6 of 8 records (75.0%) hold a value in a form no export uses, more than the 1% the command leaves out on its own: nothing was written.');
    expect(stderr).toContain('  Created Date: 2 records, e.g. line 5, Unique Key 2004: Created Date "2025-02-03T10:30:00Z". Read as: 05/01/2022 12:04:47 AM (the portal)');
    expect(stderr).toContain('  Latitude: 1 records, e.g. line 7, Unique Key 2006: Latitude "N40.676". Read as: a decimal number (40.7128; also 40,7128, as a spreadsheet of a European locale writes it), or empty.');
    expect(stderr).toContain('give --allow-malformed to leave these records out and go on');
    expect(stderr).not.toMatch(/\n\s+at /); // no stack trace
    expect(existsSync(join(directory, 'never.sqlite'))).toBe(false);
  }, 60_000);

  it('--allow-malformed goes on, leaves them out and says how many, in the JSON summary and on stderr', async () => {
    const output = join(directory, 'allowed.sqlite');
    const { stdout, stderr } = await run(tsx, [cli, '--input', MALFORMED_FIXTURE, '--output', output, '--no-filter', '--allow-malformed', '--quiet'], { cwd: REPO_ROOT });
    const summary = JSON.parse(stdout) as Record<string, unknown>;
    expect(summary).toMatchObject({
      row_count: 2,
      raw_rows_read: 8,
      export: { format: 'portal_csv', column_count: 41, missing_columns: [{ column: 'Council District', gives: 'council_district is null for every row' }] },
      not_served: { malformed_record: { rows: 6, examples: [{ line: 4, unique_key: '2003', column: 'Closed Date', value: 'not a date' }, { line: 5 }, { line: 6 }] } },
      malformed_by_column: { 'Created Date': { rows: 2 } },
    });
    expect(stderr).toContain('snapshot: read as the portal\'s CSV (columns named as the portal shows them), 41 columns, 8 records');
    expect(stderr).toContain('snapshot: column "Council District" is not in the export: council_district is null for every row');
    expect(stderr).toContain('snapshot: 6 rows not served: malformed_record (a value in a form no export uses), e.g. line 4, Unique Key 2003: Closed Date "not a date"');
    expect(stderr).toContain('snapshot: --allow-malformed: 6 malformed records left out, 2 requests served');
    expect(existsSync(output)).toBe(true);
  }, 60_000);

  it('refuses a file that is not an export with one line and no stack trace', async () => {
    const zip = join(directory, 'export.zip');
    writeFileSync(zip, Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x14, 0x00, 0x00, 0x00, 0x0a, 0x00]));
    const attempt = run(tsx, [cli, '--input', zip, '--output', join(directory, 'never.sqlite'), '--quiet'], { cwd: REPO_ROOT });
    await expect(attempt).rejects.toMatchObject({ code: 1, stderr: '\nsnapshot: The export is a ZIP archive or a spreadsheet workbook (.xlsx), not a CSV or JSON file: unpack it, or save the sheet as CSV, first.\n' });
    const absent = run(tsx, [cli, '--input', join(directory, 'absent.csv'), '--output', join(directory, 'never.sqlite'), '--quiet'], { cwd: REPO_ROOT });
    await expect(absent).rejects.toMatchObject({ code: 1, stderr: expect.stringMatching(/^\nsnapshot: cannot read .*absent\.csv: no such file\n$/) });
  }, 60_000);
});
