import { describeServiceRequestApi } from './support/service-requests-api-suite.js';

/** The service-request API's contract on the SQLite snapshot (the same on PostgreSQL: service-requests-api.server.test.ts). */
describeServiceRequestApi('sqlite');
