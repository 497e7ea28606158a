import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writePostgresSnapshot } from '../../../src/ingest/nyc311/postgres-snapshot-writer.js';
import { dropServedSchema, readServedSnapshot } from '../../../src/snapshot/postgres-snapshot-pointer.js';
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
import { SERVICE_REQUEST_INDEXES, exportSnapshot } from './export-snapshot.js';
import { TEST_DATABASE_URL, isolatedSchemaName } from './fixture-paths.js';

/** The synthetic export loaded into PostgreSQL, against its SQLite snapshot (synthetic-snapshot.machine.test.ts). */
const built = duringSuite(() => exportSnapshot({ kind: 'synthetic' }, 'written'), (snapshot) => snapshot.remove(), 180_000);

describe('PostgreSQL snapshot of the synthetic export', () => {
  const schema = isolatedSchemaName('snapshot_synthetic');
  let pool: pg.Pool | undefined;

  beforeAll(async () => {
    await writePostgresSnapshot(`${TEST_DATABASE_URL}?schema=${schema}`, built.prepared.content);
    pool = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 2 });
  }, 120_000);

  afterAll(async () => {
    if (pool) await dropServedSchema(pool, schema);
    await pool?.end();
  });

  it('holds the same rows as SQLite', async () => {
    const { rows } = await pool!.query(`SELECT ${SERVICE_REQUEST_FIELDS.join(', ')} FROM "${schema}".service_requests ORDER BY created_at, id`);
    expect(rows).toHaveLength(109_915);
    expect(rows).toEqual(built.prepared.content.rows);
  });

  it('answers the read API like SQLite', async () => {
    expect(await readSnapshotMetaFromPostgres(pool!, schema)).toEqual(readSnapshotMeta(built.db));
    expect(await readComplaintTypeCountsFromPostgres(pool!, schema)).toEqual(readComplaintTypeCounts(built.db));
    for (const scope of [{}, { borough: 'bronx' as const }, { complaintType: 'Street Light Condition', borough: 'manhattan' as const }]) {
      expect(await readDailyStatsFromPostgres(pool!, schema, scope)).toEqual(readDailyStats(built.db, scope));
    }
  });

  it('has the same indexes, in the snapshot schema the served schema points at', async () => {
    const served = await readServedSnapshot(pool!, schema);
    const { rows } = await pool!.query(`SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND tablename = 'service_requests'`, [served!.schema]);
    expect(rows.map((r: { indexname: string }) => r.indexname)).toEqual(expect.arrayContaining(SERVICE_REQUEST_INDEXES));
  });
});
