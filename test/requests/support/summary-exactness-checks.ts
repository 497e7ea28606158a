import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SUMMARY_BUCKET_UNITS, SUMMARY_FACET_COLUMNS, SUMMARY_FILTER_COLUMNS, SUMMARY_PAIR_UNITS, SUMMARY_UNITS, type SummaryBucketUnit, type SummaryUnit } from '../../../src/snapshot/aggregate-summaries.js';
import { SeededRandom } from '../../../src/ingest/nyc311/seeded-random.js';
import type { BucketSummary, ServiceRequestStore, ValueCount } from '../../../src/services/requests/store/service-request-store.js';
import { SqliteServiceRequestStore } from '../../../src/services/requests/store/sqlite-store.js';
import { PostgresServiceRequestStore } from '../../../src/services/requests/store/postgres-store.js';
import { compareFilterValues, NO_FILTERS, NULL_SELECTABLE, type FilterValue, type ListFilters } from '../../../src/services/requests/list-filters.js';
import { numberPlaceholders } from '../../../src/services/requests/store/postgres-queries.js';
import type { QueryDialect, SqlParameter } from '../../../src/services/requests/store/filter-sql.js';
import { BUCKET_KEY_OF, bucketNumbers, statDays, type Period } from '../../../src/services/requests/engine/period-stats.js';
import { AggregateSummaries, periodNumbersOf, splitAtWholeBuckets, type SummaryReader } from '../../../src/services/requests/engine/summary-answers.js';
import { bucketOfDay } from './expected.js';
import { recount } from './group-stats-suite.js';
import type { GroupMeasure, GroupQuery } from '../../../src/services/requests/engine/group-query.js';
import type { ServiceRequestRecord } from '../../../src/services/requests/store/service-request-store.js';

/**
 * The checks of summary-exactness*.test.ts: the aggregate summaries answer exactly what a plain SQL
 * count / GROUP BY over the rows answers, on random filter combinations they cover (seeded).
 */

type Reader = (sql: string, parameters: readonly SqlParameter[]) => Promise<Record<string, unknown>[]>;

export interface Snapshot {
  dialect: QueryDialect;
  /** Plain SQL over the snapshot, `?` placeholders. */
  read: Reader;
  /** The same, each row an array of the columns in the SELECT's order. */
  readArrays: (sql: string, parameters: readonly SqlParameter[]) => Promise<unknown[][]>;
  /** The service's store over the same snapshot. */
  store: ServiceRequestStore;
  close(): Promise<void>;
}

export function sqliteSnapshot(path: string): Snapshot {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  const store = new SqliteServiceRequestStore(path);
  return {
    read: (sql, parameters) => Promise.resolve(db.prepare(sql).all(...parameters) as Record<string, unknown>[]),
    readArrays: (sql, parameters) => Promise.resolve(db.prepare(sql).raw(true).all(...parameters) as unknown[][]),
    dialect: 'sqlite',
    store,
    close: async () => {
      db.close();
      await store.close();
    },
  };
}

export async function postgresSnapshot(url: string): Promise<Snapshot> {
  const parsed = new URL(url);
  const schema = parsed.searchParams.get('schema') ?? 'public';
  parsed.searchParams.delete('schema');
  const client = new pg.Client({ connectionString: parsed.toString() });
  await client.connect();
  await client.query(`SET search_path TO "${schema}"`);
  const store = new PostgresServiceRequestStore({ url: parsed.toString(), schema });
  return {
    read: async (sql, parameters) => (await client.query(numberPlaceholders(sql), [...parameters])).rows as Record<string, unknown>[],
    readArrays: async (sql, parameters) => (await client.query({ text: numberPlaceholders(sql), values: [...parameters], rowMode: 'array' })).rows as unknown[][],
    dialect: 'postgres',
    store,
    close: async () => {
      await client.end();
      await store.close();
    },
  };
}

