import { join } from 'node:path';
import Database from 'better-sqlite3';
import { expect } from 'vitest';
import { buildSnapshot } from '../../../src/ingest/nyc311/build-snapshot.js';
import { writeSqliteAggregateSummaries } from '../../../src/ingest/nyc311/sqlite-aggregate-summaries.js';
import { SUMMARY_BUCKET_COLUMNS, SUMMARY_FACET_TABLE_COLUMNS, SUMMARY_PAIR_COLUMNS } from '../../../src/snapshot/aggregate-summaries.js';

/**
 * The aggregate summaries built as the rows are written, against those built from the rows read back
 * (summaries-as-rows-pass*.test.ts): a history of three years, so that buckets and months close many
 * times, and the two tables read in full, in order.
 */
export const HISTORY = { kind: 'synthetic' as const, history: { rows: 6_000, fromYear: 2022, toYear: 2024 } };
/** The fast tier's history: one year (months and weeks close many times still), a quarter of the rows. */
export const SMALL_HISTORY = { kind: 'synthetic' as const, history: { rows: 1_500, fromYear: 2024, toYear: 2024 } };
export const BUCKETS = `SELECT ${SUMMARY_BUCKET_COLUMNS.join(', ')} FROM summary_buckets ORDER BY ${SUMMARY_BUCKET_COLUMNS.join(', ')}`;
export const PAIRS = `SELECT ${SUMMARY_PAIR_COLUMNS.join(', ')} FROM summary_pairs ORDER BY ${SUMMARY_PAIR_COLUMNS.join(', ')}`;
export const FACETS = `SELECT ${SUMMARY_FACET_TABLE_COLUMNS.join(', ')} FROM summary_facets ORDER BY ${SUMMARY_FACET_TABLE_COLUMNS.join(', ')}`;

/** SQLite: the tables written with the rows of `history` (built in `folder`) equal those built from the rows read back. */
export async function expectSqliteSummariesAsRows(history: typeof HISTORY, folder: string): Promise<void> {
  const path = join(folder, 'history.sqlite');
  await buildSnapshot(history, { kind: 'sqlite', path }, { applyFilters: false });
  const db = new Database(path);
  try {
    const written = { buckets: db.prepare(BUCKETS).raw().all(), pairs: db.prepare(PAIRS).raw().all(), facets: db.prepare(FACETS).raw().all() };
    expect(written.buckets.length).toBeGreaterThan(1_000);
    expect(written.pairs.length).toBeGreaterThan(1_000);
    db.transaction(() => writeSqliteAggregateSummaries(db))();
    expect(db.prepare(BUCKETS).raw().all()).toEqual(written.buckets);
    expect(db.prepare(PAIRS).raw().all()).toEqual(written.pairs);
    expect(db.prepare(FACETS).raw().all()).toEqual(written.facets);
  } finally {
    db.close();
  }
}
