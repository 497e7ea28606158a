import { describeCellCounts } from './support/cell-counts-suite.js';

/** GET /v1/stats/cells on the SQLite snapshot (the same on PostgreSQL: cell-counts.server.test.ts). */
describeCellCounts('sqlite');
