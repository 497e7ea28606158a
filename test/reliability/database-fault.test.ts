import { closeSync, openSync, readSync, writeSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { fixtureDuringSuite } from '../requests/support/fixture-database.js';
import { testAppDuringSuite } from '../requests/support/requests-app.js';
import { REQUESTS } from './services.js';
import { expectAnswering, expectUnavailable, nextTurn } from './unreadable-database.js';

/**
 * The data service with its database made unreadable while it runs, then given back (the reliability decisions):
 * `/ready` and the list answer 503 `database_unavailable` during the fault, 200 with the same rows
 * after it, without a restart. The service has read (and prepared its statements) before the fault.
 * - SQLite (here): the file's 100-byte header is overwritten in place, then restored. SQLite re-reads the
 *   file when the header's change counter changes; an open handle is not affected by a rename or a
 *   chmod, so those are no fault for a running service.
 * - PostgreSQL: database-fault.server.test.ts.
 */
describe.skipIf(!REQUESTS.available)('requests: database made unreadable while the service runs, then back', () => {
  describe('SQLite', () => {
    const fixture = fixtureDuringSuite();
    const service = testAppDuringSuite(fixture);

    it('file header overwritten in place: 503 database_unavailable; header restored: 200 with the same rows', async () => {
      const before = await expectAnswering(service);
      const fd = openSync(fixture.databaseUrl, 'r+');
      const header = Buffer.alloc(100);
      try {
        expect(readSync(fd, header, 0, 100, 0)).toBe(100);
        writeSync(fd, Buffer.alloc(100), 0, 100, 0);
        // A client's next request reaches the service in a later turn of its event loop.
        await nextTurn();
        await expectUnavailable(service);
      } finally {
        writeSync(fd, header, 0, 100, 0);
        closeSync(fd);
      }
      await nextTurn();
      expect(await expectAnswering(service)).toEqual(before);
    });
  });
});
