import { describeDistinctShapes } from './support/distinct-shapes-suite.js';

/**
 * All 2,080 distinct filter shapes sent to the SQLite service (the fast tier sends every sixteenth:
 * filter-shapes.test.ts; PostgreSQL: filter-shapes.server.test.ts).
 */
describeDistinctShapes(1);
