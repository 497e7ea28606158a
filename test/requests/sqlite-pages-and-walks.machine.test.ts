import { describe, it } from 'vitest';
import { SeededRandom } from '../../src/ingest/nyc311/seeded-random.js';
import { expectPagesOfTheRows, randomRows, sqliteStoreOfRows } from './support/random-rows.js';

/**
 * The SQLite store's list pages, walked from the snapshot's indexes, against a plain filter and sort
 * of the same rows, for 2,000 random filter combinations, time bounds, cursor positions and page
 * sizes: the fast tier sends 300 of them (sqlite-pages-and-walks.test.ts, with the other checks of
 * the store's pages and row walks).
 */
describe('pages of the SQLite store, at length', () => {
  const random = new SeededRandom(2025);
  const rows = randomRows(random, 600);
  const sqlite = sqliteStoreOfRows(rows);

  it('answers every random page as a plain filter and sort of the rows (2,000 queries)', async () => {
    await expectPagesOfTheRows(sqlite.store, rows, random, 2000);
  });
});
