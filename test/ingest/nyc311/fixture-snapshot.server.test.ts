import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSnapshot } from '../../../src/ingest/nyc311/build-snapshot.js';
import { dropServedSchema } from '../../../src/snapshot/postgres-snapshot-pointer.js';
import {
  readComplaintTypeCounts,
  readComplaintTypeCountsFromPostgres,
  readDailyStats,
  readDailyStatsFromPostgres,
  readSnapshotMeta,
  readSnapshotMetaFromPostgres,
} from '../../../src/snapshot/snapshot-readers.js';
import { SERVICE_REQUEST_FIELDS } from '../../../src/snapshot/service-request.js';
import { duringSuite } from '../../support/during-suite.js';
import { exportSnapshot } from './export-snapshot.js';
import { COUNCIL_DISTRICT_FIXTURE, MALFORMED_FIXTURE, STANDARD_41_FIXTURE, TEST_DATABASE_URL, isolatedSchemaName } from './fixture-paths.js';

/** The hand-written export loaded into PostgreSQL, against its SQLite snapshot (fixture-snapshot.test.ts). */
const built = duringSuite(() => exportSnapshot({ kind: 'file', path: COUNCIL_DISTRICT_FIXTURE }, 'built'), (snapshot) => snapshot.remove());

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
    expect(rows).toEqual(built.prepared.content.rows);
    expect(await readDailyStatsFromPostgres(pool!, schema)).toEqual(readDailyStats(built.db));
    expect(await readDailyStatsFromPostgres(pool!, schema, { complaintType: 'No Such Type' })).toEqual(readDailyStats(built.db, { complaintType: 'No Such Type' }));
    expect(await readComplaintTypeCountsFromPostgres(pool!, schema)).toEqual(readComplaintTypeCounts(built.db));
    const meta = await readSnapshotMetaFromPostgres(pool!, schema);
    expect({ ...meta, built_at: '' }).toEqual({ ...readSnapshotMeta(built.db), built_at: '' });
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
});
