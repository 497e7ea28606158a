/**
 * The snapshot's schema, the same on SQLite and PostgreSQL (PostgreSQL: text columns with the "C"
 * collation so that ordering and equality match SQLite's byte order).
 *
 * Tables: service_requests (the contract's fields, and the map cell the database derives from the
 * location), daily_stats, complaint_type_counts,
 * cleaning_rules, snapshot_meta (one row). Indexes serve the list's filters and keyset pages,
 * which order by (created_at, id).
 */
import { quoteIdentifier } from '../shared/postgres-schema.js';
import { BOROUGHS, CHANNELS, STATUSES } from './service-request.js';
import { mapCellSql } from './map-cells.js';

/**
 * Bumped when the tables change; stored in snapshot_meta.schema_version. 4: snapshot_meta records the
 * export's layout (source_format, source_column_count, source_missing_columns; null when read from 3).
 * 5: community_board is a filtered column (its index, value counts and summaries), and the row columns
 * hold closed_at, latitude and longitude (row-columns.ts): a file of 4 is rebuilt (ensure-snapshot.ts);
 * served as it is, its row columns are not loaded (their listing lacks the new arrays) and its
 * combinations walk the rows. 6: summary_buckets hold each bucket's closed requests and 90th
 * percentile (the groups of one column per period answer from them); a file of 5 is rebuilt, served as
 * it is, its groups are scanned. 7: summary_buckets hold years too (a file of 6 is rebuilt; served as it
 * is, its groups per year are scanned). 8: summary_pairs, the numbers per month and year of each value of
 * one filter column within each value of another (a file of 7 is rebuilt; served as it is, the groups
 * by one column with a filter on another are scanned).
 */
export const SNAPSHOT_SCHEMA_VERSION = 8;

/** The first schema version whose service_requests has map_cell and its index (map-cells.ts). */
export const MAP_CELLS_SCHEMA_VERSION = 3;

export type SqlDialect = 'sqlite' | 'postgres';

/**
 * The columns a list page filters on by equality. Each has an index (column, created_at, id), on both
 * backends: a filtered page is a walk of that index from the cursor on, in list order (on SQLite, one
 * walk per accepted value, merged; sqlite-page-query.ts).
 */
export const FILTERED_COLUMNS = ['borough', 'complaint_type', 'status', 'channel', 'council_district', 'incident_zip', 'descriptor', 'community_board'] as const;
export type FilteredColumn = (typeof FILTERED_COLUMNS)[number];

/** The name of the (column, created_at, id) index of a filtered column. */
export function filterIndexName(column: FilteredColumn): string {
  return `service_requests_${column}_created_at_id`;
}

/** The (created_at, id) index: pages without an equality filter walk it. */
export const LIST_ORDER_INDEX = 'service_requests_created_at_id';

/** The map cell index (map-cells.ts): a small box's pages walk it, one cell at a time, merged. */
export const MAP_CELL_INDEX = 'service_requests_map_cell_created_at_id';

/** Indexes of service_requests: name -> columns. The primary key (id) serves `GET /v1/service-requests/{id}`. */
export const SERVICE_REQUEST_INDEXES: Readonly<Record<string, readonly string[]>> = {
  [LIST_ORDER_INDEX]: ['created_at', 'id'],
  ...Object.fromEntries(FILTERED_COLUMNS.map((column) => [filterIndexName(column), [column, 'created_at', 'id']])),
  [MAP_CELL_INDEX]: ['map_cell', 'created_at', 'id', 'latitude', 'longitude'],
};

/**
 * SQLite only: how many rows hold each value of each filtered column (null included), counted at
 * ingest. The store reads it at start to choose which index a page walks (the filter with the fewest
 * rows); it is an estimate of cost only, never an answer.
 */
export const FILTER_VALUE_COUNTS_TABLE = 'filter_value_counts';

/** Column order of snapshot_meta (after the fixed `id` = 1). */
export const SNAPSHOT_META_COLUMNS = [
  'snapshot_id',
  'content_sha256',
  'schema_version',
  'source_kind',
  'source_description',
  'source_dataset',
  'source_file_name',
  'source_sha256',
  'source_seed',
  'generator_version',
  'source_layout',
  'source_format',
  'source_column_count',
  'source_missing_columns',
  'snapshot_date',
  'row_count',
  'raw_rows_read',
  'created_at_min',
  'created_at_max',
  'period_start',
  'period_end',
  'filters_applied',
  'built_at',
] as const;

