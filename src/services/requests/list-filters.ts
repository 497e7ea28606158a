import { ApiError } from '../../platform/error-registry.js';
import { invalidRequestMessage } from '../../platform/errors.js';
import { FILTERED_COLUMNS, type FilteredColumn } from '../../snapshot/index.js';

/**
 * The filters of `GET /v1/service-requests` (and of the count, the export, the facets and the
 * statistics), normalized: the same filtering always has the same values (dates become
 * `YYYY-MM-DDT00:00:00`, fractional seconds lose their trailing zeros, repeated values are sorted and
 * given once), so that the cursor's filter hash and the SQL parameters do not depend on how the client
 * spelled them.
 *
 * An equality filter is null when not given, else the list of accepted values (any of them matches);
 * a null in the list selects the rows without a value (the parameter value `none`). Its negation
 * `not_<filter>` is the list of refused values: a row matches when its value is none of them; a row
 * without a value matches unless `none` is among them.
 */
export type FilterValue = string | number | null;

/** The snapshot's filtered columns (snapshot-schema.ts: each has its index and its summaries). */
export const EQUALITY_FILTERS = FILTERED_COLUMNS;
export type EqualityFilter = FilteredColumn;

/** The value that selects the rows without a value, for the filters in NULL_SELECTABLE. */
export const NULL_SELECTOR = 'none';
export const NULL_SELECTABLE: readonly EqualityFilter[] = ['borough', 'complaint_type', 'channel', 'community_board'];

/** `bbox=min_long,min_lat,max_long,max_lat`, inclusive; rows without a location never match. */
export interface BoundingBox {
  minLongitude: number;
  minLatitude: number;
  maxLongitude: number;
  maxLatitude: number;
}

/** The negation of an equality filter: `not_borough=queens` (any value but these). */
export type NegatedFilter = `not_${EqualityFilter}`;
export function negationOf(name: EqualityFilter): NegatedFilter {
  return `not_${name}`;
}
export const NEGATED_FILTERS: readonly NegatedFilter[] = EQUALITY_FILTERS.map(negationOf);

/** `near=lat,long` with `radius_m`: the rows whose location lies within radiusM metres (great-circle.ts), edge included. */
export interface NearFilter {
  latitude: number;
  longitude: number;
  radiusM: number;
}

/** The largest radius of `near`, metres. */
export const MAX_RADIUS_M = 5_000;

/** The columns whose values `q` searches. */
export const SEARCHED_COLUMNS = ['complaint_type', 'descriptor', 'location_type'] as const;
export type SearchedColumn = (typeof SEARCHED_COLUMNS)[number];
/** `q` resolved: the values of each searched column that hold its text (resolveSearch). */
export type SearchValues = Readonly<Record<SearchedColumn, readonly string[]>>;

export type ListFilters = { readonly [name in EqualityFilter]: readonly FilterValue[] | null } & {
  readonly [name in NegatedFilter]: readonly FilterValue[] | null;
} & {
  /** Inclusive lower bound of created_at. */
  readonly created_from: string | null;
  /** Exclusive upper bound of created_at. */
  readonly created_to: string | null;
  readonly bbox: BoundingBox | null;
  /** true: closed_at is set; false: it is not. */
  readonly closed: boolean | null;
  /** Inclusive lower and exclusive upper bound of closed_at (the forms of created_from and created_to); an unclosed request never matches. */
  readonly closed_from: string | null;
  readonly closed_to: string | null;
  /** Inclusive bounds of days_to_close, days; an unclosed request never matches. */
  readonly days_to_close_min: number | null;
  readonly days_to_close_max: number | null;
  readonly near: NearFilter | null;
  /** The text searched, lower case (case-insensitive: the values are lowered too). */
  readonly q: string | null;
  /** q's matching values (resolveSearch), once resolved; not part of the cursor's hash (q is). */
  readonly search: SearchValues | null;
};

/** Every filter, in the fixed order of the cursor's filter hash. */
export const FILTER_NAMES = [
  ...EQUALITY_FILTERS,
  'created_from',
  'created_to',
  'bbox',
  ...NEGATED_FILTERS,
  'closed',
  'closed_from',
  'closed_to',
  'days_to_close_min',
  'days_to_close_max',
  'near',
  'q',
] as const;

/** No filter at all: every filter null. */
export const NO_FILTERS = Object.fromEntries([...FILTER_NAMES, 'search'].map((name) => [name, null])) as unknown as ListFilters;

/**
 * Whether a list page's walk checks rows against conditions its index does not seek: the box, an
 * operator, or an equality filter besides the one whose index it walks. Such a walk may read every
 * row of its index before its page is full (a small box at sea, two filters whose values never meet),
 * so the stores find the page's seconds in the row columns first (engine/page-seconds.ts).
 */
export function pageChecksRows(filters: ListFilters): boolean {
  return filters.bbox !== null || hasRowFilters(filters) || EQUALITY_FILTERS.filter((name) => filters[name] !== null).length > 1;
}

