import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { servedSnapshotSql } from '../../src/snapshot/postgres-snapshot-pointer.js';
import { createPostgresFixture, type FixtureDatabase, TEST_POSTGRES_URL } from '../requests/support/fixture-database.js';
import { LIST, expectAnswering, expectUnavailable } from './unreadable-database.js';
import { startTestApp, type TestApp } from '../requests/support/requests-app.js';
import { REQUESTS } from './services.js';

/**
 * The data service on PostgreSQL with its database made unreadable while it runs, then given back
 * (the reliability decisions; SQLite in database-fault.test.ts): the snapshot's schema is renamed
 * away, then back (every prepared statement of the pool is re-analysed by PostgreSQL after the
 * rename); and the service's connections are terminated.
 */
async function sql(text: string): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: TEST_POSTGRES_URL });
  await client.connect();
  try {
    return await client.query(text);
  } finally {
    await client.end();
  }
}

describe.skipIf(!REQUESTS.available)('requests: database made unreadable while the service runs, then back', () => {
  describe('PostgreSQL', () => {
    let fixture: FixtureDatabase | undefined;
    let schema: string;
    let away: string | undefined;
    let service: TestApp | undefined;
    beforeAll(async () => {
      fixture = await createPostgresFixture();
      schema = new URL(fixture.databaseUrl).searchParams.get('schema')!;
      service = await startTestApp(fixture.databaseUrl);
    });
    afterAll(async () => {
      await service?.app.close();
      if (away !== undefined) await sql(`DROP SCHEMA IF EXISTS "${away}" CASCADE`).catch(() => undefined);
      await fixture?.drop();
    });

    it('snapshot schema renamed away: 503 database_unavailable; renamed back: 200 with the same rows', async () => {
      const before = await expectAnswering(service!);
      const served = (await sql(servedSnapshotSql(schema))).rows[0] as { schema_name: string };
      away = `${served.schema_name}_away`;
      await sql(`ALTER SCHEMA "${served.schema_name}" RENAME TO "${away}"`);
      try {
        await expectUnavailable(service!);
        await expectUnavailable(service!);
      } finally {
        await sql(`ALTER SCHEMA "${away}" RENAME TO "${served.schema_name}"`);
      }
      expect(await expectAnswering(service!)).toEqual(before);
    });

    it('the service connections terminated by the server: answers again at once, never 500', async () => {
      const before = await expectAnswering(service!);
      const terminated = await sql(
        `SELECT pg_terminate_backend(pid) AS done FROM pg_stat_activity WHERE application_name = 'service-request-api' AND pid <> pg_backend_pid()`,
      );
      expect(terminated.rowCount).toBeGreaterThan(0);
      // A pooled connection found dead is dropped; at most one answer per dead connection is a 503.
      const statuses: number[] = [];
      for (let i = 0; i < 12; i += 1) statuses.push((await service!.get(LIST)).statusCode);
      expect(statuses.filter((status) => status !== 200 && status !== 503)).toEqual([]);
      expect(statuses.slice(-2)).toEqual([200, 200]);
      expect(await expectAnswering(service!)).toEqual(before);
    });
  });
});
