import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { MAX_BOX_CELLS } from '../../src/snapshot/index.js';
import { oneOfList, walkSlots, type TableLayout } from '../../src/services/requests/store/filter-sql.js';
import { EQUALITY_FILTERS, NO_FILTERS, NULL_SELECTABLE, type EqualityFilter, type FilterValue, type ListFilters } from '../../src/services/requests/list-filters.js';
import { bucketsQuery, countQuery, facetQuery, listIdsQuery } from '../../src/services/requests/store/postgres-queries.js';
import { FILTER_VALUES_MAXIMUM } from '../../src/services/requests/schemas.js';
import { bucketRowsSql, countSql, facetSql, pageIdsQuery, type FilterValueCounts } from '../../src/services/requests/store/sqlite-queries.js';
import { SqliteStatements } from '../../src/services/requests/store/sqlite-statements.js';
import { StatementLru } from '../../src/services/requests/store/statement-lru.js';
import { AggregateSummaries } from '../../src/services/requests/engine/summary-answers.js';

/**
 * SQL texts that do not depend on how many values a client sends, and statement caches that clients
 * cannot grow (the hostile-input decisions; docs/reliability.md): a list of values is one parameter,
 * the walks of a page come in a fixed set of counts, every statement cache is bounded by the length of
 * its texts, and a SQLite connection that dropped as much as it keeps is closed (its statements
 * finalized). PostgreSQL: filter-shapes.server.test.ts.
 */
const LAYOUT: TableLayout = { name: 'service_requests', mapCells: true };
const NO_COUNTS: FilterValueCounts = new Map();

/** Values of a filter: `count` of them, and `none` too when asked (and the filter allows it). */
function valuesOf(filter: EqualityFilter, count: number, withNull: boolean): FilterValue[] {
  const values: FilterValue[] = Array.from({ length: count }, (_, i) => (filter === 'council_district' ? i + 1 : `value ${i}`));
  return withNull ? [...values, null] : values;
}

/** Every text the statement builders make for these filters, on both backends. */
function textsOf(filters: ListFilters): string[] {
  const after = { created_at: '2025-03-01T00:00:00', id: 5 };
  return [
    pageIdsQuery({ filters, after: null, fetch: 51 }, NO_COUNTS, LAYOUT).sql,
    pageIdsQuery({ filters, after, fetch: 51 }, NO_COUNTS, LAYOUT).sql,
    countSql(filters, NO_COUNTS, LAYOUT).sql,
    facetSql('status', filters, NO_COUNTS, LAYOUT).sql,
    bucketRowsSql(filters, NO_COUNTS, LAYOUT).sql,
    listIdsQuery({ filters, after, fetch: 51 }, LAYOUT).sql,
    countQuery(filters, LAYOUT).sql,
    facetQuery('status', filters, LAYOUT).sql,
    bucketsQuery(filters, 'week', LAYOUT).sql,
  ];
}

/** The number of distinct texts each builder makes over the given filters. */
function distinctTexts(every: ListFilters[]): number {
  const texts = new Set<string>();
  for (const filters of every) for (const text of textsOf(filters)) texts.add(text);
  return texts.size;
}

