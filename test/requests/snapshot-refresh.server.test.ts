import { describeLoadsBetweenPointerReads, describeSnapshotRefresh } from './support/snapshot-refresh-suite.js';

/** A snapshot refresh while the service runs, on the test PostgreSQL (on SQLite: snapshot-refresh.test.ts). */
describeSnapshotRefresh('postgres');
describeLoadsBetweenPointerReads();