/** `schema.table` for PostgreSQL, `table` for SQLite. */
export function tableName(dialect: SqlDialect, table: string, schema?: string): string {
  return dialect === 'postgres' && schema !== undefined ? `${quoteIdentifier(schema)}.${table}` : table;
}

/**
 * A CHECK that `column` holds one of `values` (or null), as a chain of equalities: SQLite evaluates
 * `column IN (...)` in a CHECK by building a lookup table for every row inserted: a large part of the
 * cost of storing the rows (bench/README.md, "Figures behind source comments").
 */
const oneOf = (column: string, values: readonly string[]): string => `CHECK (${values.map((v) => `${column} = '${v}'`).join(' OR ')})`;

/** CREATE TABLE statements (without the service_requests secondary indexes). */
export function createTablesSql(dialect: SqlDialect, schema?: string): string[] {
  const pg = dialect === 'postgres';
  const text = pg ? 'text COLLATE "C"' : 'TEXT';
  const int = pg ? 'integer' : 'INTEGER';
  const real = pg ? 'double precision' : 'REAL';
  const t = (name: string): string => tableName(dialect, name, schema);
  const withoutRowid = pg ? '' : ' WITHOUT ROWID';
  return [
    `CREATE TABLE ${t('service_requests')} (
  id ${int} PRIMARY KEY,
  created_at ${text} NOT NULL,
  closed_at ${text},
  status ${text} NOT NULL ${oneOf('status', STATUSES)},
  complaint_type ${text},
  descriptor ${text},
  location_type ${text},
  borough ${text} ${oneOf('borough', BOROUGHS)},
  community_board ${text},
  council_district ${int},
  incident_zip ${text},
  channel ${text} ${oneOf('channel', CHANNELS)},
  latitude ${real},
  longitude ${real},
  days_to_close ${real},
  map_cell ${int} GENERATED ALWAYS AS (${mapCellSql(dialect)}) ${pg ? 'STORED' : 'VIRTUAL'}
)`,
    `CREATE TABLE ${t('daily_stats')} (
  borough ${text} NOT NULL,
  complaint_type ${text} NOT NULL,
  day ${text} NOT NULL,
  opened ${int} NOT NULL,
  closed_within_14_days ${int} NOT NULL,
  share_closed_within_14_days ${real},
  median_days_to_close ${real},
  PRIMARY KEY (borough, complaint_type, day)
)${withoutRowid}`,
    `CREATE TABLE ${t('complaint_type_counts')} (
  complaint_type ${text} PRIMARY KEY,
  request_count ${int} NOT NULL
)${withoutRowid}`,
    `CREATE TABLE ${t('cleaning_rules')} (
  position ${int} PRIMARY KEY,
  id ${text} NOT NULL UNIQUE,
  kind ${text} NOT NULL,
  description ${text} NOT NULL,
  rows_removed ${int} NOT NULL,
  values_changed ${int} NOT NULL,
  applied ${int} NOT NULL
)`,
    `CREATE TABLE ${t('snapshot_meta')} (
  id ${int} PRIMARY KEY CHECK (id = 1),
  snapshot_id ${text} NOT NULL,
  content_sha256 ${text} NOT NULL,
  schema_version ${int} NOT NULL,
  source_kind ${text} NOT NULL,
  source_description ${text} NOT NULL,
  source_dataset ${text} NOT NULL,
  source_file_name ${text} NOT NULL,
  source_sha256 ${text} NOT NULL,
  source_seed ${int},
  generator_version ${text},
  source_layout ${text} NOT NULL,
  source_format ${text},
  source_column_count ${int},
  source_missing_columns ${text},
  snapshot_date ${text} NOT NULL,
  row_count ${int} NOT NULL,
  raw_rows_read ${int} NOT NULL,
  created_at_min ${text},
  created_at_max ${text},
  period_start ${text} NOT NULL,
  period_end ${text} NOT NULL,
  filters_applied ${int} NOT NULL,
  built_at ${text} NOT NULL
)`,
  ];
}

/** CREATE INDEX statements for service_requests (run after the bulk load). */
export function createIndexesSql(dialect: SqlDialect, schema?: string): string[] {
  return Object.entries(SERVICE_REQUEST_INDEXES).map(
    ([name, columns]) => `CREATE INDEX ${name} ON ${tableName(dialect, 'service_requests', schema)} (${columns.join(', ')})`,
  );
}
