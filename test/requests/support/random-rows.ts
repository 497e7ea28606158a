/**
 * Random rows and random filter combinations (seeded), and what a plain filter of the rows answers:
 * the reference of the stores' pages, counts, facets and statistics in the tests of both backends.
 */
import { afterAll, beforeAll, expect } from 'vitest';
import { compareFilterValues, EQUALITY_FILTERS, negationOf, type FilterValue, type ListFilters, type SearchValues } from '../../../src/services/requests/list-filters.js';
import { greatCircleMeters } from '../../../src/services/requests/great-circle.js';
import { FACET_COLUMNS, type BucketSummary, type FacetColumn, type ServiceRequestRecord, type ServiceRequestStore, type ValueCount } from '../../../src/services/requests/store/service-request-store.js';
import type { SeededRandom } from '../../../src/ingest/nyc311/seeded-random.js';
import { BUCKET_KEY_OF } from '../../../src/services/requests/engine/period-stats.js';
import type { CursorPosition } from '../../../src/services/requests/cursor.js';
import type { PageLoopLimits } from '../../../src/services/requests/engine/page-seconds.js';
import { SqliteServiceRequestStore } from '../../../src/services/requests/store/sqlite-store.js';
import { createSqliteFixture, type FixtureDatabase } from './fixture-database.js';
import type { SummaryUnit } from '../../../src/snapshot/index.js';

const BOROUGHS = ['bronx', 'brooklyn', 'manhattan', 'queens', 'staten_island', null] as const;
const TYPES = ['Street Condition', 'Sidewalk Condition', 'Highway Condition', 'Curb Condition', null] as const;
const STATUSES = ['open', 'assigned', 'in_progress', 'pending', 'closed'] as const;
const CHANNELS = ['online', 'phone', 'mobile', 'other', null] as const;
const DISTRICTS = [1, 2, 33, null] as const;
const ZIPS = ['10001', '11216', null] as const;
const DESCRIPTORS = ['Pothole', 'Cave-in', null] as const;
const LOCATION_TYPES = ['Street', 'Sidewalk', null] as const;
const BOARDS = ['01 BROOKLYN', '12 MANHATTAN', null] as const;
/** Days of January 2025 (the 4th, 6th and 7th have no request) and times: midnight, one last second, and each side of 18:12:16 (the second of a day that two bytes no longer hold). */
const DAYS = [1, 2, 3, 5, 8, 9] as const;
const TIMES = ['00:00:00', '10:00:00', '10:00:01', '10:00:02', '10:00:03', '18:12:15', '18:12:16', '23:59:59'] as const;

export function randomRows(random: SeededRandom, count: number): ServiceRequestRecord[] {
  const rows: ServiceRequestRecord[] = [];
  for (let id = 1; id <= count; id += 1) {
    // Few distinct instants, so that many rows share a created_at and the id decides their order.
    const day = random.pick(DAYS);
    const time = random.pick(TIMES);
    const located = random.chance(0.8);
    // Now and then more than 655.33 days (what two bytes of hundredths hold), or just that.
    const daysToClose = random.chance(0.3) ? null : random.chance(0.1) ? random.pick([655.33, 655.34, 655.35, random.int(65_336, 200_000) / 100]) : random.int(0, 3000) / 100;
    const createdAt = `2025-01-0${day}T${time}`;
    rows.push({
      id: random.int(1, 2) === 1 ? id : count * 3 - id, // ids not in created_at order
      created_at: createdAt,
      closed_at: daysToClose === null ? null : closedAtOf(createdAt, daysToClose),
      community_board: random.pick(BOARDS),
      borough: random.pick(BOROUGHS),
      complaint_type: random.pick(TYPES),
      status: random.pick(STATUSES),
      channel: random.pick(CHANNELS),
      council_district: random.pick(DISTRICTS),
      incident_zip: random.pick(ZIPS),
      descriptor: random.pick(DESCRIPTORS),
      location_type: random.pick(LOCATION_TYPES),
      latitude: located ? 40.5 + random.int(0, 40) / 100 : null,
      longitude: located ? -74.2 + random.int(0, 50) / 100 : null,
      days_to_close: daysToClose,
    });
  }
  return rows.sort((a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.id - b.id));
}

