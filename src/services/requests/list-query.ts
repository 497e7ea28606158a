import { EQUALITY_FILTERS, type FilterValue, type ListFilters } from './list-filters.js';
import type { CursorPosition } from './cursor.js';
import type { ListPageQuery } from './service-request-store.js';
import { SERVICE_REQUEST_COLUMNS } from './service-request-store.js';
import type { CodedColumn } from './keyset-index.js';

/**
 * The SQL of the PostgreSQL store (the SQLite store answers from its keyset index). Only the fixed
 * filters reach the database, always as bound parameters; the statement text depends only on which
 * filters are set and how (one value, several, with or without `none`), so each shape is prepared
 * once. Keyset: `(created_at, id) > (?, ?)` after the cursor's row, `ORDER BY created_at, id`, served
 * by the (created_at, id) and (filter, created_at, id) indexes.
 */
export const SELECT_COLUMNS = SERVICE_REQUEST_COLUMNS.join(', ');

export interface WhereClause {
  /** ` WHERE ...` with `?` placeholders, or '' when nothing filters. */
  sql: string;
  parameters: (string | number | FilterValue[])[];
}

/** One equality filter: `col = ?`, `col = ANY(?)`, `col IS NULL`, or these OR-ed with `col IS NULL` for `none`. */
function equalityCondition(column: string, accepted: readonly FilterValue[], parameters: WhereClause['parameters']): string {
  const values = accepted.filter((value): value is string | number => value !== null);
  const withNull = values.length < accepted.length;
  let condition: string;
  if (values.length === 0) return `${column} IS NULL`;
  if (values.length === 1) {
    condition = `${column} = ?`;
    parameters.push(...values);
  } else {
    condition = `${column} = ANY(?)`;
    parameters.push(values);
  }
  return withNull ? `(${condition} OR ${column} IS NULL)` : condition;
}

/** The WHERE clause of the filters (and of the keyset position after which a page starts). */
export function whereClauseOf(filters: ListFilters, after: CursorPosition | null = null): WhereClause {
  const conditions: string[] = [];
  const parameters: WhereClause['parameters'] = [];
  for (const name of EQUALITY_FILTERS) {
    const accepted = filters[name];
    if (accepted !== null) conditions.push(equalityCondition(name, accepted, parameters));
  }
  if (filters.created_from !== null) {
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
  }
  if (after !== null) {
    conditions.push('(created_at, id) > (?, ?)');
    parameters.push(after.created_at, after.id);
  }
  return { sql: conditions.length === 0 ? '' : ` WHERE ${conditions.join(' AND ')}`, parameters };
}

/**
 * The ids of a list page. It selects only the id, which the (created_at, id) and (filter, created_at, id)
 * indexes hold: the rows themselves are read by id (and kept, see row-texts.ts).
 */
export function listIdsQuery(query: ListPageQuery, table: string): WhereClause {
  const where = whereClauseOf(query.filters, query.after);
  return { sql: `SELECT id FROM ${table}${where.sql} ORDER BY created_at, id LIMIT ?`, parameters: [...where.parameters, query.fetch] };
}

export function countQuery(filters: ListFilters, table: string): WhereClause {
  const where = whereClauseOf(filters);
  return { sql: `SELECT count(*)::integer AS count FROM ${table}${where.sql}`, parameters: where.parameters };
}

/** Each value of the column with its count, largest first, then by value, null last (C collation). */
export function facetQuery(column: CodedColumn, filters: ListFilters, table: string): WhereClause {
  const where = whereClauseOf(filters);
  return {
    sql: `SELECT ${column} AS value, count(*)::integer AS count FROM ${table}${where.sql} GROUP BY ${column} ORDER BY count DESC, ${column} ASC NULLS LAST`,
    parameters: where.parameters,
  };
}

/** Per local date of created_at: the requests opened and the days_to_close of those that have one. */
export function openingsByDayQuery(filters: ListFilters, table: string): WhereClause {
  const where = whereClauseOf(filters);
  return {
    sql:
      `SELECT substr(created_at, 1, 10) AS day, count(*)::integer AS opened, ` +
      `coalesce(array_agg(days_to_close) FILTER (WHERE days_to_close IS NOT NULL), '{}') AS close_days ` +
      `FROM ${table}${where.sql} GROUP BY 1`,
    parameters: where.parameters,
  };
}

/**
 * The keyset, filter, location and statistics columns of the rows in list order, at most `?` of them
 * (after the position `(?, ?)` when `after`): the SQLite store reads its keyset index in such batches,
 * as arrays in this order of the columns (sqlite-store.ts, `KeysetValues`).
 */
export function keysetRowsSql(table: string, after: boolean): string {
  return (
    'SELECT id, created_at, borough, complaint_type, status, channel, council_district, incident_zip, descriptor, ' +
    `location_type, latitude, longitude, days_to_close FROM ${table}` +
    (after ? ' WHERE (created_at, id) > (?, ?)' : '') +
    ' ORDER BY created_at, id LIMIT ?'
  );
}

/** SQLite: the rows whose ids are in the JSON array given as the one parameter. */
export function sqliteRowsByIdSql(table: string): string {
  return `SELECT ${SELECT_COLUMNS} FROM ${table} WHERE id IN (SELECT value FROM json_each(?))`;
}

/** PostgreSQL: the rows whose ids are in the integer array given as the one parameter. */
export function postgresRowsByIdSql(table: string): string {
  return `SELECT ${SELECT_COLUMNS} FROM ${table} WHERE id = ANY($1::integer[])`;
}

/** `?` placeholders numbered `$1, $2, ...` for PostgreSQL (the statements hold no `?` in text). */
export function numberPlaceholders(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}
