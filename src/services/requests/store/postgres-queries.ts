import type { ListFilters } from '../list-filters.js';
import { CLOSED_WITHIN_DAYS, coarseCellSql, mapCellSql, MAX_BOX_CELLS, type SummaryUnit } from '../../../snapshot/index.js';
import type { FacetColumn, ListPageQuery } from './service-request-store.js';
import { MAP_CELL, SELECT_COLUMNS, boxCellsOf, conditionsOf, walkSlots, whereClauseOf, withCreatedAtIn, type TableLayout, type WhereClause } from './filter-sql.js';

/**
 * The PostgreSQL store's statements (postgres-store.ts), on the filters' SQL (filter-sql.ts): a list
 * page's ids, the count, a facet, the numbers per bucket of the statistics (where the summaries do not hold
 * the answer) and the rows by id.
 */

/**
 * The ids of a list page. It selects only the id, which the (created_at, id) and (filter, created_at, id)
 * indexes hold: the rows themselves are read by id (and kept, see serialized-rows.ts). With
 * `createdAtIn`, of the rows created at one of those texts only (the seconds of the page's rows, as the
 * row columns find them: engine/page-seconds.ts).
 */
export function listIdsQuery(query: ListPageQuery, table: TableLayout, createdAtIn: readonly string[] | null = null): WhereClause {
  const cells = boxCellsOf(query.filters, table);
  if (cells !== null) return boxCellsPageQuery(query, table, cells, createdAtIn);
  const { conditions, parameters } = withCreatedAtIn(conditionsOf(query.filters, query.after, 'postgres'), createdAtIn, 'postgres');
  const where = conditions.length === 0 ? '' : ` WHERE ${conditions.join(' AND ')}`;
  return { sql: `SELECT id FROM ${table.name}${where} ORDER BY created_at, id LIMIT ?`, parameters: [...parameters, query.fetch] };
}

/**
 * A small box's page: the first rows of each cell it touches in list order (one walk of the map cell
 * index each, the exact box tested on the index's location), merged (Merge Append). The walks come in
 * a fixed set of counts (`walkSlots`; a walk past the cells is given a null cell, which matches nothing).
 */
function boxCellsPageQuery(query: ListPageQuery, table: TableLayout, cells: readonly number[], createdAtIn: readonly string[] | null): WhereClause {
  const rest = withCreatedAtIn(conditionsOf(query.filters, query.after, 'postgres', MAP_CELL), createdAtIn, 'postgres');
  const parameters: WhereClause['parameters'] = [];
  const walk = `(SELECT id, created_at FROM ${table.name} WHERE ${[`${MAP_CELL} = ?`, ...rest.conditions].join(' AND ')} ORDER BY created_at, id LIMIT ?)`;
  const slots = walkSlots(cells.length, MAX_BOX_CELLS);
  for (let slot = 0; slot < slots; slot += 1) parameters.push(cells[slot] ?? null, ...rest.parameters, query.fetch);
  return { sql: `SELECT id FROM (${Array<string>(slots).fill(walk).join(' UNION ALL ')}) AS cells ORDER BY created_at, id LIMIT ?`, parameters: [...parameters, query.fetch] };
}

export function countQuery(filters: ListFilters, table: TableLayout): WhereClause {
  const where = whereClauseOf(filters, table);
  return { sql: `SELECT count(*)::integer AS count FROM ${table.name}${where.sql}`, parameters: where.parameters };
}

/** Each value of the column with its count, largest first, then by value, null last (C collation). */
export function facetQuery(column: FacetColumn, filters: ListFilters, table: TableLayout): WhereClause {
  const where = whereClauseOf(filters, table);
  return {
    sql: `SELECT ${column} AS value, count(*)::integer AS count FROM ${table.name}${where.sql} GROUP BY ${column} ORDER BY count DESC, ${column} ASC NULLS LAST`,
    parameters: where.parameters,
  };
}

/** The bucket of a row's created_at (local time text): its day, its ISO week (`2025-W01`, as isoWeekOf) or its month. */
const BUCKET_OF_CREATED_AT: Readonly<Record<SummaryUnit, string>> = {
  day: 'substr(created_at, 1, 10)',
  week: `to_char(substr(created_at, 1, 10)::date, 'IYYY-"W"IW')`,
  month: 'substr(created_at, 1, 7)',
};

/**
 * Per bucket of the unit: the requests opened, those closed within 14 days, and the two middle
 * days_to_close (percentile_disc(0.5) ascending is the lower middle, descending the upper one; nulls
 * are not counted), all computed by the database: no value per row is sent.
 */
export function bucketsQuery(filters: ListFilters, unit: SummaryUnit, table: TableLayout): WhereClause {
  const where = whereClauseOf(filters, table);
  return {
    sql:
      `SELECT ${BUCKET_OF_CREATED_AT[unit]} AS bucket, count(*)::integer AS opened, ` +
      `(count(*) FILTER (WHERE days_to_close <= ${CLOSED_WITHIN_DAYS}))::integer AS "closedWithin", ` +
      `percentile_disc(0.5) WITHIN GROUP (ORDER BY days_to_close) AS "lowMiddle", ` +
      `percentile_disc(0.5) WITHIN GROUP (ORDER BY days_to_close DESC) AS "highMiddle" ` +
      `FROM ${table.name}${where.sql} GROUP BY 1`,
    parameters: where.parameters,
  };
}

/**
 * The matching requests per cell of `multiple` grid cells across (map-cells.ts, coarseCellSql), by
 * cell number, counted by the database: no row is sent.
 */
export function cellCountsQuery(filters: ListFilters, multiple: number, table: TableLayout): WhereClause {
  const where = whereClauseOf(filters, table);
  const cell = coarseCellSql(table.mapCells ? MAP_CELL : mapCellSql('postgres'), '?::integer');
  return {
    sql: `SELECT ${cell} AS cell, count(*)::integer AS count FROM ${table.name}${where.sql} GROUP BY 1 ORDER BY 1`,
    parameters: [multiple, multiple, ...where.parameters],
  };
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
