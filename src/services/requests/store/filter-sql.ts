import { EQUALITY_FILTERS, SEARCHED_COLUMNS, negationOf, type EqualityFilter, type FilterValue, type ListFilters, type NearFilter } from '../list-filters.js';
import { boxAround, EARTH_RADIUS_M } from '../great-circle.js';
import { GREAT_CIRCLE_FUNCTION } from './sqlite-functions.js';
import type { CursorPosition } from '../cursor.js';
import { SERVICE_REQUEST_COLUMNS } from './service-request-store.js';
import { boxCells, MAX_BOX_CELLS } from '../../../snapshot/index.js';
import { FILTER_VALUES_MAXIMUM } from '../schemas.js';

/**
 * The SQL of the filters, for both stores (the SQLite store builds its pages on it, sqlite-queries.ts).
 * Only the fixed filters reach the database, always as bound parameters. The statement text does not
 * depend on how many values a client sends, only on a fixed set of counts (`walkSlots`: 1, 2, 4, 8...):
 * a list of values is one array parameter on PostgreSQL, a list of placeholders padded with nulls on
 * SQLite (oneOfList), and where a statement reads one walk per value (a page's merge of index walks, a
 * small box's cells) the walks are padded the same way. So the texts are few (which filters are set,
 * and how), each is prepared once, and the statement caches (sqlite-statements.ts,
 * postgres-statements.ts) stay small whatever clients send. Keyset: `(created_at, id) > (?, ?)` after the cursor's row,
 * `ORDER BY created_at, id`, served by the (created_at, id) and (filter, created_at, id) indexes.
 */
export const SELECT_COLUMNS = SERVICE_REQUEST_COLUMNS.join(', ');

/** The column of a row's map cell. */
export const MAP_CELL = 'map_cell';

export type QueryDialect = 'sqlite' | 'postgres';

/** A bound parameter: a value, a null (a walk that matches nothing), or a list (PostgreSQL array). */
export type SqlParameter = string | number | null | FilterValue[];

export interface WhereClause {
  /** ` WHERE ...` with `?` placeholders, or '' when nothing filters. */
  sql: string;
  parameters: SqlParameter[];
}

/** The conditions of a WHERE clause, to be AND-ed, with their parameters in order. */
export interface Conditions {
  conditions: string[];
  parameters: SqlParameter[];
}

/**
 * `column` is one of a list of values, and its parameters: `column = ANY(?)` with the list as one array
 * on PostgreSQL; on SQLite `column IN (?, ...)` with `walkSlots` placeholders, the ones past the values
 * given a null (which matches no row), so that the text is one of a few whatever the count. (A list
 * bound as one JSON text, `IN (SELECT value FROM json_each(?))`, makes one text, but each walk of a
 * page then builds its own table of the list: slower, bench/README.md, "HEAD answers, filter shapes
 * and statement caches".)
 */
export function oneOfList(column: string, values: readonly (string | number)[], dialect: QueryDialect, maximum: number): { sql: string; parameters: SqlParameter[] } {
  if (dialect === 'postgres') return { sql: `${column} = ANY(?)`, parameters: [[...values]] };
  const slots = walkSlots(values.length, maximum);
  const parameters: SqlParameter[] = [...values];
  while (parameters.length < slots) parameters.push(null);
  return { sql: `${column} IN (${parameters.map(() => '?').join(', ')})`, parameters };
}

/**
 * The conditions, and created_at one of `texts` when given (null: any), in one parameter whatever
 * their number (SQLite: a JSON list; PostgreSQL: an array): a page's walk then seeks those seconds in
 * its index, where created_at follows the filter's column (engine/page-seconds.ts).
 */
export function withCreatedAtIn(rest: Conditions, texts: readonly string[] | null, dialect: QueryDialect): Conditions {
  if (texts === null) return rest;
  const condition = dialect === 'postgres' ? 'created_at = ANY(?)' : 'created_at IN (SELECT value FROM json_each(?))';
  return { conditions: [...rest.conditions, condition], parameters: [...rest.parameters, dialect === 'postgres' ? [...texts] : JSON.stringify(texts)] };
}

/**
 * The walks a statement reads for `count` values, one walk per value (a page's merge of index walks,
 * a small box's cells): the next power of two (1, 2, 4, 8...), at most `maximum` (the most values
 * there can be), never fewer than `count`. The walks past the values are given a null, which matches
 * no row (`column = NULL`), so the statement is one of a few per filter, whatever the count.
 */
