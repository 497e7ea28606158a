import { describeServiceRequestApi } from './support/service-requests-api-suite.js';

/** The service-request API's contract on the test PostgreSQL (the same on SQLite: service-requests-api.test.ts). */
describeServiceRequestApi('postgres');