/** closed_at of a request created at `createdAt` (January: no change of the clocks) and closed `days` later (whole hundredths: 864 s each). */
function closedAtOf(createdAt: string, days: number): string {
  const ms = Date.parse(`${createdAt}Z`) + Math.round(days * 100) * 864_000;
  return new Date(ms).toISOString().slice(0, 19);
}

export function matches(row: ServiceRequestRecord, filters: ListFilters): boolean {
  for (const name of EQUALITY_FILTERS) {
    const accepted = filters[name];
    if (accepted !== null && !accepted.includes(row[name])) return false;
  }
  const box = filters.bbox;
  if (box !== null) {
    if (row.latitude === null || row.longitude === null) return false;
    if (row.longitude < box.minLongitude || row.longitude > box.maxLongitude || row.latitude < box.minLatitude || row.latitude > box.maxLatitude) return false;
  }
  for (const name of EQUALITY_FILTERS) {
    const refused = filters[negationOf(name)];
    if (refused !== null && refused.includes(row[name])) return false;
  }
  if (filters.closed !== null && (row.closed_at !== null) !== filters.closed) return false;
  if (filters.closed_from !== null && (row.closed_at === null || row.closed_at < filters.closed_from)) return false;
  if (filters.closed_to !== null && (row.closed_at === null || row.closed_at >= filters.closed_to)) return false;
  if (filters.days_to_close_min !== null && (row.days_to_close === null || row.days_to_close < filters.days_to_close_min)) return false;
  if (filters.days_to_close_max !== null && (row.days_to_close === null || row.days_to_close > filters.days_to_close_max)) return false;
  const near = filters.near;
  if (near !== null && (row.latitude === null || row.longitude === null || greatCircleMeters(near.latitude, near.longitude, row.latitude, row.longitude) > near.radiusM)) return false;
  const q = filters.q;
  if (q !== null && ![row.complaint_type, row.descriptor, row.location_type].some((value) => value !== null && value.toLowerCase().includes(q))) return false;
  return (filters.created_from === null || row.created_at >= filters.created_from) && (filters.created_to === null || row.created_at < filters.created_to);
}

/** q resolved against every value the rows may hold (resolveSearch's work, here on the lists of values). */
export function searchOf(q: string): SearchValues {
  const holding = (values: readonly (string | null)[]): string[] => values.filter((value): value is string => value !== null && value.toLowerCase().includes(q));
  return { complaint_type: holding(TYPES), descriptor: holding(DESCRIPTORS), location_type: holding(LOCATION_TYPES) };
}

/** A centre and a radius: sometimes the exact distance to a row's location (on the edge, which matches), up to 5,000 m. */
function randomNear(random: SeededRandom): NonNullable<ListFilters['near']> {
  const latitude = 40.5 + random.int(0, 40) / 100 + (random.chance(0.5) ? 0 : random.int(1, 999) / 100_000);
  const longitude = -74.2 + random.int(0, 50) / 100 + (random.chance(0.5) ? 0 : random.int(1, 999) / 100_000);
  const edge = greatCircleMeters(latitude, longitude, latitude + random.int(-3, 3) / 100, longitude + random.int(-3, 3) / 100);
  const radiusM = random.chance(0.5) && edge > 0 && edge <= 5000 ? edge : random.pick([1, 500, 1_112, 2_500, 5_000]);
  return { latitude, longitude, radiusM };
}

/** Random values of one filter: absent, one, several, sometimes `none` or a value no row has. */
function someOf<T extends string | number | null>(random: SeededRandom, values: readonly T[], unknown: T): T[] | null {
  if (!random.chance(0.35)) return null;
  const chosen = new Set<T>();
  const count = random.pick([1, 1, 2, 3]);
  for (let i = 0; i < count; i += 1) chosen.add(random.chance(0.05) ? unknown : random.pick(values));
  return [...chosen];
}