/** Whether a filter other than the equality filters, created_at's range and the box is set (the summaries hold none of them). */
export function hasRowFilters(filters: ListFilters): boolean {
  return (
    NEGATED_FILTERS.some((name) => filters[name] !== null) ||
    filters.closed !== null ||
    filters.closed_from !== null ||
    filters.closed_to !== null ||
    filters.days_to_close_min !== null ||
    filters.days_to_close_max !== null ||
    filters.near !== null ||
    filters.q !== null
  );
}

/**
 * A date `YYYY-MM-DD` or a local date-time `YYYY-MM-DDTHH:MM:SS` with at most 6 fractional digits,
 * without zone (a `Z` or an offset is refused). The validation pattern of the query parameters.
 */
export const LOCAL_DATE_OR_DATE_TIME_PATTERN =
  '^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])(T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\\.[0-9]{1,6})?)?$';

const LOCAL_DATE_OR_DATE_TIME = new RegExp(LOCAL_DATE_OR_DATE_TIME_PATTERN);

/**
 * A decimal number of degrees as clients print one: up to 20 fractional digits, so that a coordinate
 * JavaScript or Python prints in full (40.83537751718191) is taken as sent; the ranges are checked
 * after validation.
 */
const NUMBER = '-?[0-9]{1,3}(\\.[0-9]{1,20})?';
/** Four decimal numbers separated by commas. */
export const BBOX_PATTERN = `^${NUMBER},${NUMBER},${NUMBER},${NUMBER}$`;
/** `near`: a latitude and a longitude, decimal degrees (the ranges are checked after validation). */
export const NEAR_PATTERN = `^${NUMBER},${NUMBER}$`;

/** Proleptic Gregorian leap year, year 0000 included (Date.UTC would read years 0 to 99 as 1900 to 1999). */
function isLeapYear(year: number): boolean {
  return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31] as const;

function daysInMonth(year: number, month: number): number {
  if (month === 2 && isLeapYear(year)) return 29;
  const days = DAYS_IN_MONTH[month - 1];
  if (days === undefined) throw new RangeError(`no month ${month}`);
  return days;
}

/**
 * The bound as the text it is compared with (created_at is `YYYY-MM-DDTHH:MM:SS`, compared as text):
 * a date is its midnight; `.500000` becomes `.5`; `.000` is dropped. Null when the value is not a
 * date of the calendar (e.g. 2025-02-30), which the pattern alone cannot see.
 */
export function normalizeTimeBound(value: string): string | null {
  if (!LOCAL_DATE_OR_DATE_TIME.test(value)) return null;
  const year = Number(value.slice(0, 4));
  const month = Number(value.slice(5, 7));
  const day = Number(value.slice(8, 10));
  if (day > daysInMonth(year, month)) return null;
  if (value.length === 10) return `${value}T00:00:00`;
  const [whole, fraction] = value.split('.') as [string, string | undefined];
  const digits = (fraction ?? '').replace(/0+$/, '');
  return digits === '' ? whole : `${whole}.${digits}`;
}

/** The filter parameters of a validated query (repeatable ones as lists, see repeatable-parameters). */
export type FilterQuery = { [name in EqualityFilter]?: readonly string[] } & { [name in NegatedFilter]?: readonly string[] } & {
  created_from?: string;
  created_to?: string;
  bbox?: string;
  closed?: 'true' | 'false';
  closed_from?: string;
  closed_to?: string;
  days_to_close_min?: number;
  days_to_close_max?: number;
  near?: string;
  radius_m?: number;
  q?: string;
};

/** The parameters read by readListFilters (radius_m goes with near). */
const QUERY_NAMES = [...FILTER_NAMES, 'radius_m'] as const;

/** The box of a validated `bbox` text; null when its numbers are out of range or not in order. */
export function parseBoundingBox(text: string): BoundingBox | null {
  const [minLongitude, minLatitude, maxLongitude, maxLatitude] = text.split(',').map(Number) as [number, number, number, number];
  const longitudeOk = (x: number): boolean => x >= -180 && x <= 180;
  const latitudeOk = (y: number): boolean => y >= -90 && y <= 90;
  if (![minLongitude, maxLongitude].every(longitudeOk) || ![minLatitude, maxLatitude].every(latitudeOk)) return null;
  if (minLongitude > maxLongitude || minLatitude > maxLatitude) return null;
  return { minLongitude, minLatitude, maxLongitude, maxLatitude };
}

/** The accepted values of one equality filter: `none` read as null, integers as numbers, sorted, once each. */
function valuesOf(name: EqualityFilter, raw: readonly string[] | undefined): FilterValue[] | null {
  if (raw === undefined) return null;
  const values = new Set<FilterValue>();
  for (const text of raw) {
    if (text === NULL_SELECTOR && NULL_SELECTABLE.includes(name)) values.add(null);
    else values.add(name === 'council_district' ? Number(text) : text);
  }
  return [...values].sort(compareFilterValues);
}

