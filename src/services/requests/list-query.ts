import type { ListPageQuery } from './service-request-store.js';
import { SERVICE_REQUEST_COLUMNS } from './service-request-store.js';

/**
 * The SQL of a list page. Only the fixed filters reach the database, always as bound parameters;
 * the statement text depends only on which filters are set (a bit mask), so each combination is
 * prepared once. Keyset: `(created_at, id) > (?, ?)` after the cursor's row, `ORDER BY created_at, id`,
 * served by the (created_at, id) and (filter, created_at, id) indexes.
 */
const CONDITIONS = [
  'borough = ?',
  'complaint_type = ?',
  'status = ?',
  'created_at >= ?',
  'created_at < ?',
  '(created_at, id) > (?, ?)',
] as const;

export const SELECT_COLUMNS = SERVICE_REQUEST_COLUMNS.join(', ');

export interface ListStatement {
  /** Which conditions are present (bit i: CONDITIONS[i]). */
  mask: number;
  /** Parameters in the order of the `?` placeholders (the last is the row count). */
  parameters: (string | number)[];
}

export function listStatementFor(query: ListPageQuery): ListStatement {
  const { filters, after } = query;
  let mask = 0;
  const parameters: (string | number)[] = [];
  const add = (bit: number, ...values: (string | number)[]): void => {
    mask |= 1 << bit;
    parameters.push(...values);
  };
  if (filters.borough !== null) add(0, filters.borough);
  if (filters.complaint_type !== null) add(1, filters.complaint_type);
  if (filters.status !== null) add(2, filters.status);
  if (filters.created_from !== null) add(3, filters.created_from);
  if (filters.created_to !== null) add(4, filters.created_to);
  if (after !== null) add(5, after.created_at, after.id);
  parameters.push(query.fetch);
  return { mask, parameters };
}

/**
 * The statement text for a mask, with `?` placeholders (PostgreSQL; the SQLite store answers list
 * pages from its keyset index). It selects only the id, which the (created_at, id) and
 * (filter, created_at, id) indexes hold: the rows themselves are read by id (and kept, see
 * row-texts.ts), the last row's created_at for the cursor with them.
 */
export function listSqlFor(mask: number, table: string): string {
  const conditions = CONDITIONS.filter((_, bit) => (mask & (1 << bit)) !== 0);
  const where = conditions.length === 0 ? '' : ` WHERE ${conditions.join(' AND ')}`;
  return `SELECT id FROM ${table}${where} ORDER BY created_at, id LIMIT ?`;
}

/** Every row's keyset columns in list order: what the SQLite store's keyset index is made of. */
export function keysetRowsSql(table: string): string {
  return `SELECT id, created_at, borough, complaint_type, status FROM ${table} ORDER BY created_at, id`;
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
