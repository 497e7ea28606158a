import { describe, it } from 'vitest';
import { expectUnavailable } from './support/database-unavailable.js';
import { TEST_POSTGRES_URL } from './support/fixture-database.js';
import { startTestApp } from './support/requests-app.js';

/** 503 database_unavailable on the test PostgreSQL; the other cases in database-unavailable.test.ts. */
describe('503 database_unavailable when the database cannot be read (never 500)', () => {
  it('PostgreSQL: a schema without the snapshot', async () => {
    const url = new URL(TEST_POSTGRES_URL);
    url.searchParams.set('schema', 'requests_schema_that_does_not_exist');
    const service = await startTestApp(url.toString());
    try {
      await expectUnavailable(service);
    } finally {
      await service.app.close();
    }
  });
});
