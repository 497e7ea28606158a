import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { buildSnapshot } from '../../../src/ingest/nyc311/build-snapshot.js';
import { writePostgresAggregateSummaries } from '../../../src/ingest/nyc311/postgres-aggregate-summaries.js';
import { dropServedSchema, readServedSnapshot } from '../../../src/snapshot/postgres-snapshot-pointer.js';
import { quoteIdentifier } from '../../../src/shared/postgres-schema.js';
import { TEST_DATABASE_URL, isolatedSchemaName } from './fixture-paths.js';
import { BUCKETS, FACETS, HISTORY, PAIRS } from './summaries-as-rows.js';

/**
 * The aggregate summaries loaded with the rows into PostgreSQL equal those built from the rows read
 * back (SQLite in summaries-as-rows-pass.test.ts).
 */
describe('aggregate summaries built as the rows are written, on PostgreSQL', () => {
  it('PostgreSQL: the tables loaded with the rows (between COPY statements) equal those built from the rows read back', async () => {
    const schema = isolatedSchemaName('summaries_as_rows_pass');
    await buildSnapshot(HISTORY, { kind: 'postgres', url: TEST_DATABASE_URL, schema }, { applyFilters: false });
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    try {
      const snapshotSchema = (await readServedSnapshot(client, schema))!.schema;
      await client.query(`SET search_path TO ${quoteIdentifier(snapshotSchema)}`);
      const read = async (sql: string) => (await client.query({ text: sql, rowMode: 'array' })).rows;
      const written = { buckets: await read(BUCKETS), pairs: await read(PAIRS), facets: await read(FACETS) };
      expect(written.buckets.length).toBeGreaterThan(1_000);
      expect(written.pairs.length).toBeGreaterThan(1_000);
      // Built again in a transaction rolled back at the end: the served schema's views over the tables go with them meanwhile.
      await client.query('BEGIN');
      await client.query('DROP TABLE summary_buckets, summary_pairs, summary_facets CASCADE');
      await writePostgresAggregateSummaries(client, snapshotSchema);
      expect(await read(BUCKETS)).toEqual(written.buckets);
      expect(await read(PAIRS)).toEqual(written.pairs);
      expect(await read(FACETS)).toEqual(written.facets);
    } finally {
      await client.query('ROLLBACK');
      await client.query('RESET search_path');
      await dropServedSchema(client, schema);
      await client.end();
    }
  }, 60_000);
});
