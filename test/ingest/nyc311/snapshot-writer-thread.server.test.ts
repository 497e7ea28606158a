import pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { writeSnapshot } from '../../../src/ingest/nyc311/build-snapshot.js';
import type { SnapshotContent } from '../../../src/ingest/nyc311/snapshot-content.js';
import { writeSnapshotOnThread } from '../../../src/ingest/nyc311/snapshot-writer-thread.js';
import { TEST_POSTGRES_URL, dropPostgresSchema } from '../../requests/support/fixture-database.js';
import { streamOfContent, writerThreadContent } from './writer-thread-content.js';

/**
 * The PostgreSQL schema loaded through the writer thread against the one loaded on one thread, from
 * the same content: every table the same, row for row.
 */
let content: SnapshotContent;
beforeAll(async () => {
  content = await writerThreadContent();
}, 60_000);

/** Every table of a served PostgreSQL schema, as the text of its rows in order. */
async function postgresTables(schema: string): Promise<Record<string, string[]>> {
  const client = new pg.Client({ connectionString: TEST_POSTGRES_URL });
  await client.connect();
  try {
    const tables = ['service_requests', 'daily_stats', 'complaint_type_counts', 'cleaning_rules', 'snapshot_meta', 'summary_buckets', 'summary_facets'];
    const out: Record<string, string[]> = {};
    for (const table of tables) {
      const { rows } = await client.query<{ row: string }>(`SELECT t::text AS row FROM "${schema}".${table} t ORDER BY 1`);
      out[table] = rows.map((r) => r.row);
    }
    return out;
  } finally {
    await client.end();
  }
}

describe('the snapshot writer thread on PostgreSQL', () => {
  it('loads the PostgreSQL schema of the writer on one thread, table for table and row for row', async () => {
    const schemas = [`writer_one_${process.pid}`, `writer_thread_${process.pid}`] as const;
    try {
      const url = (schema: string): string => `${TEST_POSTGRES_URL}${TEST_POSTGRES_URL.includes('?') ? '&' : '?'}schema=${schema}`;
      await writeSnapshot({ kind: 'postgres', url: url(schemas[0]) }, content);
      await writeSnapshotOnThread({ kind: 'postgres', url: url(schemas[1]) }, streamOfContent(content));
      expect(await postgresTables(schemas[1])).toEqual(await postgresTables(schemas[0]));
    } finally {
      for (const schema of schemas) await dropPostgresSchema(schema);
    }
  }, 60_000);
});
