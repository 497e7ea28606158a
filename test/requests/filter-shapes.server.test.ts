import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POSTGRES_STATEMENT_CHARS, PostgresStatements } from '../../src/services/requests/store/postgres-statements.js';
import { PostgresServiceRequestStore } from '../../src/services/requests/store/postgres-store.js';
import { parsePostgresTarget } from '../../src/shared/postgres-schema.js';
import { DISTINCT_SHAPES } from '../reliability/filter-shapes.js';
import { sendEveryShape, shapesServiceDuringSuite } from './support/distinct-shapes-suite.js';
import { createPostgresFixture, TEST_POSTGRES_URL } from './support/fixture-database.js';

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
  const service = shapesServiceDuringSuite(createPostgresFixture, (databaseUrl) => {
    const target = parsePostgresTarget(databaseUrl);
    return new PostgresServiceRequestStore({ url: target.connectionString, schema: target.schema });
  });

  it(`${DISTINCT_SHAPES} requests: every answer 200, every connection's statements within the bound, memory outside the heap grown by less than 64 MB`, async () => {
    const grown = await sendEveryShape(service.app);
    const connections = await service.store.statementStats();
    expect(connections.length).toBeGreaterThan(0);
    for (const connection of connections) {
      expect(connection.chars).toBeLessThanOrEqual(POSTGRES_STATEMENT_CHARS);
      // A server process's own memory (its contexts), with the statements it keeps.
      expect(connection.backendBytes).toBeLessThan(48 * 2 ** 20);
    }
    expect(grown).toBeLessThan(64);
  }, 180_000);
});
