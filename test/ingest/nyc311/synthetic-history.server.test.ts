import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { buildSnapshot } from '../../../src/ingest/nyc311/build-snapshot.js';
import { dropServedSchema } from '../../../src/snapshot/postgres-snapshot-pointer.js';
import { readSnapshotMetaFromPostgres } from '../../../src/snapshot/snapshot-readers.js';
import { TEST_DATABASE_URL, isolatedSchemaName } from './fixture-paths.js';

/** A synthetic history loaded into PostgreSQL holds what the same history holds in SQLite. */
const directory = mkdtempSync(join(tmpdir(), 'snapshot-history-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

describe('snapshot command', () => {
  it('loads a history into PostgreSQL with the same content as into SQLite', async () => {
    const history = { rows: 5_000, fromYear: 2024, toYear: 2025 };
    const schema = isolatedSchemaName('history');
    const sqlite = await buildSnapshot({ kind: 'synthetic', history }, { kind: 'sqlite', path: join(directory, 'small.sqlite') }, { applyFilters: false });
    const postgres = await buildSnapshot({ kind: 'synthetic', history }, { kind: 'postgres', url: TEST_DATABASE_URL, schema }, { applyFilters: false });
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    try {
      expect(postgres.meta.content_sha256).toBe(sqlite.meta.content_sha256);
      const meta = await readSnapshotMetaFromPostgres(client, schema);
      expect(meta.row_count).toBe(5_000);
      expect(Number((await client.query(`SELECT count(*) AS n FROM "${schema}".service_requests`)).rows[0].n)).toBe(5_000);
    } finally {
      await dropServedSchema(client, schema);
      await client.end();
    }
  }, 120_000);
});
