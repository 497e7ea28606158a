import { describeSnapshotRefresh } from './support/snapshot-refresh-suite.js';

/** A snapshot refresh while the service runs, on SQLite (on PostgreSQL: snapshot-refresh.server.test.ts). */
describeSnapshotRefresh('sqlite');
