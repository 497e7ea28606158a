import { afterAll, beforeAll, describe, it } from 'vitest';
import { SqliteServiceRequestStore } from '../../src/services/requests/store/sqlite-store.js';
import { SeededRandom } from '../../src/ingest/nyc311/seeded-random.js';
import { createSqliteFixture, type FixtureDatabase } from './support/fixture-database.js';
import { expectPagesOfTheRows, randomRows } from './support/random-rows.js';

/**
 * The SQLite store's list pages, walked from the snapshot's indexes, against a plain filter and sort
 * of the same rows, for 2,000 random filter combinations, time bounds, cursor positions and page
 * sizes: the fast tier sends 300 of them (sqlite-pages-and-walks.test.ts, with the other checks of
 * the store's pages and row walks).
 */
describe('pages of the SQLite store, at length', () => {
  const random = new SeededRandom(2025);
  const rows = randomRows(random, 600);
  let fixture: FixtureDatabase;
  let store: SqliteServiceRequestStore;
  beforeAll(async () => {
    fixture = createSqliteFixture({ rows });
    store = new SqliteServiceRequestStore(fixture.databaseUrl);
    await store.warmUp();
  });
  afterAll(async () => {
    await store.close();
    await fixture.drop();
  });

  it('answers every random page as a plain filter and sort of the rows (2,000 queries)', async () => {
    await expectPagesOfTheRows(store, rows, random, 2000);
  });
});
