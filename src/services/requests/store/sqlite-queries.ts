import { boxCellRange, coarseCellSql, filterIndexName, LIST_ORDER_INDEX, MAP_CELL_INDEX, mapCellSql, MAX_BOX_CELLS } from '../../../snapshot/index.js';
import { EQUALITY_FILTERS, hasRowFilters, pageChecksRows, type EqualityFilter, type FilterValue, type ListFilters } from '../list-filters.js';
import { MAP_CELL, SELECT_COLUMNS, boxCellsOf, conditionsOf, walkSlots, withCreatedAtIn, type TableLayout, type WhereClause } from './filter-sql.js';
import { FILTER_VALUES_MAXIMUM } from '../schemas.js';
import type { FacetColumn, ListPageQuery } from './service-request-store.js';

/**
 * The SQL of the SQLite store. A list page walks one index in list order from the cursor on, and
 * stops after `fetch` matching rows, whatever the number of rows: the (filter, created_at, id) index
 * of the equality filter with the fewest rows (each of its accepted values is one walk, and the walks
 * are merged by SQLite's ordered UNION ALL: a k-way merge), or the (created_at, id) index when no
 * equality filter is set. The walks come in a fixed set of counts (filter-sql.ts, `walkSlots`): the
 * text of a page does not depend on how many values a client sends. The other filters are checked on the rows walked. INDEXED BY states the
 * index: the choice is made here from the row counts per value, which the planner does not have.
 */

/** Rows per value of each equality filter (the snapshot's filter_value_counts): the cost of a walk. */
export type FilterValueCounts = ReadonlyMap<EqualityFilter, ReadonlyMap<FilterValue, number>>;

/** The equality filter whose accepted values hold the fewest rows; null when none is set. */
export function leadFilter(filters: ListFilters, counts: FilterValueCounts): EqualityFilter | null {
  let lead: EqualityFilter | null = null;
  let leadRows = Number.POSITIVE_INFINITY;
  for (const name of EQUALITY_FILTERS) {
    const accepted = filters[name];
    if (accepted === null) continue;
    const perValue = counts.get(name);
    // A file without counts: every filter costs the same, the first set one leads.
    const rows = perValue === undefined ? Number.MAX_SAFE_INTEGER : accepted.reduce<number>((sum, value) => sum + (perValue.get(value) ?? 0), 0);
    if (lead === null || rows < leadRows) {
      lead = name;
      leadRows = rows;
    }
  }
  return lead;
}

/**
 * The statement of a list page, and whether its walk checks rows against conditions its index does
 * not seek (an equality filter besides the lead one, the map box). Such a walk reads every row of the
 * lead index until `fetch` rows match: as many as the index holds when few or none match (a small box
 * at sea, two filters whose values never meet), so it is not bounded by the page's size.
 */
export interface PageIdsQuery extends WhereClause {
  checksRows: boolean;
}

/**
 * The ids of a list page (first column; the second, created_at, orders the merge of several walks);
 * with `createdAtIn`, of the rows created at one of those texts only (the seconds of the page's rows,
 * as the row columns find them).
 */
export function pageIdsQuery(query: ListPageQuery, counts: FilterValueCounts, layout: TableLayout, createdAtIn: readonly string[] | null = null): PageIdsQuery {
  const table = layout.name;
  const cells = boxCellsOf(query.filters, layout);
  if (cells !== null) {
    // A small box: one walk of the map cell index per cell it touches, merged; the box itself is tested
    // on the index's location, the other filters on the rows.
    const rest = withCreatedAtIn(conditionsOf(query.filters, query.after, 'sqlite', MAP_CELL), createdAtIn, 'sqlite');
    const parameters: WhereClause['parameters'] = [];
    const walk = `SELECT id, created_at FROM ${table} INDEXED BY ${MAP_CELL_INDEX} WHERE ${[`${MAP_CELL} = ?`, ...rest.conditions].join(' AND ')}`;
    const slots = walkSlots(cells.length, MAX_BOX_CELLS);
    for (let slot = 0; slot < slots; slot += 1) parameters.push(cells[slot] ?? null, ...rest.parameters);
    return { sql: `${Array<string>(slots).fill(walk).join(' UNION ALL ')} ORDER BY created_at, id LIMIT ?`, parameters: [...parameters, query.fetch], checksRows: true };
  }
  const lead = leadFilter(query.filters, counts);
  const rest = withCreatedAtIn(conditionsOf(query.filters, query.after, 'sqlite', lead), createdAtIn, 'sqlite');
  const order = ' ORDER BY created_at, id LIMIT ?';
  const checksRows = pageChecksRows(query.filters);
  if (lead === null) {
    const where = rest.conditions.length === 0 ? '' : ` WHERE ${rest.conditions.join(' AND ')}`;
    return { sql: `SELECT id, created_at FROM ${table} INDEXED BY ${LIST_ORDER_INDEX}${where}${order}`, parameters: [...rest.parameters, query.fetch], checksRows };
  }
  const accepted = query.filters[lead] ?? [];
  const values = accepted.filter((value) => value !== null);
  const walkOn = (own: string) => `SELECT id, created_at FROM ${table} INDEXED BY ${filterIndexName(lead)} WHERE ${[own, ...rest.conditions].join(' AND ')}`;
  const walks: string[] = [];
  const parameters: WhereClause['parameters'] = [];
  const slots = values.length === 0 ? 0 : walkSlots(values.length, FILTER_VALUES_MAXIMUM);
  for (let slot = 0; slot < slots; slot += 1) {
    walks.push(walkOn(`${lead} = ?`));
    parameters.push(values[slot] ?? null, ...rest.parameters);
  }
  if (values.length < accepted.length) {
    walks.push(walkOn(`${lead} IS NULL`));
    parameters.push(...rest.parameters);
  }
  return { sql: `${walks.join(' UNION ALL ')}${order}`, parameters: [...parameters, query.fetch], checksRows };
}

