import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { SqliteServiceRequestStore } from '../../src/services/requests/store/sqlite-store.js';
import { expectError } from '../support/http.js';
import { createSqliteFixture, TEST_POSTGRES_URL } from './support/fixture-database.js';
import { startTestApp, type TestApp } from './support/requests-app.js';

const V1_PATHS = [
  '/v1/service-requests',
  '/v1/service-requests?borough=queens&limit=5',
  '/v1/service-requests/1001',
  '/v1/complaint-types',
  '/v1/stats/daily',
  '/v1/dataset',
];

const folder = mkdtempSync(join(tmpdir(), 'requests-unavailable-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

async function expectUnavailable(service: TestApp): Promise<void> {
  const ready = await service.app.inject({ method: 'GET', url: '/ready' });
  expectError(ready, 503, 'database_unavailable', [], 'The database cannot be read');
  for (const path of V1_PATHS) expectError(await service.get(path), 503, 'database_unavailable', [], 'The database cannot be read');
  // liveness needs nothing; the key is checked before the database; validation too
  expect((await service.app.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200);
  expectError(await service.app.inject({ method: 'GET', url: '/v1/dataset' }), 401, 'unauthorized', []);
  expectError(await service.get('/v1/service-requests?limit=0'), 422, 'invalid_request', ['limit']);
}

describe('503 database_unavailable when the database cannot be read (never 500)', () => {
  it('SQLite: a missing file, until it appears', async () => {
    const path = join(folder, 'absent.sqlite');
    const service = await startTestApp(path);
    try {
      await expectUnavailable(service);
      const fixture = createSqliteFixture();
      try {
        const { copyFileSync } = await import('node:fs');
        copyFileSync(fixture.databaseUrl, path);
        expect((await service.app.inject({ method: 'GET', url: '/ready' })).statusCode).toBe(200);
        expect((await service.get('/v1/service-requests?limit=1')).statusCode).toBe(200);
      } finally {
        await fixture.drop();
      }
    } finally {
      await service.app.close();
    }
  });

  it('SQLite: a file that is not a database', async () => {
    const path = join(folder, 'garbage.sqlite');
    writeFileSync(path, 'this is not a SQLite database\n'.repeat(100));
    const service = await startTestApp(path);
    try {
      await expectUnavailable(service);
    } finally {
      await service.app.close();
    }
  });

  it('SQLite: a database without the snapshot tables', async () => {
    const { default: Database } = await import('better-sqlite3');
    const path = join(folder, 'empty.sqlite');
    new Database(path).exec('CREATE TABLE unrelated (x INTEGER)');
    const service = await startTestApp(path);
    try {
      await expectUnavailable(service);
    } finally {
      await service.app.close();
    }
  });

  it('PostgreSQL: a server that does not answer (closed port)', async () => {
    const service = await startTestApp('postgres://postgres@127.0.0.1:1/test');
    try {
      await expectUnavailable(service);
    } finally {
      await service.app.close();
    }
  });

  it('PostgreSQL: a schema without the snapshot', async () => {
    const url = new URL(TEST_POSTGRES_URL);
    url.searchParams.set('schema', 'requests_schema_that_does_not_exist');
    const service = await startTestApp(url.toString());
    try {
      await expectUnavailable(service);
    } finally {
      await service.app.close();
    }
  });

  it('statistics whose reads a refresh splits: 503 database_unavailable, never two snapshots under one ETag; the next request answers', async () => {
    const fixture = createSqliteFixture();
    const store = new SqliteServiceRequestStore(fixture.databaseUrl);
    const service = await startTestApp(fixture.databaseUrl, {}, { store });
    try {
      const id = await store.snapshotId();
      // The snapshot id read before the build, then another one after it: a refresh landed in between.
      const switched = vi.spyOn(store, 'snapshotId').mockResolvedValueOnce(id).mockResolvedValueOnce('a-newer-snapshot');
      for (const path of ['/v1/stats/daily?channel=phone', '/v1/stats/weekly', '/v1/stats/monthly?borough=queens']) {
        expectError(await service.get(path), 503, 'database_unavailable', [], 'The database cannot be read');
        switched.mockResolvedValueOnce(id).mockResolvedValueOnce('a-newer-snapshot');
      }
      switched.mockReset();
      switched.mockResolvedValue(id);
      expect((await service.get('/v1/stats/weekly')).statusCode).toBe(200);
    } finally {
      await service.app.close();
      await fixture.drop();
    }
  });
});
