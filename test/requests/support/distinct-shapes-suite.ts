import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PlatformApp } from '../../../src/platform/platform-app.js';
import { buildRequestsApp } from '../../../src/services/requests/app.js';
import { readRequestSettings } from '../../../src/services/requests/settings.js';
import { SQLITE_STATEMENT_CHARS } from '../../../src/services/requests/store/sqlite-statements.js';
import { SqliteServiceRequestStore } from '../../../src/services/requests/store/sqlite-store.js';
import { DISTINCT_SHAPES, filterShapeRequest } from '../../reliability/filter-shapes.js';
import { createSqliteFixture, type FixtureDatabase } from './fixture-database.js';

/**
 * The SQLite service sent a request of each of the 2,080 distinct filter shapes
 * (test/reliability/filter-shapes.ts), the statement caches filled first. Every answer 200, the
 * statements of every thread within their bound, memory outside the heap grown by less than 64 MB.
 */
export function describeDistinctShapes(): void {
  const shapes = Array.from({ length: DISTINCT_SHAPES }, (_, at) => at);
  describe('SQLite service: thousands of requests of distinct filter shapes', () => {
    let fixture: FixtureDatabase;
    let store: SqliteServiceRequestStore;
    let app: PlatformApp;
    beforeAll(async () => {
      fixture = createSqliteFixture();
      store = new SqliteServiceRequestStore(fixture.databaseUrl);
      const settings = readRequestSettings({ API_KEY: 'shapes-key-0123456789', CURSOR_SECRET: 'shapes-cursor-secret-0123456789abcdef', DATABASE_URL: fixture.databaseUrl });
      app = await buildRequestsApp(settings, { logger: false, store });
      await app.ready();
    });
    afterAll(async () => {
      await app.close();
      await fixture.drop();
    });

    it(`${shapes.length} requests: every answer 200, the statements of every thread within their bound, memory outside the heap grown by less than 64 MB`, async () => {
      const send = (i: number) => app.inject({ method: 'GET', url: filterShapeRequest(i), headers: { 'x-api-key': 'shapes-key-0123456789' } });
      // The statement caches filled first (their bound is part of the growth allowed, the rest is not).
      for (const i of shapes.slice(0, 400)) expect((await send(i)).statusCode).toBe(200);
      // Memory outside V8's heap (the statements are SQLite's and PostgreSQL's, and the threads'): the
      // heap of the test's own process grows and shrinks with its garbage, which is not the service's.
      const outsideHeap = () => process.memoryUsage().rss - process.memoryUsage().heapTotal;
      const before = outsideHeap();
      for (let at = 0; at < shapes.length; at += 4) {
        const answers = await Promise.all(shapes.slice(at, at + 4).map(send));
        expect(answers.map((answer) => answer.statusCode)).toEqual(answers.map(() => 200));
      }
      const grown = (outsideHeap() - before) / 2 ** 20;
      const { thread, workers } = await store.statementStats();
      for (const stats of [thread, ...workers]) {
        expect(stats.chars).toBeLessThanOrEqual(SQLITE_STATEMENT_CHARS);
        expect(stats.droppedChars).toBeLessThan(SQLITE_STATEMENT_CHARS + 20_000);
      }
      expect(workers.length).toBeGreaterThan(0);
      expect(grown).toBeLessThan(64);
    }, 120_000);
  });
}
