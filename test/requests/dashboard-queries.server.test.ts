import { describeDashboardQueries } from './support/dashboard-queries-suite.js';

/** The dashboard API's queries on the test PostgreSQL (the same on SQLite: dashboard-queries.test.ts). */
describeDashboardQueries('postgres');
