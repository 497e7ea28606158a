import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { NO_FILTERS } from '../../src/services/requests/list-filters.js';
import { SqliteServiceRequestStore } from '../../src/services/requests/sqlite-store.js';
import { createFixture } from './support/fixture-database.js';

/**
 * The SQLite store reads its keyset index in batches, one per turn of the event loop, after the
 * service listens: the requests that need it wait for it and get the same answers as from an index
 * read at once; other reads (and /ready's ping) do not wait; a change of the file between two
 * batches starts the reading again, so that the index is never half one version and half another.
 */
const ALL = { filters: NO_FILTERS, after: null, fetch: 1000 };
const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('keyset index read in batches (SQLite store)', () => {
  it('pages asked while it is read wait for it and answer as an index read at once; the ping does not wait', async () => {
    const fixture = await createFixture('sqlite');
    const batched = new SqliteServiceRequestStore(fixture.databaseUrl, 5);
    const whole = new SqliteServiceRequestStore(fixture.databaseUrl);
    try {
      const expected = await whole.listIds(ALL);
      expect(expected).toHaveLength(fixture.rows.length);
      const warming = batched.warmUp();
      const early = batched.listIds(ALL);
      const count = batched.count(NO_FILTERS);
      let pinged = false;
      const ping = batched.ping().then(() => (pinged = true));
      await turn();
      expect(pinged, 'the ping answers before the index is read').toBe(true);
      await ping;
      await warming;
      expect(await early).toEqual(expected);
      expect(await count).toBe(fixture.rows.length);
      expect(await batched.listIds({ ...ALL, fetch: 7 })).toEqual(expected.slice(0, 7));
    } finally {
      await batched.close();
      await whole.close();
      await fixture.drop();
    }
  });

  it('a change of the file between two batches: the reading starts again and the index is the new version', async () => {
    const fixture = await createFixture('sqlite');
    const store = new SqliteServiceRequestStore(fixture.databaseUrl, 5);
    try {
      const warming = store.warmUp();
      await turn(); // the first batch is read
      const all = await new SqliteServiceRequestStore(fixture.databaseUrl).listIds(ALL);
      const leaving = [all[1]!, all[all.length - 2]!];
      const writer = new Database(fixture.databaseUrl);
      writer.prepare('DELETE FROM service_requests WHERE id IN (?, ?)').run(...leaving);
      writer.close();
      await warming;
      const ids = await store.listIds(ALL);
      expect(ids).toEqual(all.filter((id) => !leaving.includes(id)));
      expect(await store.count(NO_FILTERS)).toBe(all.length - 2);
    } finally {
      await store.close();
      await fixture.drop();
    }
  });

  it('a store that cannot be read: the reading, pages and the ping reject with database_unavailable', async () => {
    const store = new SqliteServiceRequestStore('/nonexistent/service-requests.sqlite', 5);
    try {
      await expect(store.warmUp()).rejects.toMatchObject({ name: 'DatabaseUnavailableError' });
      await expect(store.listIds(ALL)).rejects.toMatchObject({ name: 'DatabaseUnavailableError' });
      await expect(store.ping()).rejects.toMatchObject({ name: 'DatabaseUnavailableError' });
    } finally {
      await store.close();
    }
  });
});
