/**
 * The row columns of a snapshot (SQLite or PostgreSQL): what count, facets and the statistics read of each row, as one
 * compact array per column over every row in list order (created_at, id). A walk worker answers any
 * combination of equality filters and a created_at range by scanning these arrays (about 16 bytes a
 * row stored, 12 in the service's memory) instead of reading rows through an index and the table (a
 * combination of common values reads millions of rows: seconds at 50x).
 *
 * - Each coded column (the equality filters and location_type) stores a code per row: 0 for no
 *   value, 1 to 65,535 for the values, which ROW_COLUMN_VALUES_TABLE lists with their types (text, or
 *   integer for council_district).
 * - `created_at` is stored as its wall time in seconds since 1970-01-01 (unsigned 32 bits): the local
 *   day is the seconds divided by 86,400, and a created_at bound is a row range (the rows are sorted).
 * - `days_to_close` is stored in hundredths (signed 32 bits; NULL_HUNDREDTHS when there is none): the
 *   value is exact at its two decimals, and hundredths / 100 is the same number as the stored one.
 * - `closed_at` is stored as its wall time in seconds like created_at (unsigned 32 bits), NOT_CLOSED_SECONDS
 *   for a request without one: a closed_at bound is compared with it as with created_at (boundSeconds).
 * - `latitude` and `longitude` are stored as they are (64-bit floats, NaN without a location): the
 *   ingest keeps every decimal the source has, and a box or a distance must read the same numbers
 *   as the SQL does, to the last bit.
 *
 * The arrays are stored in chunks of ROW_COLUMN_CHUNK rows, little-endian, so that the writer holds
 * one chunk and the reader copies one chunk at a time. A snapshot whose values do not fit (more than
 * 65,535 values in a column, a created_at or closed_at outside 1970 to 2106) has no row columns; so has a
 * snapshot written before them: its walks read the rows.
 */
import { SUMMARY_FACET_COLUMNS, type SummaryFacetColumn } from './aggregate-summaries.js';
import { wallTimeMs } from './new-york-time.js';
import { tableName, type SqlDialect } from './snapshot-schema.js';

/** The coded columns: every column that a filter selects or a facet counts. */
export const CODED_COLUMNS = SUMMARY_FACET_COLUMNS;
export type CodedColumn = SummaryFacetColumn;

/** The stored arrays: the coded columns, then created_at, days_to_close, closed_at, latitude and longitude. */
export const CREATED_SECONDS = 'created_at';
export const DAYS_TO_CLOSE_HUNDREDTHS = 'days_to_close';
export const CLOSED_SECONDS = 'closed_at';
export const LATITUDE_DEGREES = 'latitude';
export const LONGITUDE_DEGREES = 'longitude';

export const ROW_COLUMNS_TABLE = 'row_columns';
export const ROW_COLUMN_VALUES_TABLE = 'row_column_values';

/** Rows per stored chunk. */
export const ROW_COLUMN_CHUNK = 65_536;
/** The largest code of a coded column. */
export const MAX_CODE = 65_535;
/** days_to_close of a request that is not closed. */
export const NULL_HUNDREDTHS = -2_147_483_648;
/** closed_at of a request that is not closed (no closed_at that the format holds reaches it: they end before 2106). */
export const NOT_CLOSED_SECONDS = 4_294_967_295;
/** Seconds of a day. */
export const DAY_SECONDS = 86_400;
/** The largest created_at second an unsigned 32-bit number holds (2106-02-07). */
const MAX_SECONDS = 4_294_967_295;

/**
 * The tables of the row columns. PostgreSQL: the chunks are stored as they are (not compressed: they
 * hardly shrink, and are read whole), and a value keeps its JSON type (text, or a number for
 * council_district).
 */
export function createRowColumnTablesSql(dialect: SqlDialect, schema?: string): string[] {
  const chunks = tableName(dialect, ROW_COLUMNS_TABLE, schema);
  const values = tableName(dialect, ROW_COLUMN_VALUES_TABLE, schema);
  if (dialect === 'postgres') {
    return [
      `CREATE TABLE ${chunks} (column_name text NOT NULL, chunk integer NOT NULL, row_count integer NOT NULL, bytes_per_row integer NOT NULL, data bytea NOT NULL, PRIMARY KEY (column_name, chunk))`,
      `ALTER TABLE ${chunks} ALTER COLUMN data SET STORAGE EXTERNAL`,
      `CREATE TABLE ${values} (column_name text NOT NULL, code integer NOT NULL, value jsonb NOT NULL, PRIMARY KEY (column_name, code))`,
    ];
  }
  return [
    `CREATE TABLE ${chunks} (column_name TEXT NOT NULL, chunk INTEGER NOT NULL, row_count INTEGER NOT NULL, bytes_per_row INTEGER NOT NULL, data BLOB NOT NULL, PRIMARY KEY (column_name, chunk)) WITHOUT ROWID`,
    // No declared type for value: it keeps its own (text, or integer for council_district).
    `CREATE TABLE ${values} (column_name TEXT NOT NULL, code INTEGER NOT NULL, value, PRIMARY KEY (column_name, code)) WITHOUT ROWID`,
  ];
}

/**
 * created_at or closed_at (`YYYY-MM-DDTHH:MM:SS`) as wall seconds; null outside what the column holds,
 * or in another form (a fraction): a page's walk finds its rows by the texts of their seconds.
 */
export function createdSecondsOf(createdAt: string): number | null {
  if (createdAt.length !== 19 || createdAt < '1970' || createdAt >= '2106') return null;
  const seconds = wallTimeMs(createdAt) / 1000;
  return Number.isInteger(seconds) && seconds >= 0 && seconds <= MAX_SECONDS ? seconds : null;
}

/** The `YYYY-MM-DDTHH:MM:SS` text of wall seconds (createdSecondsOf's inverse). */
export function wallSecondText(seconds: number): string {
  return new Date(seconds * 1000).toISOString().slice(0, 19);
}

/**
 * A created_at bound (a date, or a normalized date-time: the text compared with created_at as text) as the first wall second it
 * does not precede: created_at >= bound and created_at < bound hold for a row exactly as its seconds are
 * >= or < the result (a fraction rounds up, since `...:05` sorts before `...:05.5`).
 */
export function boundSeconds(bound: string): number {
  if (bound < '1970') return Number.NEGATIVE_INFINITY;
  if (bound >= '2106') return Number.POSITIVE_INFINITY;
  const text = bound.length === 10 ? `${bound}T00:00:00` : bound;
  const whole = wallTimeMs(text.slice(0, 19)) / 1000;
  return text.length > 19 ? whole + 1 : whole;
}