/** Nulls last; numbers by value; texts by code point (the C collation of the snapshot). */
export function compareFilterValues(a: FilterValue, b: FilterValue): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return a < b ? -1 : 1;
}

/** A 422 invalid_request naming `fields`, in the words of the bbox and date errors. */
function invalid(fields: string[], details: string): ApiError {
  return new ApiError('invalid_request', { fields, message: invalidRequestMessage(details) });
}

/** The normalized filters of a validated query; 422 invalid_request (not a calendar date, bad box, bad near, bounds out of order) or invalid_range. */
export function readListFilters(query: FilterQuery): ListFilters {
  // A page without filters (the common case) allocates nothing.
  if (QUERY_NAMES.every((name) => query[name] === undefined)) return NO_FILTERS;
  const bad: string[] = [];
  const bound = (name: 'created_from' | 'created_to' | 'closed_from' | 'closed_to'): string | null => {
    const raw = query[name];
    if (raw === undefined) return null;
    const normalized = normalizeTimeBound(raw);
    if (normalized === null) bad.push(name);
    return normalized;
  };
  const created_from = bound('created_from');
  const created_to = bound('created_to');
  const closed_from = bound('closed_from');
  const closed_to = bound('closed_to');
  if (bad.length > 0) throw invalid(bad, `${bad.join(', ')} must be a date of the calendar`);
  const bbox = query.bbox === undefined ? null : parseBoundingBox(query.bbox);
  if (query.bbox !== undefined && bbox === null) {
    throw invalid(
      ['bbox'],
      'bbox must be min_long,min_lat,max_long,max_lat with longitudes from -180 to 180, latitudes from -90 to 90, each minimum at most its maximum',
    );
  }
  if (created_from !== null && created_to !== null && created_from >= created_to) {
    throw new ApiError('invalid_range', { fields: ['created_from', 'created_to'] });
  }
  if (closed_from !== null && closed_to !== null && closed_from >= closed_to) throw invalid(['closed_from', 'closed_to'], 'closed_from must be before closed_to');
  const days_to_close_min = query.days_to_close_min ?? null;
  const days_to_close_max = query.days_to_close_max ?? null;
  if (days_to_close_min !== null && days_to_close_max !== null && days_to_close_min > days_to_close_max) {
    throw invalid(['days_to_close_min', 'days_to_close_max'], 'days_to_close_min must be at most days_to_close_max');
  }
  const near = readNear(query.near, query.radius_m);
  const equality = Object.fromEntries(EQUALITY_FILTERS.flatMap((name) => [
    [name, valuesOf(name, query[name])],
    [negationOf(name), valuesOf(name, query[negationOf(name)])],
  ])) as Record<EqualityFilter | NegatedFilter, FilterValue[] | null>;
  const closed = query.closed === undefined ? null : query.closed === 'true';
  const q = query.q === undefined ? null : query.q.toLowerCase();
  return { ...equality, created_from, created_to, bbox, closed, closed_from, closed_to, days_to_close_min, days_to_close_max, near, q, search: null };
}

/** `near` and `radius_m`, both or neither: the centre within the ranges of the map, the radius above 0 and at most MAX_RADIUS_M. */
function readNear(text: string | undefined, radiusM: number | undefined): NearFilter | null {
  if (text === undefined && radiusM === undefined) return null;
  if (text === undefined || radiusM === undefined) throw invalid(['near', 'radius_m'], 'near and radius_m go together: give both or neither');
  const [latitude, longitude] = text.split(',').map(Number) as [number, number];
  if (!(latitude >= -90 && latitude <= 90 && longitude >= -180 && longitude <= 180)) {
    throw invalid(['near'], 'near must be lat,long with a latitude from -90 to 90 and a longitude from -180 to 180');
  }
  if (!(radiusM > 0 && radiusM <= MAX_RADIUS_M)) throw invalid(['radius_m'], `radius_m must be above 0 and at most ${MAX_RADIUS_M}`);
  return { latitude, longitude, radiusM };
}

/**
 * The filters with `q` resolved: the values of each searched column (`valuesOf`: every value the
 * snapshot holds, from its value lists) that contain q's text, case-insensitively. The same filters
 * when there is no q.
 */
export async function resolveSearch(filters: ListFilters, valuesOf: (column: SearchedColumn) => Promise<readonly FilterValue[]>): Promise<ListFilters> {
  const q = filters.q;
  if (q === null || filters.search !== null) return filters;
  const entries = await Promise.all(
    SEARCHED_COLUMNS.map(async (column) => {
      const values = await valuesOf(column);
      return [column, values.filter((value): value is string => typeof value === 'string' && value.toLowerCase().includes(q))] as const;
    }),
  );
  return { ...filters, search: Object.fromEntries(entries) as unknown as SearchValues };
}