export function randomFilters(random: SeededRandom): ListFilters {
  const bounds = [
    '2025-01-00', '2025-01-03T00:00:00', '2025-01-04T10:00:01', '2025-01-05T10:00:03', '2025-01-07', '2025-01-10',
    '2025-01-02T18:12:15', '2025-01-02T18:12:16', '2025-01-02T18:12:16.5', '2025-01-05T23:59:59', '2025-01-06T12:00:00', '2025-01-09T18:12:17',
  ];
  return {
    borough: someOf(random, BOROUGHS, 'nowhere'),
    complaint_type: someOf(random, TYPES, 'Pothole'),
    status: someOf(random, STATUSES, 'done' as never),
    channel: random.chance(0.5) ? someOf(random, CHANNELS, 'fax') : null,
    council_district: random.chance(0.5) ? someOf(random, DISTRICTS, 99) : null,
    incident_zip: random.chance(0.5) ? someOf(random, ZIPS, '99999') : null,
    descriptor: random.chance(0.5) ? someOf(random, DESCRIPTORS, 'Other') : null,
    community_board: random.chance(0.4) ? someOf(random, BOARDS, '99 QUEENS') : null,
    created_from: random.chance(0.3) ? random.pick(bounds) : null,
    created_to: random.chance(0.3) ? random.pick(bounds) : null,
    bbox: random.chance(0.2) ? (random.chance(0.5) ? { minLongitude: -74.1, minLatitude: 40.6, maxLongitude: -73.9, maxLatitude: 40.8 } : smallBox(random)) : null,
    ...randomOperators(random),
  };
}

/** The operators besides equality: negations, closed, its bounds, days_to_close, near and q, each now and then. */
function randomOperators(random: SeededRandom): Omit<ListFilters, (typeof EQUALITY_FILTERS)[number] | 'created_from' | 'created_to' | 'bbox'> {
  const closedBounds = ['2025-01-02', '2025-01-05T10:00:03', '2025-01-09T18:12:16', '2025-01-15', '2025-02-01', '2025-03-01T12:00:00', '2026-06-01'];
  const rare = (): boolean => random.chance(0.12);
  const q = rare() ? random.pick(['pot', 'street', 'walk', 'cave-', 'e', 'zzz']) : null;
  return {
    not_borough: rare() ? someOf(random, BOROUGHS, 'nowhere') : null,
    not_complaint_type: rare() ? someOf(random, TYPES, 'Pothole') : null,
    not_status: rare() ? someOf(random, STATUSES, 'done' as never) : null,
    not_channel: rare() ? someOf(random, CHANNELS, 'fax') : null,
    not_council_district: rare() ? someOf(random, DISTRICTS, 99) : null,
    not_incident_zip: rare() ? someOf(random, ZIPS, '99999') : null,
    not_descriptor: rare() ? someOf(random, DESCRIPTORS, 'Other') : null,
    not_community_board: rare() ? someOf(random, BOARDS, '99 QUEENS') : null,
    closed: rare() ? random.chance(0.5) : null,
    closed_from: rare() ? random.pick(closedBounds) : null,
    closed_to: rare() ? random.pick(closedBounds) : null,
    days_to_close_min: rare() ? random.pick([0, 0.01, 1.5, 14, 20.015, 655.33, 655.34]) : null,
    days_to_close_max: rare() ? random.pick([0, 3.02, 14, 29.99, 655.33, 700]) : null,
    near: rare() ? randomNear(random) : null,
    q,
    search: q === null ? null : searchOf(q),
  };
}

/**
 * A box of at most 0.08 degree, read by its map cells: its edges on the rows' locations (multiples of
 * 0.01, the cells' own edges) or between them.
 */
function smallBox(random: SeededRandom): NonNullable<ListFilters['bbox']> {
  const step = (): number => random.int(0, 8) / (random.chance(0.5) ? 100 : 130);
  const minLongitude = -74.2 + random.int(0, 50) / 100 - (random.chance(0.3) ? 0.005 : 0);
  const minLatitude = 40.5 + random.int(0, 40) / 100 + (random.chance(0.3) ? 0.003 : 0);
  return { minLongitude, minLatitude, maxLongitude: minLongitude + step(), maxLatitude: minLatitude + step() };
}

/** A random question of the aggregates: filters, a facet's column, a unit of the statistics. */
export function randomAggregateQuery(random: SeededRandom): { filters: ListFilters; column: FacetColumn; unit: SummaryUnit } {
  const filters = randomFilters(random);
  const column = random.pick(FACET_COLUMNS);
  return { filters, column, unit: random.pick(['day', 'week', 'month'] as const) };
}

