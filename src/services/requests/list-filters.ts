import { ApiError } from '../../platform/error-registry.js';
import { invalidRequestMessage } from '../../platform/errors.js';

/**
 * The five filters of `GET /v1/service-requests`, normalized: the same filtering always has the same
 * values (dates become `YYYY-MM-DDT00:00:00`, fractional seconds lose their trailing zeros), so that
 * the cursor's filter hash and the SQL parameters do not depend on how the client spelled them.
 */
export interface ListFilters {
  borough: string | null;
  complaint_type: string | null;
  status: string | null;
  /** Inclusive lower bound of created_at. */
  created_from: string | null;
  /** Exclusive upper bound of created_at. */
  created_to: string | null;
}

export const FILTER_NAMES = ['borough', 'complaint_type', 'status', 'created_from', 'created_to'] as const;

/**
 * A date `YYYY-MM-DD` or a local date-time `YYYY-MM-DDTHH:MM:SS` with at most 6 fractional digits,
 * without zone (a `Z` or an offset is refused). The validation pattern of the query parameters.
 */
export const LOCAL_DATE_OR_DATE_TIME_PATTERN =
  '^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])(T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\\.[0-9]{1,6})?)?$';

const LOCAL_DATE_OR_DATE_TIME = new RegExp(LOCAL_DATE_OR_DATE_TIME_PATTERN);

/** Proleptic Gregorian leap year, year 0000 included (Date.UTC would read years 0 to 99 as 1900 to 1999). */
function isLeapYear(year: number): boolean {
  return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31] as const;

function daysInMonth(year: number, month: number): number {
  return month === 2 && isLeapYear(year) ? 29 : DAYS_IN_MONTH[month - 1]!;
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

export interface FilterQuery {
  borough?: string;
  complaint_type?: string;
  status?: string;
  created_from?: string;
  created_to?: string;
}

/** The normalized filters of a validated query; 422 invalid_request (not a calendar date) or invalid_range. */
export function readListFilters(query: FilterQuery): ListFilters {
  const badDates: string[] = [];
  const bound = (name: 'created_from' | 'created_to'): string | null => {
    const raw = query[name];
    if (raw === undefined) return null;
    const normalized = normalizeTimeBound(raw);
    if (normalized === null) badDates.push(name);
    return normalized;
  };
  const created_from = bound('created_from');
  const created_to = bound('created_to');
  if (badDates.length > 0) {
    throw new ApiError('invalid_request', { fields: badDates, message: invalidRequestMessage(`${badDates.join(', ')} must be a date of the calendar`) });
  }
  if (created_from !== null && created_to !== null && created_from >= created_to) {
    throw new ApiError('invalid_range', { fields: ['created_from', 'created_to'] });
  }
  return {
    borough: query.borough ?? null,
    complaint_type: query.complaint_type ?? null,
    status: query.status ?? null,
    created_from,
    created_to,
  };
}