/**
 * Every row created at one of `createdAtIn`, as [created_at, id] in list order: a walk of the
 * (created_at, id) index alone, one seek per text, no row read (page-seconds.ts, `pageIdsAmong`).
 */
export function rowsAtSecondsSql(createdAtIn: readonly string[], table: string): WhereClause {
  const { conditions, parameters } = withCreatedAtIn({ conditions: [], parameters: [] }, createdAtIn, 'sqlite');
  return { sql: `SELECT created_at, id FROM ${table} INDEXED BY ${LIST_ORDER_INDEX} WHERE ${conditions.join(' AND ')} ORDER BY created_at, id`, parameters };
}

/**
 * The table and WHERE clause of a walk of the matching rows. Several equality filters: the walk reads
 * the index of the one whose values hold the fewest rows (the planner, without per-value counts, may
 * take the largest: at 50x a three-filter count walked 5.3 million rows of `status = closed` in 4.0 s
 * instead of 1.3 million in 1.5 s). Named only when its values are all non-null (an `IS NULL` OR-ed
 * in is left to the planner, which may not use the index for it).
 */
function walkOf(filters: ListFilters, counts: FilterValueCounts, layout: TableLayout): WhereClause {
  const cells = boxCellsOf(filters, layout);
  const { conditions, parameters } = conditionsOf(filters, null, 'sqlite', null, cells);
  const lead = leadFilter(filters, counts);
  let named = '';
  // A small box reads the rows of its cells only.
  if (cells !== null) named = ` INDEXED BY ${MAP_CELL_INDEX}`;
  else if (lead !== null && filters[lead]?.every((value) => value !== null) === true) named = ` INDEXED BY ${filterIndexName(lead)}`;
  return { sql: `${layout.name}${named}${conditions.length === 0 ? '' : ` WHERE ${conditions.join(' AND ')}`}`, parameters };
}

/** One number: the matching rows. */
export function countSql(filters: ListFilters, counts: FilterValueCounts, table: TableLayout): WhereClause {
  const walk = walkOf(filters, counts, table);
  return { sql: `SELECT count(*) FROM ${walk.sql}`, parameters: walk.parameters };
}

/** Rows [value, count], largest first, then by value (binary order, as compareFilterValues), null last. */
export function facetSql(column: FacetColumn, filters: ListFilters, counts: FilterValueCounts, table: TableLayout): WhereClause {
  const walk = walkOf(filters, counts, table);
  return {
    sql: `SELECT ${column}, count(*) FROM ${walk.sql} GROUP BY ${column} ORDER BY 2 DESC, 1 ASC NULLS LAST`,
    parameters: walk.parameters,
  };
}

/** Rows [local date of created_at, days_to_close] of the matching requests, grouped per bucket by a row walk worker. */
export function bucketRowsSql(filters: ListFilters, counts: FilterValueCounts, table: TableLayout): WhereClause {
  const walk = walkOf(filters, counts, table);
  return { sql: `SELECT substr(created_at, 1, 10), days_to_close FROM ${walk.sql}`, parameters: walk.parameters };
}

/**
 * Rows [cell, count] of the matching requests per cell of `multiple` grid cells across (map-cells.ts,
 * coarseCellSql), by cell number; the filters hold a box. Without any other filter than the dates the walk reads the
 * map cell index alone, from the box's first cell to its last (the index holds created_at and the
 * location, so the box and the dates are tested on it): no row of the table is read.
 */
export function cellCountsSql(filters: ListFilters, multiple: number, counts: FilterValueCounts, layout: TableLayout): WhereClause {
  const cell = coarseCellSql(layout.mapCells ? MAP_CELL : mapCellSql('sqlite'), 'CAST(? AS INTEGER)');
  const box = filters.bbox;
  if (box === null) throw new Error('the counts per cell need a box');
  if (layout.mapCells && EQUALITY_FILTERS.every((name) => filters[name] === null) && !hasRowFilters(filters)) {
    const range = boxCellRange(box, multiple);
    const rest = conditionsOf(filters, null, 'sqlite', MAP_CELL);
    const where = [`${MAP_CELL} BETWEEN ? AND ?`, ...rest.conditions].join(' AND ');
    return {
      sql: `SELECT ${cell}, count(*) FROM ${layout.name} INDEXED BY ${MAP_CELL_INDEX} WHERE ${where} GROUP BY 1 ORDER BY 1`,
      parameters: [multiple, multiple, range.lowCell, range.highCell, ...rest.parameters],
    };
  }
  const walk = walkOf(filters, counts, layout);
  return { sql: `SELECT ${cell}, count(*) FROM ${walk.sql} GROUP BY 1 ORDER BY 1`, parameters: [multiple, multiple, ...walk.parameters] };
}

/** SQLite: the rows whose ids are in the JSON array given as the one parameter. */
export function sqliteRowsByIdSql(table: string): string {
  return `SELECT ${SELECT_COLUMNS} FROM ${table} WHERE id IN (SELECT value FROM json_each(?))`;
}
