/**
 * The public module of the NYC 311 ingestion pipeline: everything the service-request API uses of
 * it, and nothing else. The API reads the snapshot through these (its schema, the types of its rows,
 * the readers of its tables, the daily numbers' function and the days of a period for the statistics
 * counted from rows) and builds the default snapshot at start with ensureSnapshot. The rest
 * of src/ingest/nyc311/ (CSV reading, cleaning, synthetic export, writers, the `npm run snapshot`
 * command) is internal to the pipeline.
 */
export { defaultSnapshotPath, ensureSnapshot, isCurrentSnapshot } from './ensure-snapshot.js';
export { daysInclusive } from './new-york-time.js';
export { createProgressReporter } from './progress-reporter.js';
export { CLOSED_WITHIN_DAYS, dailyStatOf, medianOfMiddles } from './snapshot-aggregates.js';
export {
  readComplaintTypeCounts,
  readComplaintTypeCountsFromPostgres,
  readDailyStats,
  readDailyStatsFromPostgres,
  readSnapshotMeta,
  readSnapshotMetaFromPostgres,
} from './snapshot-readers.js';
export { FILTER_VALUE_COUNTS_TABLE, filterIndexName, LIST_ORDER_INDEX } from './snapshot-schema.js';
export { SERVICE_REQUEST_FIELDS } from './service-request.js';
export type { ComplaintTypeCount, DailyStat, ServiceRequest, SnapshotMeta } from './service-request.js';