/** The WHERE clause of the filters over the rows, the reference's (IN lists, both dialects). */
function whereOf(filters: ListFilters): { sql: string; parameters: FilterValue[] } {
  const conditions: string[] = [];
  const parameters: FilterValue[] = [];
  for (const column of SUMMARY_FILTER_COLUMNS) {
    const accepted = filters[column];
    if (accepted === null) continue;
    const values = accepted.filter((value) => value !== null);
    const parts = values.length > 0 ? [`${column} IN (${values.map(() => '?').join(', ')})`] : [];
    if (values.length < accepted.length) parts.push(`${column} IS NULL`);
    conditions.push(`(${parts.join(' OR ')})`);
    parameters.push(...values);
  }
  if (filters.created_from !== null) {
    conditions.push('created_at >= ?');
    parameters.push(filters.created_from);
  }
  if (filters.created_to !== null) {
    conditions.push('created_at < ?');
    parameters.push(filters.created_to);
  }
  return { sql: conditions.length === 0 ? '' : ` WHERE ${conditions.join(' AND ')}`, parameters };
}

async function countOfRows(read: Reader, filters: ListFilters): Promise<number> {
  const where = whereOf(filters);
  const [row] = await read(`SELECT count(*) AS count FROM service_requests${where.sql}`, where.parameters);
  return Number(row?.count);
}

async function facetOfRows(read: Reader, column: string, filters: ListFilters): Promise<ValueCount[]> {
  const where = whereOf(filters);
  const rows = await read(`SELECT ${column} AS value, count(*) AS count FROM service_requests${where.sql} GROUP BY ${column}`, where.parameters);
  return rows
    .map((row) => ({ value: row.value as FilterValue, count: Number(row.count) }))
    .sort((a, b) => b.count - a.count || compareFilterValues(a.value, b.value));
}

/** Each bucket's numbers of the matching rows, spelled out: count, closed within 14 days, the two middle days_to_close. */
async function bucketsOfRows(read: Reader, filters: ListFilters, unit: SummaryUnit): Promise<Map<string, BucketSummary>> {
  const where = whereOf(filters);
  const groups = new Map<string, { opened: number; closeDays: number[] }>();
  for (const row of await read(`SELECT created_at, days_to_close FROM service_requests${where.sql}`, where.parameters)) {
    const key = bucketOfDay(unit, (row.created_at as string).slice(0, 10));
    let group = groups.get(key);
    if (group === undefined) groups.set(key, (group = { opened: 0, closeDays: [] }));
    group.opened += 1;
    if (row.days_to_close !== null) group.closeDays.push(row.days_to_close as number);
  }
  const buckets = new Map<string, BucketSummary>();
  for (const [key, { opened, closeDays }] of groups) {
    const sorted = closeDays.sort((a, b) => a - b);
    const n = sorted.length;
    buckets.set(key, {
      opened,
      closedWithin: sorted.filter((days) => days <= 14).length,
      lowMiddle: n === 0 ? null : (sorted[Math.ceil(n / 2) - 1] as number),
      highMiddle: n === 0 ? null : (sorted[Math.floor(n / 2)] as number),
    });
  }
  return buckets;
}

/** The groups of one or two columns per period, recounted from the matching rows (support/group-stats-suite.ts). */
async function groupsOfRows(read: Reader, filters: ListFilters, query: GroupQuery): Promise<ReturnType<typeof recount>> {
  const where = whereOf(filters);
  const rows = await read(`SELECT ${query.by.join(', ')}, created_at, days_to_close FROM service_requests${where.sql}`, where.parameters);
  const records = rows as unknown as ServiceRequestRecord[];
  return recount(records, query.by, query.period, `${query.descending ? '-' : ''}${query.order}`, query.limit);
}

/** The measures whose order the summaries answer: those that add up over a key's periods. */
const SUMMED_MEASURES: readonly GroupMeasure[] = ['opened', 'closed', 'closed_within_14_days', 'share_closed_within_14_days'];