export function walkSlots(count: number, maximum: number): number {
  let slots = 1;
  while (slots < count) slots *= 2;
  return Math.max(count, Math.min(slots, maximum));
}

/**
 * One equality filter: `col = ?`, several values (oneOfList, at most `maximum` of them), `col IS NULL`,
 * or these OR-ed with `col IS NULL` for `none`.
 */
function equalityCondition(column: string, accepted: readonly FilterValue[], parameters: Conditions['parameters'], dialect: QueryDialect, maximum: number): string {
  const values = accepted.filter((value): value is string | number => value !== null);
  const withNull = values.length < accepted.length;
  let condition: string;
  if (values.length === 0) return `${column} IS NULL`;
  if (values.length === 1) {
    condition = `${column} = ?`;
    parameters.push(...values);
  } else {
    const list = oneOfList(column, values, dialect, maximum);
    condition = list.sql;
    parameters.push(...list.parameters);
  }
  return withNull ? `(${condition} OR ${column} IS NULL)` : condition;
}

/**
 * The negation of one equality filter: the column is none of the values. Without `none` among them a
 * row without a value matches (`col IS NULL OR ...`); with it, it does not. On SQLite the list is
 * padded with its first value, not a null (`col NOT IN (..., NULL)` is never true).
 */
function negatedCondition(column: string, refused: readonly FilterValue[], parameters: Conditions['parameters'], dialect: QueryDialect, maximum: number): string {
  const values = refused.filter((value): value is string | number => value !== null);
  const refusesNull = values.length < refused.length;
  if (values.length === 0) return `${column} IS NOT NULL`;
  let condition: string;
  if (dialect === 'postgres') {
    condition = `${column} <> ALL(?)`;
    parameters.push([...values]);
  } else {
    const slots = walkSlots(values.length, maximum);
    const padded: SqlParameter[] = [...values];
    while (padded.length < slots) padded.push(values[0] as string | number);
    condition = `${column} NOT IN (${padded.map(() => '?').join(', ')})`;
    parameters.push(...padded);
  }
  return refusesNull ? condition : `(${column} IS NULL OR ${condition})`;
}

/** A SQL double constant: PostgreSQL reads a decimal literal as numeric, which must not round differently. */
const double = (value: number): string => `${value}::float8`;
const RADIANS = Math.PI / 180;

/**
 * `near`: a box around the centre (boxAround: a prefilter the location's comparisons test cheaply),
 * then the exact distance, the arithmetic of great-circle.ts: the registered function on SQLite, the
 * same operations in the same order on PostgreSQL.
 */
function nearCondition(near: NearFilter, parameters: Conditions['parameters'], dialect: QueryDialect): string {
  const box = boxAround(near.latitude, near.longitude, near.radiusM);
  parameters.push(box.minLatitude, box.maxLatitude, box.minLongitude, box.maxLongitude);
  let distance: string;
  if (dialect === 'sqlite') {
    distance = `${GREAT_CIRCLE_FUNCTION}(?, ?, latitude, longitude)`;
    parameters.push(near.latitude, near.longitude);
  } else {
    const half = (difference: string): string => `sin(((${difference}) * ${double(RADIANS)}) / ${double(2)})`;
    const halfLatitude = half('latitude - ?::float8');
    const halfLongitude = half('longitude - ?::float8');
    const a = `${halfLatitude} * ${halfLatitude} + cos(?::float8 * ${double(RADIANS)}) * cos(latitude * ${double(RADIANS)}) * ${halfLongitude} * ${halfLongitude}`;
    distance = `${double(2)} * ${double(EARTH_RADIUS_M)} * asin(least(${double(1)}, sqrt(${a})))`;
    parameters.push(near.latitude, near.latitude, near.latitude, near.longitude, near.longitude);
  }
  parameters.push(near.radiusM);
  return `latitude BETWEEN ? AND ? AND longitude BETWEEN ? AND ? AND ${distance} <= ?`;
}

