import { describeCellCounts } from './support/cell-counts-suite.js';

/** GET /v1/stats/cells on the test PostgreSQL (the same on SQLite: cell-counts.test.ts). */
describeCellCounts('postgres');
