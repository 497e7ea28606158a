import { describeDistinctShapes } from './support/distinct-shapes-suite.js';

/**
 * All 2,080 distinct filter shapes sent to the SQLite service (the SQL texts and the statement
 * caches' bounds: filter-shapes.test.ts; PostgreSQL: filter-shapes.server.test.ts).
 */
describeDistinctShapes();