describe('the SQL texts do not depend on how many values a client sends', () => {
  it('walks come in a fixed set of counts: 1, 2, 4, ... up to the most values, never fewer than asked', () => {
    expect(Array.from({ length: 50 }, (_, i) => walkSlots(i + 1, FILTER_VALUES_MAXIMUM)).filter((slots, i, all) => all.indexOf(slots) === i)).toEqual([1, 2, 4, 8, 16, 32, 50]);
    expect(Array.from({ length: 64 }, (_, i) => walkSlots(i + 1, MAX_BOX_CELLS)).filter((slots, i, all) => all.indexOf(slots) === i)).toEqual([1, 2, 4, 8, 16, 32, 64]);
    expect(walkSlots(70, 64)).toBe(70);
  });

  for (const filter of EQUALITY_FILTERS) {
    it(`${filter}: 1 to ${FILTER_VALUES_MAXIMUM} values make at most 7 texts per statement (with none, alone, beside a filter of 1 to 5 values)`, () => {
      for (const withNull of NULL_SELECTABLE.includes(filter) ? [false, true] : [false]) {
        for (const beside of [null, filter === 'status' ? 'channel' : 'status'] as const) {
          const every = Array.from({ length: FILTER_VALUES_MAXIMUM }, (_, i) => ({
            ...NO_FILTERS,
            [filter]: valuesOf(filter, i + 1, withNull),
            ...(beside === null ? {} : { [beside]: valuesOf(beside, 1 + (i % 5), false) }),
          }));
          // At most one text per count of the filter's walks or placeholders (7 of them), and per form
          // of the other filter's values (one value; 2, 4 or 8 placeholders on SQLite).
          const forms = beside === null ? 1 : 4;
          expect(distinctTexts(every)).toBeLessThanOrEqual(7 * forms * textsOf(NO_FILTERS).length);
          const perStatement = textsOf(NO_FILTERS).map((_, at) => new Set(every.map((filters) => textsOf(filters)[at])).size);
          for (const count of perStatement) expect(count).toBeLessThanOrEqual(7 * forms);
        }
      }
    });
  }

  it('a map box of 1 to 64 cells: at most 7 texts per statement', () => {
    const every = Array.from({ length: MAX_BOX_CELLS }, (_, i) => {
      const west = -74 + 0.0001;
      return { ...NO_FILTERS, status: ['open', 'closed'], bbox: { minLongitude: west, minLatitude: 40.701, maxLongitude: west + 0.01 * i + 0.005, maxLatitude: 40.704 } };
    });
    const perStatement = textsOf(NO_FILTERS).map((_, at) => new Set(every.map((filters) => textsOf(filters)[at])).size);
    for (const count of perStatement) expect(count).toBeLessThanOrEqual(7);
  });

  it('the aggregate summaries: at most 7 texts per statement whatever the number of values (one on PostgreSQL)', async () => {
    for (const dialect of ['sqlite', 'postgres'] as const) {
      const texts = new Set<string>();
      const summaries = new AggregateSummaries((sql: string) => {
        texts.add(sql);
        return Promise.resolve([]);
      }, dialect);
      for (let count = 2; count <= FILTER_VALUES_MAXIMUM; count += 1) {
        await summaries.count({ ...NO_FILTERS, descriptor: valuesOf('descriptor', count, false) });
        await summaries.facet('borough', { ...NO_FILTERS, borough: valuesOf('borough', count, false) });
      }
      expect(texts.size).toBe(dialect === 'postgres' ? 2 : 2 * 6);
    }
  });

  it('the placeholders past the values, given nulls, select nothing more (with and without none)', () => {
    const database = new Database(':memory:');
    database.exec("CREATE TABLE t (n INTEGER, s TEXT); INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, NULL), (10, '1')");
    const { sql, parameters } = oneOfList('s', ['a', '1', 'z'], 'sqlite', FILTER_VALUES_MAXIMUM);
    expect(parameters).toEqual(['a', '1', 'z', null]);
    expect(database.prepare(`SELECT n FROM t WHERE ${sql} ORDER BY n`).pluck().all(...parameters)).toEqual([1, 10]);
    expect(database.prepare(`SELECT n FROM t WHERE (${sql} OR s IS NULL) ORDER BY n`).pluck().all(...parameters)).toEqual([1, 3, 10]);
    database.close();
  });
});

describe('statement caches bounded by the length of their texts', () => {
  it('StatementLru: the least recently used dropped first, within the bound, never the statement just kept', () => {
    const lru = new StatementLru<number>(10);
    expect(lru.set('aaaa', 1)).toEqual([]);
    expect(lru.set('bbbb', 2)).toEqual([]);
    expect(lru.get('aaaa')).toBe(1);
    expect(lru.set('cccc', 3)).toEqual([['bbbb', 2]]);
    expect(lru.stats()).toEqual({ statements: 2, chars: 8 });
    expect(lru.set('x'.repeat(30), 4)).toEqual([
      ['aaaa', 1],
      ['cccc', 3],
    ]);
    expect(lru.stats()).toEqual({ statements: 1, chars: 30 });
  });

  it('SqliteStatements: past the bound the least used are dropped, and once as much was dropped as is kept, the connection is closed (every statement finalized)', () => {
    const opened: Database.Database[] = [];
    const statements = new SqliteStatements(() => {
      const database = new Database(':memory:');
      opened.push(database);
      return database;
    }, 2_000);
    const first = statements.statement('SELECT 0 AS n');
    for (let n = 1; n < 1_000; n += 1) {
      expect(statements.statement(`SELECT ${n} AS n, '${'x'.repeat(n % 50)}' AS padding`).get()).toMatchObject({ n });
      const { chars, droppedChars } = statements.stats();
      expect(chars).toBeLessThanOrEqual(2_000);
      expect(droppedChars).toBeLessThan(2_000 + 100);
    }
    expect(statements.recycled).toBeGreaterThan(5);
    expect(first.database.open).toBe(false);
    expect(opened.slice(0, -1).every((database) => !database.open)).toBe(true);
    statements.close();
    expect(opened.every((database) => !database.open)).toBe(true);
  });
});