const addDays = (day: string, days: number): string => new Date(Date.parse(`${day}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);

/** A day of the period on a boundary of the unit's buckets (a Monday, a first of a month or of a year, any day). */
function boundaryDay(random: SeededRandom, period: Period, unit: SummaryBucketUnit): string {
  const spanDays = Math.round((Date.parse(period.end) - Date.parse(period.start)) / 86_400_000);
  let day = addDays(period.start, random.int(0, spanDays));
  if (unit === 'month') day = `${day.slice(0, 7)}-01`;
  if (unit === 'year') day = `${day.slice(0, 4)}-01-01`;
  while (unit === 'week' && new Date(`${day}T00:00:00Z`).getUTCDay() !== 1) day = addDays(day, 1);
  return day;
}

interface Combination {
  filters: ListFilters;
  unit: SummaryBucketUnit;
}

/** Random covered filters: none or one equality filter (one value when `singleValue`), and a range or not. */
function randomCombination(random: SeededRandom, values: Map<string, FilterValue[]>, period: Period, unit: SummaryBucketUnit, singleValue: boolean): Combination {
  let filters: ListFilters = NO_FILTERS;
  if (random.chance(0.85)) {
    const column = random.pick(SUMMARY_FILTER_COLUMNS);
    const present = values.get(column) ?? [];
    const choices: FilterValue[] = NULL_SELECTABLE.includes(column) ? [...present.filter((v) => v !== null), null] : present.filter((v) => v !== null);
    const size = singleValue ? 1 : random.int(1, 3);
    const picked = new Set<FilterValue>();
    for (let i = 0; i < size; i += 1) picked.add(random.pick(choices));
    filters = { ...filters, [column]: [...picked].sort(compareFilterValues) };
  }
  const range = random.int(0, 3);
  if (range !== 0) {
    const a = boundaryDay(random, period, unit);
    const b = boundaryDay(random, period, unit);
    const [from, to] = a <= b ? [a, b] : [b, a];
    if (from !== to || range !== 3) {
      filters = {
        ...filters,
        created_from: range === 2 ? null : `${from}T00:00:00`,
        created_to: range === 1 || from === to ? null : `${to}T00:00:00`,
      };
    }
  }
  return { filters, unit };
}

async function periodOf(read: Reader): Promise<Period> {
  const [meta] = await read('SELECT period_start, period_end, snapshot_date FROM snapshot_meta', []);
  return { start: meta?.period_start as string, end: meta?.period_end as string, snapshotDate: meta?.snapshot_date as string };
}

async function valuesOf(read: Reader): Promise<Map<string, FilterValue[]>> {
  const values = new Map<string, FilterValue[]>();
  for (const column of SUMMARY_FILTER_COLUMNS) {
    const rows = await read(`SELECT DISTINCT ${column} AS value FROM service_requests`, []);
    values.set(column, rows.map((row) => row.value as FilterValue));
  }
  return values;
}

/** The checks, for one snapshot: `combinations` random combinations per answer. */
/** The answers read the summary indexes only (covering): the SQLite plans of the file at `path`. */
export function checkCoveringPlans(path: string): void {
  const db = new Database(path, { readonly: true });
  try {
    const plan = (sql: string): string => (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as { detail: string }[]).map((row) => row.detail).join('; ');
    expect(plan("SELECT bucket, opened, closed_within_14_days, low_middle, high_middle FROM summary_buckets WHERE filter_column = 'borough' AND filter_value IN ('bronx') AND unit = 'day' ORDER BY bucket")).toContain('COVERING INDEX summary_buckets_scope');
    expect(plan("SELECT bucket, opened, closed, closed_within_14_days, low_middle, high_middle, p90_days_to_close FROM summary_buckets WHERE filter_column = 'borough' AND filter_value = 'bronx' AND unit = 'month' ORDER BY bucket")).toContain('COVERING INDEX summary_buckets_scope');
    expect(plan("SELECT group_value, bucket, opened, closed, closed_within_14_days, low_middle, high_middle, p90_days_to_close FROM summary_pairs WHERE filter_column = 'borough' AND filter_value = 'bronx' AND group_column = 'status' AND group_value IN ('closed', 'open') AND unit = 'month' ORDER BY group_value, bucket")).toContain(
      'COVERING INDEX summary_pairs_scope',
    );
    expect(plan("SELECT facet_value, sum(requests) FROM summary_facets WHERE filter_column = '' AND facet_column = 'status' AND period = '' GROUP BY facet_value")).toContain('COVERING INDEX summary_facets_scope');
  } finally {
    db.close();
  }
}

export function checkExactness(open: () => Promise<Snapshot>, seed: number, combinations: number): void {
  let snapshot: Snapshot;
  let reader: SummaryReader;
  let summaries: AggregateSummaries;
  let period: Period;
  let values: Map<string, FilterValue[]>;
  beforeAll(async () => {
    snapshot = await open();
    reader = (sql, parameters, shape) => (shape === 'arrays' ? snapshot.readArrays(sql, parameters) : snapshot.read(sql, parameters));
    // Every pair read, however many rows the range holds beside them: the answers checked whatever their cost.
    summaries = new AggregateSummaries(reader, snapshot.dialect, { readAnyway: Number.POSITIVE_INFINITY, scannedRowsPerRow: 0 });
    period = await periodOf(snapshot.read);
    values = await valuesOf(snapshot.read);
  }, 120_000);
  afterAll(async () => snapshot.close());

  it('counts: no filter, one filter with any list of values, a range of days alone or with it', async () => {
    const random = new SeededRandom(seed);
    for (let i = 0; i < combinations; i += 1) {
      const { filters } = randomCombination(random, values, period, 'day', false);
      const fromSummaries = await summaries.count(filters);
      expect(fromSummaries, JSON.stringify(filters)).not.toBeNull();
      expect(fromSummaries, JSON.stringify(filters)).toBe(await countOfRows(snapshot.read, filters));
    }
  }, 300_000);

  it('facets of every column: no filter, one filter with any list of values, a range of months alone or with a filter on the same column', async () => {
    const random = new SeededRandom(seed + 1);
    for (let i = 0; i < combinations; i += 1) {
      const column = random.pick(SUMMARY_FACET_COLUMNS);
      const combination = randomCombination(random, values, period, 'month', false);
      // Over a range, the summaries hold the facets of every row only (or scoped by the facet's own column).
      const ranged = combination.filters.created_from !== null || combination.filters.created_to !== null;
      const otherFilters = Object.fromEntries(SUMMARY_FILTER_COLUMNS.filter((name) => name !== column).map((name) => [name, null]));
      const filters: ListFilters = ranged ? { ...combination.filters, ...otherFilters } : combination.filters;
      const fromSummaries = await summaries.facet(column, filters);
      expect(fromSummaries, `${column} ${JSON.stringify(filters)}`).not.toBeNull();
      expect(fromSummaries, `${column} ${JSON.stringify(filters)}`).toEqual(await facetOfRows(snapshot.read, column, filters));
    }
  }, 300_000);

  it('daily, weekly and monthly numbers, medians included: no filter or one value, a range on bucket boundaries or not', async () => {
    const random = new SeededRandom(seed + 2);
    for (let i = 0; i < combinations; i += 1) {
      const unit = random.pick(SUMMARY_UNITS);
      const { filters } = randomCombination(random, values, period, unit, true);
      const buckets = await summaries.periodBuckets(filters, unit);
      expect(buckets, `${unit} ${JSON.stringify(filters)}`).not.toBeNull();
      const days = statDays(period, filters);
      const expected = await bucketNumbers(days, await bucketsOfRows(snapshot.read, filters, unit), period.snapshotDate, BUCKET_KEY_OF[unit]);
      const actual = await bucketNumbers(days, buckets ?? new Map(), period.snapshotDate, BUCKET_KEY_OF[unit]);
      expect(actual, `${unit} ${JSON.stringify(filters)}`).toEqual(expected);
    }
  }, 300_000);

  it('weekly and monthly numbers over a range that cuts weeks or months: whole ones from the summaries, cut ones from the rows of their days only', async () => {
    const random = new SeededRandom(seed + 3);
    for (let i = 0; i < combinations; i += 1) {
      const unit = random.pick(['week', 'month'] as const);
      const { filters: scoped } = randomCombination(random, values, period, 'day', true);
      const [a, b] = [boundaryDay(random, period, 'day'), boundaryDay(random, period, 'day')].sort();
      const filters: ListFilters = { ...scoped, created_from: random.chance(0.8) ? `${a}T00:00:00` : null, created_to: random.chance(0.8) ? `${b}T00:00:00` : null };
      const walked: ListFilters[] = [];
      const sources = {
        periodSummaries: (f: ListFilters, u: SummaryUnit) => summaries.periodBuckets(f, u),
        bucketsFromRows: (f: ListFilters, u: SummaryUnit) => {
          walked.push(f);
          return bucketsOfRows(snapshot.read, f, u);
        },
      };
      const expected = await bucketNumbers(statDays(period, filters), await bucketsOfRows(snapshot.read, filters, unit), period.snapshotDate, BUCKET_KEY_OF[unit]);
      expect(await periodNumbersOf(sources, filters, unit, period), `${unit} ${JSON.stringify(filters)}`).toEqual(expected);
      if (splitAtWholeBuckets(filters, unit) !== null) {
        for (const edge of walked) {
          const days = (Date.parse(`${edge.created_to?.slice(0, 10)}T00:00:00Z`) - Date.parse(`${edge.created_from?.slice(0, 10)}T00:00:00Z`)) / 86_400_000;
          expect(days, `${unit} ${JSON.stringify(edge)}`).toBeLessThan(unit === 'week' ? 7 : 31);
        }
      }
    }
  }, 300_000);

  it('the numbers per day, week or month from the rows, by the store (a worker thread, or the database): those of the rows, on any filters', async () => {
    const random = new SeededRandom(seed + 4);
    for (let i = 0; i < combinations; i += 1) {
      const unit = random.pick(SUMMARY_UNITS);
      let { filters } = randomCombination(random, values, period, 'day', false);
      if (random.chance(0.4)) filters = { ...filters, status: [random.pick((values.get('status') ?? []).filter((value) => value !== null))] };
      expect(await snapshot.store.bucketsFromRows(filters, unit), `${unit} ${JSON.stringify(filters)}`).toEqual(await bucketsOfRows(snapshot.read, filters, unit));
    }
  }, 300_000);

  /**
   * The summaries answer the groups of `by` per `unit` (a random order by a count or the share, every key
   * kept) as the rows count them; when the rows leave keys out (more than the limit of 1,000), the
   * summaries answer nothing. Whether every key was kept.
   */
  async function expectGroupsOfRows(random: SeededRandom, filters: ListFilters, by: string[], unit: SummaryBucketUnit): Promise<boolean> {
    const query: GroupQuery = { by: by as GroupQuery['by'][number][], period: unit, order: random.pick(SUMMED_MEASURES), descending: random.chance(0.5), limit: 1000 };
    const fromSummaries = await summaries.groups(filters, query);
    const ofRows = await groupsOfRows(snapshot.read, filters, query);
    const everyKey = ofRows.others.length === 0;
    expect(fromSummaries, `${JSON.stringify(query)} ${JSON.stringify(filters)}`).toEqual(everyKey ? ofRows : null);
    return everyKey;
  }

  it('groups of one column per day, ISO week, month or year, ordered by a count or the share, every key kept: those of the rows, medians and p90 included', async () => {
    const random = new SeededRandom(seed + 5);
    for (let i = 0; i < combinations; i += 1) {
      const unit = random.pick(SUMMARY_BUCKET_UNITS);
      const { filters } = randomCombination(random, values, period, unit, false);
      const filtered = SUMMARY_FILTER_COLUMNS.find((name) => filters[name] !== null);
      await expectGroupsOfRows(random, filters, [filtered ?? random.pick(SUMMARY_FILTER_COLUMNS)], unit);
    }
  }, 300_000);

  it('groups of one column per month or year within one value of another column, ordered by a count or the share, every key kept: those of the rows, medians and p90 included', async () => {
    const random = new SeededRandom(seed + 6);
    for (let i = 0; i < combinations; i += 1) {
      const unit = random.pick(SUMMARY_PAIR_UNITS);
      let { filters } = randomCombination(random, values, period, unit, true);
      let filtered = SUMMARY_FILTER_COLUMNS.find((name) => filters[name] !== null);
      if (filtered === undefined) {
        filtered = random.pick(SUMMARY_FILTER_COLUMNS);
        filters = { ...filters, [filtered]: [random.pick(values.get(filtered) ?? [])] };
      }
      await expectGroupsOfRows(random, filters, [random.pick(SUMMARY_FILTER_COLUMNS.filter((name) => name !== filtered))], unit);
    }
  }, 300_000);

  it('groups of two columns per month or year, no filter or one of any values on either of them, ordered by a count or the share, every key kept: those of the rows, medians and p90 included', async () => {
    const random = new SeededRandom(seed + 7);
    let answered = 0;
    for (let i = 0; i < combinations; i += 1) {
      const unit = random.pick(SUMMARY_PAIR_UNITS);
      const { filters } = randomCombination(random, values, period, unit, false);
      const filtered = SUMMARY_FILTER_COLUMNS.find((name) => filters[name] !== null);
      const first = filtered ?? random.pick(SUMMARY_FILTER_COLUMNS);
      const other = random.pick(SUMMARY_FILTER_COLUMNS.filter((name) => name !== first));
      if (await expectGroupsOfRows(random, filters, random.chance(0.5) ? [first, other] : [other, first], unit)) answered += 1;
    }
    expect(answered).toBeGreaterThan(combinations / 2);
  }, 300_000);

  it('leaves to the rows what it does not hold: two filters, a box, a range inside a bucket, facets over a range and another filter, statistics over several values', async () => {
    const two: ListFilters = { ...NO_FILTERS, borough: ['BRONX'], status: ['Closed'] };
    const box: ListFilters = { ...NO_FILTERS, bbox: { minLongitude: -74, minLatitude: 40.6, maxLongitude: -73.9, maxLatitude: 40.8 } };
    const midMonth: ListFilters = { ...NO_FILTERS, created_from: `${period.start.slice(0, 8)}15T00:00:00` };
    const midDay: ListFilters = { ...NO_FILTERS, created_from: `${period.start}T12:00:00` };
    const several: ListFilters = { ...NO_FILTERS, borough: ['BRONX', 'QUEENS'] };
    expect(await summaries.count(two)).toBeNull();
    expect(await summaries.count(box)).toBeNull();
    expect(await summaries.count(midDay)).toBeNull();
    expect(await summaries.facet('borough', midMonth)).toBeNull();
    expect(await summaries.facet('borough', { ...NO_FILTERS, status: ['Closed'], created_from: `${period.start}T00:00:00` })).toBeNull();
    expect(await summaries.periodBuckets(midMonth, 'month')).toBeNull();
    expect(await summaries.periodBuckets(several, 'week')).toBeNull();
  });

  it('groups of two columns per month read in steps of a few values of the second (a value\'s pairs past a thousand rows: a zip code per month within one or two boroughs): those of the rows', async () => {
    const boroughs = (values.get('borough') ?? []).filter((value) => value !== null);
    const query: GroupQuery = { by: ['incident_zip', 'borough'], period: 'month', order: 'opened', descending: true, limit: 1000 };
    for (const borough of [boroughs.slice(0, 1), boroughs.slice(1, 3)]) {
      const filters: ListFilters = { ...NO_FILTERS, borough };
      const fromSummaries = await summaries.groups(filters, query);
      expect(fromSummaries?.items.length).toBeGreaterThan(50);
      expect(fromSummaries).toEqual(await groupsOfRows(snapshot.read, filters, query));
    }
  });

  it('leaves to the scan the pairs whose rows cost more on the event loop than a walk thread\'s scan of the range: two columns, or one within a value of another', async () => {
    const pairs: GroupQuery = { by: ['borough', 'status'], period: 'month', order: 'opened', descending: true, limit: 1000 };
    const within: [ListFilters, GroupQuery] = [{ ...NO_FILTERS, borough: [(values.get('borough') ?? []).find((value) => value !== null) ?? null] }, { ...pairs, by: ['status'] }];
    const costly = new AggregateSummaries(reader, snapshot.dialect, { readAnyway: 0, scannedRowsPerRow: 1_000_000 });
    const cheap = new AggregateSummaries(reader, snapshot.dialect, { readAnyway: 0, scannedRowsPerRow: 1 });
    expect(await costly.groups(NO_FILTERS, pairs)).toBeNull();
    expect(await costly.groups(...within)).toBeNull();
    expect(await cheap.groups(NO_FILTERS, pairs)).toEqual(await groupsOfRows(snapshot.read, NO_FILTERS, pairs));
    expect(await cheap.groups(...within)).toEqual(await groupsOfRows(snapshot.read, ...within));
  });

  it('leaves to the rows the groups it does not hold: two columns per day or week or with a filter on a third column, no period, an order by the median or p90, a filter on another column per day or week or of several values, a range inside a bucket, a key left out', async () => {
    const boroughs = (values.get('borough') ?? []).length;
    const month: GroupQuery = { by: ['borough'], period: 'month', order: 'opened', descending: true, limit: boroughs };
    const midMonth: ListFilters = { ...NO_FILTERS, created_from: `${period.start.slice(0, 8)}15T00:00:00` };
    expect(await summaries.groups(NO_FILTERS, month)).toEqual(await groupsOfRows(snapshot.read, NO_FILTERS, month));
    expect(await summaries.groups(NO_FILTERS, { ...month, limit: boroughs - 1 })).toBeNull();
    const pairs: GroupQuery = { ...month, by: ['borough', 'status'], limit: 1000 };
    expect(await summaries.groups(NO_FILTERS, pairs)).toEqual(await groupsOfRows(snapshot.read, NO_FILTERS, pairs));
    expect(await summaries.groups(NO_FILTERS, { ...pairs, limit: boroughs })).toBeNull();
    expect(await summaries.groups(NO_FILTERS, { ...pairs, period: 'week' })).toBeNull();
    expect(await summaries.groups(NO_FILTERS, { ...pairs, period: 'day' })).toBeNull();
    expect(await summaries.groups({ ...NO_FILTERS, channel: ['PHONE'] }, pairs)).toBeNull();
    expect(await summaries.groups(NO_FILTERS, { ...month, by: ['location_type'] })).toBeNull();
    expect(await summaries.groups(NO_FILTERS, { ...month, period: null })).toBeNull();
    expect(await summaries.groups(NO_FILTERS, { ...month, order: 'median_days_to_close' })).toBeNull();
    expect(await summaries.groups(NO_FILTERS, { ...month, order: 'p90_days_to_close' })).toBeNull();
    expect(await summaries.groups({ ...NO_FILTERS, status: ['Closed'] }, { ...month, period: 'week' })).toBeNull();
    expect(await summaries.groups({ ...NO_FILTERS, status: ['Closed'] }, { ...month, period: 'day' })).toBeNull();
    expect(await summaries.groups({ ...NO_FILTERS, status: ['Closed', 'Open'] }, month)).toBeNull();
    expect(await summaries.groups(midMonth, month)).toBeNull();
    expect(await summaries.groups({ ...NO_FILTERS, created_from: `${period.start.slice(0, 4)}-03-01T00:00:00` }, { ...month, period: 'year' })).toBeNull();
  });
}

/** The summaries of a SQLite snapshot (`build` gives its path, within `timeoutMs`): its plans covering, its answers exact. */
export function describeSqliteExactness(name: string, build: () => Promise<string>, timeoutMs: number): void {
  describe(name, () => {
    let path = '';
    beforeAll(async () => {
      path = await build();
    }, timeoutMs);

    it('the answers read the summary indexes only (covering): SQLite plans', () => checkCoveringPlans(path));

    describe('SQLite', () => checkExactness(() => Promise.resolve(sqliteSnapshot(path)), 20, 60));
  });
}
