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
 * a null in the list selects the rows without a value (the parameter value `none`).
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

export type ListFilters = { readonly [name in EqualityFilter]: readonly FilterValue[] | null } & {
  /** Inclusive lower bound of created_at. */
  readonly created_from: string | null;
  /** Exclusive upper bound of created_at. */
  readonly created_to: string | null;
  readonly bbox: BoundingBox | null;
};

/** Every filter, in the fixed order of the cursor's filter hash. */
export const FILTER_NAMES = [...EQUALITY_FILTERS, 'created_from', 'created_to', 'bbox'] as const;

/** No filter at all: every filter null. */
export const NO_FILTERS = Object.fromEntries(FILTER_NAMES.map((name) => [name, null])) as unknown as ListFilters;

/**
 * A date `YYYY-MM-DD` or a local date-time `YYYY-MM-DDTHH:MM:SS` with at most 6 fractional digits,
 * without zone (a `Z` or an offset is refused). The validation pattern of the query parameters.
 */
export const LOCAL_DATE_OR_DATE_TIME_PATTERN =
  '^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])(T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\\.[0-9]{1,6})?)?$';

const LOCAL_DATE_OR_DATE_TIME = new RegExp(LOCAL_DATE_OR_DATE_TIME_PATTERN);

/** Four decimal numbers separated by commas (the ranges are checked after validation). */
const NUMBER = '-?[0-9]{1,3}(\\.[0-9]{1,12})?';
export const BBOX_PATTERN = `^${NUMBER},${NUMBER},${NUMBER},${NUMBER}$`;

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
export type FilterQuery = { [name in EqualityFilter]?: readonly string[] } & {
  created_from?: string;
  created_to?: string;
  bbox?: string;
};

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

/** The normalized filters of a validated query; 422 invalid_request (not a calendar date, bad box) or invalid_range. */
export function readListFilters(query: FilterQuery): ListFilters {
  // A page without filters (the common case) allocates nothing.
  if (FILTER_NAMES.every((name) => query[name] === undefined)) return NO_FILTERS;
  const bad: string[] = [];
  const bound = (name: 'created_from' | 'created_to'): string | null => {
    const raw = query[name];
    if (raw === undefined) return null;
    const normalized = normalizeTimeBound(raw);
    if (normalized === null) bad.push(name);
    return normalized;
  };
  const created_from = bound('created_from');
  const created_to = bound('created_to');
  if (bad.length > 0) {
    throw new ApiError('invalid_request', { fields: bad, message: invalidRequestMessage(`${bad.join(', ')} must be a date of the calendar`) });
  }
  const bbox = query.bbox === undefined ? null : parseBoundingBox(query.bbox);
  if (query.bbox !== undefined && bbox === null) {
    throw new ApiError('invalid_request', {
      fields: ['bbox'],
      message: invalidRequestMessage(
        'bbox must be min_long,min_lat,max_long,max_lat with longitudes from -180 to 180, latitudes from -90 to 90, each minimum at most its maximum',
      ),
    });
  }
  if (created_from !== null && created_to !== null && created_from >= created_to) {
    throw new ApiError('invalid_range', { fields: ['created_from', 'created_to'] });
  }
  const equality = Object.fromEntries(EQUALITY_FILTERS.map((name) => [name, valuesOf(name, query[name])])) as Record<
    EqualityFilter,
    FilterValue[] | null
  >;
  return { ...equality, created_from, created_to, bbox };
}
