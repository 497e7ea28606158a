import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PlatformApp } from '../../src/platform/platform-app.js';
import { buildRequestsApp } from '../../src/services/requests/app.js';
import { POSTGRES_STATEMENT_CHARS, PostgresStatements } from '../../src/services/requests/store/postgres-statements.js';
import { PostgresServiceRequestStore } from '../../src/services/requests/store/postgres-store.js';
import { readRequestSettings } from '../../src/services/requests/settings.js';
import { parsePostgresTarget } from '../../src/shared/postgres-schema.js';
import { DISTINCT_SHAPES, filterShapeRequest } from '../reliability/filter-shapes.js';
import { createPostgresFixture, TEST_POSTGRES_URL, type FixtureDatabase } from './support/fixture-database.js';

/**
 * PostgreSQL: named prepared statements bounded in every connection (postgres-statements.ts: the
 * least used deallocated), and thousands of requests of distinct filter shapes that leave the
 * service's RSS and its connections' statements and memory bounded (the hostile-input decisions;
 * SQLite: filter-shapes.test.ts).
 */
describe('PostgresStatements: every connection keeps its statements within the bound', () => {
  let pool: pg.Pool;
  beforeAll(() => {
    // Read-only sessions, as the store's: DEALLOCATE is allowed in them.
    pool = new pg.Pool({ connectionString: TEST_POSTGRES_URL, max: 2, options: '-c default_transaction_read_only=on' });
  });
  afterAll(async () => pool.end());

  it('2,000 distinct texts over 2 connections: right answers, and each connection\'s prepared texts within the bound', async () => {
    const statements = new PostgresStatements(pool);
    for (let n = 0; n < 2_000; n += 2) {
      const answers = await Promise.all(
        [n, n + 1].map((k) => statements.query<{ n: number }>(`SELECT $1::integer + ${k} AS n, '${'x'.repeat(k % 300)}' AS padding`, [1])),
      );
      expect(answers.map((answer) => answer.rows[0]?.n)).toEqual([n + 1, n + 2]);
    }
    const clients = await Promise.all([pool.connect(), pool.connect()]);
    try {
      for (const client of clients) {
        const { rows } = await client.query<{ prepared: number; chars: number }>(
          'SELECT count(*)::integer AS prepared, coalesce(sum(length(statement)), 0)::integer AS chars FROM pg_prepared_statements',
        );
        expect(rows[0]?.prepared).toBeGreaterThan(10);
        expect(rows[0]?.chars).toBeLessThanOrEqual(POSTGRES_STATEMENT_CHARS);
      }
    } finally {
      for (const client of clients) client.release();
    }
  });

  it('a statement used again is not prepared again; one dropped and used again is prepared again', async () => {
    const statements = new PostgresStatements(pool, 300);
    const text = (k: number) => `SELECT $1::integer * ${k} AS n /* ${'y'.repeat(80)} */`;
    for (let round = 0; round < 3; round += 1) for (let k = 1; k <= 6; k += 1) expect((await statements.query<{ n: number }>(text(k), [2])).rows[0]?.n).toBe(2 * k);
  });

  it('a text longer than a quarter of the bound runs unnamed, prepared nowhere', async () => {
    const statements = new PostgresStatements(pool, 400);
    const client = await pool.connect();
    client.release();
    const long = `SELECT $1::integer AS n /* ${'z'.repeat(200)} */`;
    expect((await statements.query<{ n: number }>(long, [7])).rows[0]?.n).toBe(7);
    const { rows } = await pool.query<{ found: number }>("SELECT count(*)::integer AS found FROM pg_prepared_statements WHERE statement LIKE '%zzzz%'");
    expect(rows[0]?.found).toBe(0);
  });
});

describe('PostgreSQL service: thousands of requests of distinct filter shapes', () => {
  let fixture: FixtureDatabase;
  let store: PostgresServiceRequestStore;
  let app: PlatformApp;
  beforeAll(async () => {
    fixture = await createPostgresFixture();
    const target = parsePostgresTarget(fixture.databaseUrl);
    store = new PostgresServiceRequestStore({ url: target.connectionString, schema: target.schema });
    const settings = readRequestSettings({ API_KEY: 'shapes-key-0123456789', CURSOR_SECRET: 'shapes-cursor-secret-0123456789abcdef', DATABASE_URL: fixture.databaseUrl });
    app = await buildRequestsApp(settings, { logger: false, store });
    await app.ready();
  });
  afterAll(async () => {
    await app.close();
    await fixture.drop();
  });

  it(`${DISTINCT_SHAPES} requests: every answer 200, every connection's statements within the bound, memory outside the heap grown by less than 64 MB`, async () => {
    const send = (i: number) => app.inject({ method: 'GET', url: filterShapeRequest(i), headers: { 'x-api-key': 'shapes-key-0123456789' } });
    // The statement caches filled first (their bound is part of the growth allowed, the rest is not).
    for (let i = 0; i < 400; i += 1) expect((await send(i)).statusCode).toBe(200);
    // Memory outside V8's heap (the statements are SQLite's and PostgreSQL's, and the threads'): the
    // heap of the test's own process grows and shrinks with its garbage, which is not the service's.
    const outsideHeap = () => process.memoryUsage().rss - process.memoryUsage().heapTotal;
    const before = outsideHeap();
    for (let i = 0; i < DISTINCT_SHAPES; i += 4) {
      const answers = await Promise.all([i, i + 1, i + 2, i + 3].map(send));
      expect(answers.map((answer) => answer.statusCode)).toEqual([200, 200, 200, 200]);
    }
    const grown = (outsideHeap() - before) / 2 ** 20;
    const connections = await store.statementStats();
    expect(connections.length).toBeGreaterThan(0);
    for (const connection of connections) {
      expect(connection.chars).toBeLessThanOrEqual(POSTGRES_STATEMENT_CHARS);
      // A server process's own memory (its contexts), with the statements it keeps.
      expect(connection.backendBytes).toBeLessThan(48 * 2 ** 20);
    }
    expect(grown).toBeLessThan(64);
  }, 180_000);
});
