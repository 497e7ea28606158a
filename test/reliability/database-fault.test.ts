import { closeSync, openSync, readSync, writeSync } from 'node:fs';
import pg from 'pg';
import { servedSnapshotSql } from '../../src/snapshot/postgres-snapshot-pointer.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../support/http.js';
import { createPostgresFixture, type FixtureDatabase, fixtureDuringSuite, TEST_POSTGRES_URL } from '../requests/support/fixture-database.js';
import { json, startTestApp, type TestApp, testAppDuringSuite } from '../requests/support/requests-app.js';
import { REQUESTS } from './services.js';

/**
 * The data service with its database made unreadable while it runs, then given back (the reliability decisions):
 * `/ready` and the list answer 503 `database_unavailable` during the fault, 200 with the same rows
 * after it, without a restart. The service has read (and prepared its statements) before the fault.
 * - PostgreSQL: the snapshot's schema is renamed away, then back (every prepared statement of the
 *   pool is re-analysed by PostgreSQL after the rename); and the service's connections are terminated.
 * - SQLite: the file's 100-byte header is overwritten in place, then restored. SQLite re-reads the
 *   file when the header's change counter changes; an open handle is not affected by a rename or a
 *   chmod, so those are no fault for a running service.
 */
const LIST = '/v1/service-requests?limit=5';
const FILTERED = '/v1/service-requests?borough=queens&limit=5';

async function expectAnswering(service: TestApp): Promise<unknown> {
  expect((await service.app.inject({ method: 'GET', url: '/ready' })).statusCode).toBe(200);
  const list = await service.get(LIST);
  expect(list.statusCode).toBe(200);
  expect((await service.get(FILTERED)).statusCode).toBe(200);
  return json(list);
}

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

async function expectUnavailable(service: TestApp): Promise<void> {
  expectError(await service.app.inject({ method: 'GET', url: '/ready' }), 503, 'database_unavailable', [], 'The database cannot be read');
  expectError(await service.get(LIST), 503, 'database_unavailable', []);
  expectError(await service.get(FILTERED), 503, 'database_unavailable', []);
  // Liveness does not depend on the database.
  expect((await service.app.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200);
}

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

  describe('SQLite', () => {
    const fixture = fixtureDuringSuite();
    const service = testAppDuringSuite(fixture);

    it('file header overwritten in place: 503 database_unavailable; header restored: 200 with the same rows', async () => {
      const before = await expectAnswering(service);
      const fd = openSync(fixture.databaseUrl, 'r+');
      const header = Buffer.alloc(100);
      try {
        expect(readSync(fd, header, 0, 100, 0)).toBe(100);
        writeSync(fd, Buffer.alloc(100), 0, 100, 0);
        // A client's next request reaches the service in a later turn of its event loop.
        await nextTurn();
        await expectUnavailable(service);
      } finally {
        writeSync(fd, header, 0, 100, 0);
        closeSync(fd);
      }
      await nextTurn();
      expect(await expectAnswering(service)).toEqual(before);
    });
  });
});
