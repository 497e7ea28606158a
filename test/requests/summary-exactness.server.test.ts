import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareSnapshot, writeSnapshot } from '../../src/ingest/nyc311/build-snapshot.js';
import { TEST_POSTGRES_URL } from './support/fixture-database.js';
import { checkExactness, postgresSnapshot } from './support/summary-exactness-checks.js';

/**
 * The aggregate summaries answer exactly what a plain SQL count / GROUP BY over the rows answers, on
 * random filter combinations they cover (seeded; support/summary-exactness-checks.ts), in PostgreSQL:
 * the synthetic snapshot (1x) loaded here, and a 10x snapshot when one is given
 * (SUMMARY_EXACTNESS_10X_POSTGRES: a postgres://...?schema= URL written by the snapshot command, as
 * building one takes minutes). SQLite: summary-exactness.test.ts (a small history) and summary-exactness.machine.test.ts.
 *
 * The snapshot is loaded into a database of its own, created here and dropped after. VACUUM marks a
 * page all-visible (what an index-only scan needs to skip the table) only when each of its rows is
 * visible to every transaction that might still read it: a transaction that other tests hold open
 * in the shared database while this one loads (a long load, a refresh, a test that keeps a snapshot)
 * keeps the loaded pages from becoming all-visible, and relallvisible stays 0. PostgreSQL counts only
 * the transactions of a table's own database for that, so in a database of its own the check holds
 * whatever else runs on the server (a replication slot that holds back every database, which a test
 * server does not have, aside).
 */
async function onServer<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: TEST_POSTGRES_URL });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

describe('aggregate summaries of the synthetic snapshot (1x)', () => {
  const database = `summary_exactness_${randomBytes(6).toString('hex')}`;
  const databaseUrl = new URL(TEST_POSTGRES_URL);
  databaseUrl.pathname = `/${database}`;
  const url = new URL(databaseUrl);
  url.searchParams.set('schema', 'summary_exactness');
  beforeAll(async () => {
    await onServer((client) => client.query(`CREATE DATABASE ${database}`));
    const { content } = await prepareSnapshot({ kind: 'synthetic' });
    await writeSnapshot({ kind: 'postgres', url: url.toString() }, content);
  }, 240_000);
  afterAll(async () => {
    await onServer((client) => client.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`));
  });

  it('the answers read the summary indexes only (covering): PostgreSQL index-only scans of vacuumed tables', async () => {
    const client = new pg.Client({ connectionString: databaseUrl.toString() });
    await client.connect();
    try {
      const { rows } = await client.query<{ indexdef: string; visible: number }>(
        `SELECT i.indexdef, c.relallvisible AS visible FROM pg_indexes i JOIN pg_class c ON c.relname = i.tablename AND c.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = i.schemaname)
         WHERE i.schemaname = (SELECT schema_name FROM summary_exactness.snapshot_pointer WHERE id = 1) AND i.indexname IN ('summary_buckets_scope', 'summary_facets_scope') ORDER BY i.indexname`,
      );
      expect(rows.map((row) => row.indexdef.replace(/^.* USING btree /, ''))).toEqual([
        '(unit, filter_column, filter_value, bucket) INCLUDE (opened, closed, closed_within_14_days, low_middle, high_middle, p90_days_to_close)',
        '(filter_column, facet_column, period, filter_value) INCLUDE (facet_value, requests)',
      ]);
      for (const row of rows) expect(row.visible, 'vacuumed: index-only scans skip the table').toBeGreaterThan(0);
    } finally {
      await client.end();
    }
  });

  describe('PostgreSQL', () => checkExactness(() => postgresSnapshot(url.toString()), 30, 60));
});

// The 10x check exists only when a 10x snapshot is given (building one takes minutes): declared, not
// skipped, so that the suite's count of skipped tests stays a count of tests that could not run.
const tenTimesPostgres = process.env.SUMMARY_EXACTNESS_10X_POSTGRES;
if (tenTimesPostgres !== undefined) {
  describe('aggregate summaries of a 10x snapshot (PostgreSQL)', () => checkExactness(() => postgresSnapshot(tenTimesPostgres), 50, 25));
}