/** `q` resolved: any searched column holds one of its matching values (none: no row). */
function searchCondition(search: NonNullable<ListFilters['search']>, parameters: Conditions['parameters'], dialect: QueryDialect): string {
  const one = (column: (typeof SEARCHED_COLUMNS)[number]): string => {
    const values = search[column];
    if (dialect === 'postgres') {
      parameters.push([...values]);
      return `${column} = ANY(?)`;
    }
    // One JSON text, whatever the count of values: one statement text.
    parameters.push(JSON.stringify(values));
    return `${column} IN (SELECT value FROM json_each(?))`;
  };
  return `(${SEARCHED_COLUMNS.map(one).join(' OR ')})`;
}

/**
 * What the table holds besides the contract's fields: whether its rows have their map cell
 * (map-cells.ts; snapshots of an earlier schema do not), by which a small box selects its cells.
 */
export interface TableLayout {
  name: string;
  mapCells: boolean;
}

/** The cells a box of the filters is read by, when the table has them and the box is small; else null. */
export function boxCellsOf(filters: ListFilters, table: TableLayout): number[] | null {
  return filters.bbox === null || !table.mapCells ? null : boxCells(filters.bbox);
}

/**
 * The conditions of the filters (and of the keyset position after which a page starts); `without`
 * leaves one equality filter, or the map cells, out (the page queries state them per value).
 */
export function conditionsOf(
  filters: ListFilters,
  after: CursorPosition | null,
  dialect: QueryDialect,
  without: EqualityFilter | typeof MAP_CELL | null = null,
  cells: readonly number[] | null = null,
): Conditions {
  const conditions: string[] = [];
  const parameters: Conditions['parameters'] = [];
  for (const name of EQUALITY_FILTERS) {
    const accepted = filters[name];
    if (accepted !== null && name !== without) conditions.push(equalityCondition(name, accepted, parameters, dialect, FILTER_VALUES_MAXIMUM));
  }
  // Of a lower bound and a cursor, one implies the other: only the later one is stated, so that the
  // index walk starts from it (given both, SQLite may start from the earlier one and skip rows one by one).
  const cursorIsLater = after !== null && filters.created_from !== null && after.created_at >= filters.created_from;
  if (filters.created_from !== null && !cursorIsLater) {
    conditions.push('created_at >= ?');
    parameters.push(filters.created_from);
  }
  if (filters.created_to !== null) {
    conditions.push('created_at < ?');
    parameters.push(filters.created_to);
  }
  const box = filters.bbox;
  if (box !== null) {
    conditions.push('longitude BETWEEN ? AND ? AND latitude BETWEEN ? AND ?');
    parameters.push(box.minLongitude, box.maxLongitude, box.minLatitude, box.maxLatitude);
    if (cells !== null && without !== MAP_CELL) conditions.push(equalityCondition(MAP_CELL, cells, parameters, dialect, MAX_BOX_CELLS));
  }
  for (const name of EQUALITY_FILTERS) {
    const refused = filters[negationOf(name)];
    if (refused !== null) conditions.push(negatedCondition(name, refused, parameters, dialect, FILTER_VALUES_MAXIMUM));
  }
  if (filters.closed !== null) conditions.push(filters.closed ? 'closed_at IS NOT NULL' : 'closed_at IS NULL');
  const compare = (condition: string, value: string | number | null): void => {
    if (value === null) return;
    conditions.push(condition);
    parameters.push(value);
  };
  compare('closed_at >= ?', filters.closed_from);
  compare('closed_at < ?', filters.closed_to);
  compare('days_to_close >= ?', filters.days_to_close_min);
  compare('days_to_close <= ?', filters.days_to_close_max);
  if (filters.near !== null) conditions.push(nearCondition(filters.near, parameters, dialect));
  if (filters.q !== null) {
    if (filters.search === null) throw new Error('q is resolved (resolveSearch) before its SQL is made');
    conditions.push(searchCondition(filters.search, parameters, dialect));
  }
  if (after !== null && (filters.created_from === null || cursorIsLater)) {
    conditions.push('(created_at, id) > (?, ?)');
    parameters.push(after.created_at, after.id);
  }
  return { conditions, parameters };
}

/** The WHERE clause of the filters (and of the keyset position after which a page starts). */
export function whereClauseOf(filters: ListFilters, table: TableLayout, after: CursorPosition | null = null, dialect: QueryDialect = 'postgres'): WhereClause {
  const { conditions, parameters } = conditionsOf(filters, after, dialect, null, boxCellsOf(filters, table));
  return { sql: conditions.length === 0 ? '' : ` WHERE ${conditions.join(' AND ')}`, parameters };
}
