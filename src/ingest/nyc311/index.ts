/**
 * The public module of the NYC 311 ingestion pipeline: what the service-request API uses of it, and
 * nothing else. The API builds the default snapshot at start with ensureSnapshot (and finds its path
 * with defaultSnapshotPath); it reads the snapshot through src/snapshot/index.ts, the snapshot's
 * format, not through here. The rest of src/ingest/nyc311/ (CSV reading, cleaning, synthetic export,
 * writers, the `npm run snapshot` command) is internal to the pipeline.
 */
export { defaultSnapshotPath, ensureSnapshot, isCurrentSnapshot } from './ensure-snapshot.js';
export { createProgressReporter } from './progress-reporter.js';
