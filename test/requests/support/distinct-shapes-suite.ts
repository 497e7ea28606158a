import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PlatformApp } from '../../../src/platform/platform-app.js';
import { buildRequestsApp } from '../../../src/services/requests/app.js';
import { readRequestSettings } from '../../../src/services/requests/settings.js';
import type { ServiceRequestStore } from '../../../src/services/requests/store/service-request-store.js';
import { SQLITE_STATEMENT_CHARS } from '../../../src/services/requests/store/sqlite-statements.js';
import { SqliteServiceRequestStore } from '../../../src/services/requests/store/sqlite-store.js';
import { DISTINCT_SHAPES, filterShapeRequest } from '../../reliability/filter-shapes.js';
import { createSqliteFixture, type FixtureDatabase } from './fixture-database.js';

/**
 * Requests of each of the 2,080 distinct filter shapes (test/reliability/filter-shapes.ts) sent to
 * the requests service, on either backend: the set-up and the sending, shared by the SQLite suite
 * below and the PostgreSQL one (filter-shapes.server.test.ts), which each check their own statements.
 */
const KEY = 'shapes-key-0123456789';

/** The service over a fixture of its own and the store it answers from (to read its statements), during the suite. */
export function shapesServiceDuringSuite<S extends ServiceRequestStore>(
  createFixture: () => FixtureDatabase | Promise<FixtureDatabase>,
  storeOf: (databaseUrl: string) => S,
): { app: PlatformApp; store: S } {
  const service = {} as { app: PlatformApp; store: S };
  let fixture: FixtureDatabase;
  beforeAll(async () => {
    fixture = await createFixture();
    service.store = storeOf(fixture.databaseUrl);
    const settings = readRequestSettings({ API_KEY: KEY, CURSOR_SECRET: 'shapes-cursor-secret-0123456789abcdef', DATABASE_URL: fixture.databaseUrl });
    service.app = await buildRequestsApp(settings, { logger: false, store: service.store });
    await service.app.ready();
  });
  afterAll(async () => {
    await service.app.close();
    await fixture.drop();
  });
  return service;
}

/**
 * Every shape sent, four at a time, each answered 200, after the statement caches were filled by the
 * first 400 (their bound is part of the growth allowed, the rest is not). Returns how much the memory
 * outside V8's heap grew over the shapes, in MB: the statements are SQLite's and PostgreSQL's, and the
 * threads'; the heap of the test's own process grows and shrinks with its garbage, which is not the service's.
 */
export async function sendEveryShape(app: PlatformApp): Promise<number> {
  const send = (i: number) => app.inject({ method: 'GET', url: filterShapeRequest(i), headers: { 'x-api-key': KEY } });
  for (let i = 0; i < 400; i += 1) expect((await send(i)).statusCode).toBe(200);
  const outsideHeap = () => process.memoryUsage().rss - process.memoryUsage().heapTotal;
  const before = outsideHeap();
  for (let at = 0; at < DISTINCT_SHAPES; at += 4) {
    const shapes = [at, at + 1, at + 2, at + 3].filter((i) => i < DISTINCT_SHAPES);
    const answers = await Promise.all(shapes.map(send));
    expect(answers.map((answer) => answer.statusCode)).toEqual(shapes.map(() => 200));
  }
  return (outsideHeap() - before) / 2 ** 20;
}

/** The SQLite service: every answer 200, the statements of every thread within their bound, memory outside the heap grown by less than 64 MB. */
export function describeDistinctShapes(): void {
  describe('SQLite service: thousands of requests of distinct filter shapes', () => {
    const service = shapesServiceDuringSuite(createSqliteFixture, (databaseUrl) => new SqliteServiceRequestStore(databaseUrl));

    it(`${DISTINCT_SHAPES} requests: every answer 200, the statements of every thread within their bound, memory outside the heap grown by less than 64 MB`, async () => {
      const grown = await sendEveryShape(service.app);
      const { thread, workers } = await service.store.statementStats();
      for (const stats of [thread, ...workers]) {
        expect(stats.chars).toBeLessThanOrEqual(SQLITE_STATEMENT_CHARS);
        expect(stats.droppedChars).toBeLessThan(SQLITE_STATEMENT_CHARS + 20_000);
      }
      expect(workers.length).toBeGreaterThan(0);
      expect(grown).toBeLessThan(64);
    }, 120_000);
  });
}