/** The count, the facet of `column` and the buckets of `unit` of the rows that match the filters. */
export function answersOfRows(
  rows: readonly ServiceRequestRecord[],
  filters: ListFilters,
  column: FacetColumn,
  unit: SummaryUnit,
): { count: number; facet: ValueCount[]; buckets: Map<string, BucketSummary> } {
  const matching = rows.filter((row) => matches(row, filters));
  const counts = new Map<FilterValue, number>();
  for (const row of matching) counts.set(row[column], (counts.get(row[column]) ?? 0) + 1);
  const facet = [...counts].map(([value, count]) => ({ value, count })).sort((a, b) => b.count - a.count || compareFilterValues(a.value, b.value));
  const buckets = new Map<string, BucketSummary>();
  for (const key of new Set(matching.map((row) => BUCKET_KEY_OF[unit](row.created_at.slice(0, 10))))) {
    const ofBucket = matching.filter((row) => BUCKET_KEY_OF[unit](row.created_at.slice(0, 10)) === key);
    const closeDays = ofBucket.flatMap((row) => (row.days_to_close === null ? [] : [row.days_to_close])).sort((a, b) => a - b);
    const n = closeDays.length;
    buckets.set(key, {
      opened: ofBucket.length,
      closedWithin: closeDays.filter((days) => days <= 14).length,
      lowMiddle: n === 0 ? null : (closeDays[Math.ceil(n / 2) - 1] as number),
      highMiddle: n === 0 ? null : (closeDays[Math.floor(n / 2)] as number),
    });
  }
  return { count: matching.length, facet, buckets };
}

/** The SQL query, spelled out on the rows: WHERE filters AND (created_at, id) > after ORDER BY created_at, id LIMIT fetch. */
export function byScan(rows: readonly ServiceRequestRecord[], filters: ListFilters, after: CursorPosition | null, fetch: number): number[] {
  return rows
    .filter(
      (row) =>
        matches(row, filters) &&
        (after === null || row.created_at > after.created_at || (row.created_at === after.created_at && row.id > after.id)),
    )
    .slice(0, fetch)
    .map((row) => row.id);
}

/**
 * `queries` random pages of the store (filters, a cursor position of a real row or between rows, a
 * page size), each against the plain filter and sort of the rows it holds (sqlite-pages-and-walks*.test.ts).
 */
export async function expectPagesOfTheRows(store: Pick<ServiceRequestStore, 'listIds'>, rows: readonly ServiceRequestRecord[], random: SeededRandom, queries: number): Promise<void> {
  for (let i = 0; i < queries; i += 1) {
    const filters = randomFilters(random);
    const anchor = random.pick(rows);
    // The position of a real row, or one between rows (a row that left the set, or another id).
    const after = random.chance(0.5) ? null : { created_at: anchor.created_at, id: random.chance(0.7) ? anchor.id : random.int(0, 2000) };
    const fetch = random.pick([1, 2, 3, 7, 51, 1001]);
    expect(await store.listIds({ filters, after, fetch }), JSON.stringify({ filters, after, fetch })).toEqual(byScan(rows, filters, after, fetch));
  }
}

/**
 * A SQLite fixture of `rows` and a warmed-up store over it, for the tests of the describe block that
 * calls it; `pageLoop`: how much of a page runs on the event loop (the default's otherwise).
 */
export function sqliteStoreOfRows(rows: ServiceRequestRecord[], pageLoop?: PageLoopLimits): { readonly store: SqliteServiceRequestStore; readonly path: string } {
  let fixture: FixtureDatabase | undefined;
  let store: SqliteServiceRequestStore | undefined;
  beforeAll(async () => {
    fixture = createSqliteFixture({ rows });
    store = new SqliteServiceRequestStore(fixture.databaseUrl, {}, pageLoop);
    await store.warmUp();
  });
  afterAll(async () => {
    await store?.close();
    await fixture?.drop();
  });
  return {
    get store() {
      if (store === undefined) throw new Error('the store is opened before the tests');
      return store;
    },
    get path() {
      if (fixture === undefined) throw new Error('the fixture is written before the tests');
      return fixture.databaseUrl;
    },
  };
}
