import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { buildSnapshot } from '../../../src/ingest/nyc311/build-snapshot.js';
import { writePostgresAggregateSummaries } from '../../../src/ingest/nyc311/postgres-aggregate-summaries.js';
import { writeSqliteAggregateSummaries } from '../../../src/ingest/nyc311/sqlite-aggregate-summaries.js';
import { SUMMARY_BUCKET_COLUMNS, SUMMARY_FACET_TABLE_COLUMNS } from '../../../src/snapshot/aggregate-summaries.js';
import { dropServedSchema, readServedSnapshot } from '../../../src/snapshot/postgres-snapshot-pointer.js';
import { quoteIdentifier } from '../../../src/shared/postgres-schema.js';
import { TEST_DATABASE_URL, isolatedSchemaName } from './fixture-paths.js';

/**
 * The snapshot command builds the aggregate summaries as it writes the rows (no second pass over
 * them); a snapshot loaded without them gets them from its rows read back. Both ways give the same
 * tables, row for row, on both backends (a history of three years: buckets and months close many times).
 */
const HISTORY = { kind: 'synthetic' as const, history: { rows: 6_000, fromYear: 2022, toYear: 2024 } };
const BUCKETS = `SELECT ${SUMMARY_BUCKET_COLUMNS.join(', ')} FROM summary_buckets ORDER BY ${SUMMARY_BUCKET_COLUMNS.join(', ')}`;
const FACETS = `SELECT ${SUMMARY_FACET_TABLE_COLUMNS.join(', ')} FROM summary_facets ORDER BY ${SUMMARY_FACET_TABLE_COLUMNS.join(', ')}`;

describe('aggregate summaries built as the rows are written', () => {
  const folder = mkdtempSync(join(tmpdir(), 'summaries-as-rows-pass-'));
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  it('SQLite: the tables written with the rows equal those built from the rows read back', async () => {
    const path = join(folder, 'history.sqlite');
    await buildSnapshot(HISTORY, { kind: 'sqlite', path }, { applyFilters: false });
    const db = new Database(path);
    try {
      const written = { buckets: db.prepare(BUCKETS).raw().all(), facets: db.prepare(FACETS).raw().all() };
      expect(written.buckets.length).toBeGreaterThan(1_000);
      db.transaction(() => writeSqliteAggregateSummaries(db))();
      expect(db.prepare(BUCKETS).raw().all()).toEqual(written.buckets);
      expect(db.prepare(FACETS).raw().all()).toEqual(written.facets);
    } finally {
      db.close();
    }
  }, 60_000);

  it('PostgreSQL: the tables loaded with the rows (between COPY statements) equal those built from the rows read back', async () => {
    const schema = isolatedSchemaName('summaries_as_rows_pass');
    await buildSnapshot(HISTORY, { kind: 'postgres', url: TEST_DATABASE_URL, schema }, { applyFilters: false });
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    try {
      const snapshotSchema = (await readServedSnapshot(client, schema))!.schema;
      await client.query(`SET search_path TO ${quoteIdentifier(snapshotSchema)}`);
      const read = async (sql: string) => (await client.query({ text: sql, rowMode: 'array' })).rows;
      const written = { buckets: await read(BUCKETS), facets: await read(FACETS) };
      expect(written.buckets.length).toBeGreaterThan(1_000);
      // Built again in a transaction rolled back at the end: the served schema's views over the tables go with them meanwhile.
      await client.query('BEGIN');
      await client.query('DROP TABLE summary_buckets, summary_facets CASCADE');
      await writePostgresAggregateSummaries(client, snapshotSchema);
      expect(await read(BUCKETS)).toEqual(written.buckets);
      expect(await read(FACETS)).toEqual(written.facets);
    } finally {
      await client.query('ROLLBACK');
      await client.query('RESET search_path');
      await dropServedSchema(client, schema);
      await client.end();
    }
  }, 60_000);
});
