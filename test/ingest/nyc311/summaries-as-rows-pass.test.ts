import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { buildSnapshot } from '../../../src/ingest/nyc311/build-snapshot.js';
import { writeSqliteAggregateSummaries } from '../../../src/ingest/nyc311/sqlite-aggregate-summaries.js';
import { BUCKETS, FACETS, HISTORY } from './summaries-as-rows.js';

/**
 * The snapshot command builds the aggregate summaries as it writes the rows (no second pass over
 * them); a snapshot loaded without them gets them from its rows read back. Both ways give the same
 * tables, row for row (SQLite here; PostgreSQL in summaries-as-rows-pass.server.test.ts).
 */
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
});
