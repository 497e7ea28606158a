/**
 * Every real export of ../shared/data/nyc311/real loaded into PostgreSQL by the snapshot command (a
 * schema of its own per file), with the filters off: every served row, read back from PostgreSQL,
 * equals its source row field by field; the twins (API CSV through pandas, API JSON) give the same
 * rows, numbers and metadata but for the file. SQLite: real-exports.test.ts. Skipped, saying so,
 * when the folder is absent (SHARED_DATA_DIR).
 */
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSnapshot } from '../../../src/ingest/nyc311/build-snapshot.js';
import { dropServedSchema } from '../../../src/snapshot/postgres-snapshot-pointer.js';
import { readDailyStatsFromPostgres, readSnapshotMetaFromPostgres } from '../../../src/snapshot/snapshot-readers.js';
import { SERVICE_REQUEST_FIELDS, type ServiceRequest } from '../../../src/snapshot/service-request.js';
import { TEST_DATABASE_URL, isolatedSchemaName } from './fixture-paths.js';
import { REAL_EXPORTS_DIR, TWINS, expectServedAsInFile, realExportFiles, sourceRecords } from './real-exports.js';

const files = realExportFiles();
const schemas = new Map(files.map((file) => [file, isolatedSchemaName('real_export')]));
let pool: pg.Pool | undefined;
const loaded = new Map<string, Promise<ServiceRequest[]>>();

beforeAll(() => {
  pool = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 2 });
});

afterAll(async () => {
  if (pool) for (const schema of schemas.values()) await dropServedSchema(pool, schema);
  await pool?.end();
});

/** The file loaded into its schema (once), and its rows read back. */
function load(file: string): Promise<ServiceRequest[]> {
  let rows = loaded.get(file);
  if (rows === undefined) loaded.set(file, (rows = loadOnce(file)));
  return rows;
}

async function loadOnce(file: string): Promise<ServiceRequest[]> {
  const schema = schemas.get(file) as string;
  await buildSnapshot({ kind: 'file', path: join(REAL_EXPORTS_DIR, file) }, { kind: 'postgres', url: TEST_DATABASE_URL, schema }, { applyFilters: false });
  const { rows } = await (pool as pg.Pool).query(`SELECT ${SERVICE_REQUEST_FIELDS.join(', ')} FROM "${schema}".service_requests ORDER BY created_at, id`);
  return rows as ServiceRequest[];
}

describe.skipIf(files.length === 0)('the real exports, into PostgreSQL', () => {
  it.each(files)('%s: every served row as in the file', async (file) => {
    const rows = await load(file);
    const meta = await readSnapshotMetaFromPostgres(pool as pg.Pool, schemas.get(file) as string);
    expect(meta.raw_rows_read).toBe(sourceRecords(file).length);
    expect(meta.cleaning_rules.find((rule) => rule.id === 'malformed_record')?.rows_removed).toBe(0);
    expect(meta.source.file_name).toBe(file);
    // The newest layout (2025) alone has the council district.
    expect(meta.source.missing_columns?.includes('Council District')).toBe(!/JasonLIN0226/.test(file));
    expect(rows).toHaveLength(meta.row_count);
    expect(expectServedAsInFile(file, rows)).toBe(meta.row_count);
  }, 120_000); // a file spanning 2010 to 2024 has daily numbers for 5,000 days

  it.skipIf(!files.includes(TWINS[0]) || !files.includes(TWINS[1]))('the twins give the same rows, daily numbers and metadata but for the file', async () => {
    await Promise.all(TWINS.map((file) => load(file)));
    const [csvSchema, jsonSchema] = TWINS.map((file) => schemas.get(file) as string) as [string, string];
    const rowsOf = async (schema: string): Promise<unknown[]> =>
      (await (pool as pg.Pool).query(`SELECT ${SERVICE_REQUEST_FIELDS.join(', ')} FROM "${schema}".service_requests ORDER BY created_at, id`)).rows;
    expect(await rowsOf(jsonSchema)).toEqual(await rowsOf(csvSchema));
    expect(await readDailyStatsFromPostgres(pool as pg.Pool, jsonSchema)).toEqual(await readDailyStatsFromPostgres(pool as pg.Pool, csvSchema));
    const sameMeta = async (schema: string): Promise<unknown> => {
      const { snapshot_id: _id, content_sha256: _content, built_at: _built, source: _source, ...rest } = await readSnapshotMetaFromPostgres(pool as pg.Pool, schema);
      return rest;
    };
    expect(await sameMeta(jsonSchema)).toEqual(await sameMeta(csvSchema));
  }, 120_000);
});
