import { EQUALITY_FILTERS, type EqualityFilter, type FilterValue, type ListFilters } from '../list-filters.js';
import type { CursorPosition } from '../cursor.js';
import { SERVICE_REQUEST_COLUMNS } from './service-request-store.js';
import { boxCells } from '../../../snapshot/index.js';

/**
 * The SQL of the filters, for both stores (the SQLite store builds its pages on it, sqlite-queries.ts).
 * Only the fixed filters reach the database, always as bound parameters; the statement text depends
 * only on which filters are set and how (one value, several, with or without `none`), so each shape is
 * prepared once. Keyset: `(created_at, id) > (?, ?)` after the cursor's row, `ORDER BY created_at, id`,
 * served by the (created_at, id) and (filter, created_at, id) indexes.
 */
export const SELECT_COLUMNS = SERVICE_REQUEST_COLUMNS.join(', ');

/** The column of a row's map cell. */
export const MAP_CELL = 'map_cell';

export type QueryDialect = 'sqlite' | 'postgres';

export interface WhereClause {
  /** ` WHERE ...` with `?` placeholders, or '' when nothing filters. */
  sql: string;
  parameters: (string | number | FilterValue[])[];
}

/** The conditions of a WHERE clause, to be AND-ed, with their parameters in order. */
export interface Conditions {
  conditions: string[];
  parameters: (string | number | FilterValue[])[];
}

/**
 * One equality filter: `col = ?`, several values (`col = ANY(?)` with an array on PostgreSQL,
 * `col IN (?, ...)` on SQLite), `col IS NULL`, or these OR-ed with `col IS NULL` for `none`.
 */
function equalityCondition(column: string, accepted: readonly FilterValue[], parameters: Conditions['parameters'], dialect: QueryDialect): string {
  const values = accepted.filter((value): value is string | number => value !== null);
  const withNull = values.length < accepted.length;
  let condition: string;
  if (values.length === 0) return `${column} IS NULL`;
  if (values.length === 1) {
    condition = `${column} = ?`;
    parameters.push(...values);
  } else if (dialect === 'postgres') {
    condition = `${column} = ANY(?)`;
    parameters.push(values);
  } else {
    condition = `${column} IN (${values.map(() => '?').join(', ')})`;
    parameters.push(...values);
  }
  return withNull ? `(${condition} OR ${column} IS NULL)` : condition;
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
    if (accepted !== null && name !== without) conditions.push(equalityCondition(name, accepted, parameters, dialect));
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
    if (cells !== null && without !== MAP_CELL) conditions.push(equalityCondition(MAP_CELL, cells, parameters, dialect));
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
