import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FormatTextCache } from '../../src/services/requests/answers/format-text-cache.js';
import { NO_FILTERS } from '../../src/services/requests/list-filters.js';
import { CSV_HEADER, csvRecordOf, FEATURE_COLLECTION_START, featureOf } from '../../src/services/requests/answers/row-formats.js';
import { pageText, ServiceRequestTexts, textOf } from '../../src/services/requests/answers/serialized-rows.js';
import { SqliteServiceRequestStore } from '../../src/services/requests/store/sqlite-store.js';
import type { ServiceRequestRecord, ServiceRequestStore } from '../../src/services/requests/store/service-request-store.js';
import { createSqliteFixture, type FixtureDatabase } from './support/fixture-database.js';

/**
 * CSV and GeoJSON pages are built from the rows' JSON texts and a byte-bounded arena of CSV records
 * and GeoJSON Feature heads (follow-up of the hostile-input decisions and the dashboard API decisions): the arena never holds more than its
 * bound, and the pages are the same whether every text fits or the arena starts again many times.
 */
describe('the CSV and GeoJSON texts of the rows are kept within a byte bound', () => {
  let fixture: FixtureDatabase | undefined;
  let store: SqliteServiceRequestStore | undefined;
  beforeAll(() => {
    fixture = createSqliteFixture();
    store = new SqliteServiceRequestStore(fixture.databaseUrl);
  });
  afterAll(async () => {
    await store?.close();
    await fixture?.drop();
  });

  it('pages are byte for byte the rows in each format, with an arena far smaller than the rows', async () => {
    const ids = await store!.listIds({ filters: NO_FILTERS, after: null, fetch: 1000 });
    const rows = new Map((await store!.rowsById(ids)).map((row) => [row.id, row]));
    const ordered = ids.map((id) => rows.get(id)!);
    const csv = CSV_HEADER + ordered.map(csvRecordOf).join('');
    const geojson = `${FEATURE_COLLECTION_START}${ordered.map(featureOf).join(',')}],"next_cursor":null}`;

    const arena = new FormatTextCache(1024, 256);
    const small = new ServiceRequestTexts(store!, undefined, arena);
    const large = new ServiceRequestTexts(store!);
    expect(Buffer.byteLength(csv), 'the fixture needs many generations of the small arena').toBeGreaterThan(4 * arena.maxBytes);
    for (let round = 0; round < 3; round += 1) {
      for (const texts of [small, large]) {
        const items = await texts.textsOf(ids);
        expect(texts.csvPage(items).toString('utf8')).toBe(csv);
        expect(texts.geojsonPage(items, null).toString('utf8')).toBe(geojson);
        // Interleaved within one page: a head made after the arena started again is still right.
        expect(texts.geojsonPage(items.slice(0, 40), null).toString('utf8')).toBe(`${FEATURE_COLLECTION_START}${ordered.slice(0, 40).map(featureOf).join(',')}],"next_cursor":null}`);
        expect(texts.arena.bytes()).toBeLessThanOrEqual(texts.arena.maxBytes);
      }
    }
    expect(arena.generation, 'the small arena started again').toBeGreaterThan(3);
    expect(large.arena.generation, 'the default arena (40 MiB) holds the fixture').toBe(0);
  });

  it('the kept JSON texts stay within their bytes: pages and cursor positions stay right as they start again', async () => {
    const ids = await store!.listIds({ filters: NO_FILTERS, after: null, fetch: 1000 });
    const rows = new Map((await store!.rowsById(ids)).map((row) => [row.id, row]));
    const texts = new ServiceRequestTexts(store!, 8192);
    for (let round = 0; round < 2; round += 1) {
      const items = await texts.textsOf(ids);
      expect(pageText(items, null).toString('utf8')).toBe(`{"items":[${ids.map((id) => textOf(rows.get(id)!)).join(',')}],"next_cursor":null}`);
      expect(items.map((item) => item.position)).toEqual(ids.map((id) => ({ created_at: rows.get(id)!.created_at, id })));
      expect(texts.keptTextBytes()).toBeLessThanOrEqual(8192);
    }
  });

  it('a page of rows not kept yet is read 250 rows at a time, giving way between reads, in the order of its ids', async () => {
    const ids = Array.from({ length: 1000 }, (_, i) => 5000 - i);
    const reads: number[] = [];
    const rowsOf = (piece: readonly number[]) => piece.map((id) => ({ id, created_at: '2025-01-01T00:00:00' }) as ServiceRequestRecord);
    const fake = { onSnapshotChange: () => undefined, rowsById: (piece: readonly number[]) => (reads.push(piece.length), Promise.resolve(rowsOf(piece))) };
    const items = await new ServiceRequestTexts(fake as unknown as ServiceRequestStore).textsOf(ids);
    expect(reads).toEqual([250, 250, 250, 250]);
    expect(items.map((item) => item.position.id)).toEqual(ids);
  });

  it('a text longer than a slab is built for the page and not kept', () => {
    const arena = new FormatTextCache(4096, 1024);
    expect(arena.put('x'.repeat(1025))).toBe(-1);
    expect(arena.bytes()).toBe(0);
    const place = arena.put('abc');
    expect(arena.slabOf(place).subarray(place % arena.slabBytes, (place % arena.slabBytes) + 3).toString()).toBe('abc');
  });
});
