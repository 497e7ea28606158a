/**
 * The public module of the NYC 311 snapshot's format: what the service-request API reads at run
 * time. The snapshot is the SQLite file or PostgreSQL schema that ingestion (src/ingest/nyc311/)
 * writes and the API serves; its format lives here, apart from both, so that neither reaches into
 * the other: the row type, the schema (tables, indexes, the filtered columns), the readers of its
 * tables, the daily numbers, the aggregate summaries' definitions, the row columns' format, the PostgreSQL pointer to the
 * served load and the city's calendar. Ingestion imports the files of this folder directly (it also
 * needs the writing side: table SQL, summary builders); the API imports only this module.
 */
export {
  ALL_ROWS_SCOPE,
  isoWeekOf,
  SUMMARY_FACET_COLUMNS,
  SUMMARY_FILTER_COLUMNS,
  SUMMARY_PAIR_UNITS,
  SUMMARY_BUCKET_UNITS,
  WHOLE_SNAPSHOT_PERIOD,
  type SummaryBucketUnit,
  type SummaryFacetColumn,
  type SummaryFilterColumn,
  type SummaryUnit,
} from './aggregate-summaries.js';
export { daysInclusive } from './new-york-time.js';
export { readServedSnapshot, type ServedSnapshot } from './postgres-snapshot-pointer.js';
export { CLOSED_WITHIN_DAYS, dailyStatOf, medianOfMiddles, p90Rank, shareClosedWithin } from './snapshot-aggregates.js';
export {
  readComplaintTypeCounts,
  readComplaintTypeCountsFromPostgres,
  readDailyStats,
  readDailyStatsFromPostgres,
  readSnapshotMeta,
  readSnapshotMetaFromPostgres,
} from './snapshot-readers.js';
export { FILTER_VALUE_COUNTS_TABLE, FILTERED_COLUMNS, filterIndexName, LIST_ORDER_INDEX, MAP_CELL_INDEX, MAP_CELLS_SCHEMA_VERSION, type FilteredColumn } from './snapshot-schema.js';
export { boxCellRange, boxCells, CELL_SIZES, boxCellIndex, coarseCellBounds, coarseCellSql, gridCellsAcross, mapCellSql, MAX_BOX_CELLS, type CellSize } from './map-cells.js';
export {
  boundSeconds,
  CLOSED_SECONDS,
  CODED_COLUMNS,
  CREATED_SECONDS,
  DAY_SECONDS,
  DAYS_TO_CLOSE_HUNDREDTHS,
  LATITUDE_DEGREES,
  LONGITUDE_DEGREES,
  NOT_CLOSED_SECONDS,
  NULL_HUNDREDTHS,
  ROW_COLUMN_CHUNK,
  ROW_COLUMN_VALUES_TABLE,
  ROW_COLUMNS_TABLE,
  type CodedColumn,
  wallSecondText,
} from './row-columns.js';
export { SERVICE_REQUEST_FIELDS } from './service-request.js';
export type { ComplaintTypeCount, DailyStat, ServiceRequest, SnapshotMeta } from './service-request.js';
