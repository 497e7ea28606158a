/** Public entry points of the service-request snapshot (ingestion of NYC 311 exports). */
export { buildSnapshot, prepareSnapshot, writeSnapshot } from './build-snapshot.js';
export type { BuildSnapshotResult, PreparedSnapshot, SnapshotInput, SnapshotOutput } from './build-snapshot.js';
export { ensureSnapshot, DEFAULT_SNAPSHOT_PATH } from './ensure-snapshot.js';
export { CLEANING_RULES, REPEAT_WINDOW_MINUTES, SNAPSHOT_AGENCY, SNAPSHOT_PERIOD } from './cleaning-rules.js';
export { MissingColumnError } from './export-columns.js';
export {
  readComplaintTypeCounts,
  readComplaintTypeCountsFromPostgres,
  readDailyStats,
  readDailyStatsFromPostgres,
  readSnapshotMeta,
  readSnapshotMetaFromPostgres,
} from './snapshot-readers.js';
export type { DailyStatsScope, PostgresQueryable } from './snapshot-readers.js';
export { DEFAULT_POSTGRES_SCHEMA, parsePostgresTarget, isPostgresUrl } from './postgres-snapshot-writer.js';
export { SNAPSHOT_SCHEMA_VERSION, SERVICE_REQUEST_INDEXES, createIndexesSql, createTablesSql } from './snapshot-schema.js';
export { SYNTHETIC_REQUEST_COUNT, SYNTHETIC_SEED, SYNTHETIC_GENERATOR_VERSION } from './synthetic-export.js';
export * from './service-request.js';
