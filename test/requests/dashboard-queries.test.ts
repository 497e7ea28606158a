import { describeDashboardQueries } from './support/dashboard-queries-suite.js';

/** The dashboard API's queries on the SQLite snapshot (the same on PostgreSQL: dashboard-queries.server.test.ts). */
describeDashboardQueries('sqlite');
