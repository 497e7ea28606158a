import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { buildRequestsApp, prepareRequestsService } from '../../src/services/requests/app.js';
import { readRequestSettings } from '../../src/services/requests/settings.js';
import { RowWalkPool } from '../../src/services/requests/engine/sqlite-row-walks.js';
import { expectError } from '../support/http.js';
import { createSqliteFixture, type FixtureDatabase } from './support/fixture-database.js';

/**
 * The store's warm-up (its threads, its row columns) does not hold the start: the started service
 * listens and answers pages meanwhile, and /ready says ready only once it has ended. The warm-up is
 * held here by holding the start of the walk threads.
 */
describe('the store warms up after the start', () => {
  let fixture: FixtureDatabase;
  let release: () => void = () => undefined;
  beforeEach(() => {
    fixture = createSqliteFixture();
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const unheld = Reflect.get<RowWalkPool, 'start'>(RowWalkPool.prototype, 'start');
    vi.spyOn(RowWalkPool.prototype, 'start').mockImplementation(function (this: RowWalkPool) {
      return held.then(() => unheld.call(this));
    });
  });
  afterEach(async () => {
    release();
    vi.restoreAllMocks();
    await fixture.drop();
  });

  it('the start command\'s service is ready to listen before the warm-up ends: pages answer 200, /ready 503 database_unavailable until it ends, then 200', async () => {
    const { app } = await prepareRequestsService(readRequestSettings({ API_KEY: 'k', DATABASE_URL: fixture.databaseUrl }));
    try {
      await app.ready();
      const page = await app.inject({ method: 'GET', url: '/v1/service-requests?limit=2', headers: { 'x-api-key': 'k' } });
      expect(page.statusCode).toBe(200);
      expectError(await app.inject({ method: 'GET', url: '/ready' }), 503, 'database_unavailable', [], 'The database cannot be read');
      release();
      await expect.poll(async () => (await app.inject({ method: 'GET', url: '/ready' })).statusCode, { timeout: 10_000 }).toBe(200);
    } finally {
      await app.close();
    }
  });

  it('an app built without the start command is ready once its store is warm', async () => {
    const app = await buildRequestsApp(readRequestSettings({ API_KEY: 'k', DATABASE_URL: fixture.databaseUrl }), { logger: false });
    try {
      let isReady = false;
      const ready = app.ready().then(() => {
        isReady = true;
      });
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(isReady).toBe(false);
      release();
      await ready;
      expect((await app.inject({ method: 'GET', url: '/ready' })).statusCode).toBe(200);
    } finally {
      await app.close();
    }
  });
});
