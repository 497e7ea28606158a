import { describe, expect, it } from 'vitest';
import { createServiceApp } from '../../src/platform/app.js';
import type { PlatformApp } from '../../src/platform/platform-app.js';
import { registerHealthRoutes } from '../../src/platform/health.js';
import { readPlatformSettings } from '../../src/platform/settings.js';
import { expectError } from '../support/http.js';

/**
 * Every wait on a dependency has a deadline (docs/reliability.md, "Dependencies with deadlines"):
 * here the readiness check's own, on a check of the test's; Redis and PostgreSQL that stop
 * answering in dependency-deadlines.server.test.ts.
 */
describe('/ready: the readiness check has a deadline', () => {
  /** A service whose readiness check is `check` (counted). */
  async function serviceWithCheck(check: () => Promise<void> | void): Promise<PlatformApp> {
    const app = await createServiceApp(
      {
        name: 'test',
        openapi: { title: 'Test API', version: '1', description: 'A test service', tags: [], usesApiKey: false },
        registerRoutes: (service) => registerHealthRoutes(service, { check, unavailableCode: 'database_unavailable' }),
      },
      readPlatformSettings({}, 0),
      { logger: false },
    );
    await app.ready();
    return app;
  }

  it('a check that never ends: 503 at the deadline; probes meanwhile share the one check', async () => {
    let checks = 0;
    const app = await serviceWithCheck(() => {
      checks++;
      return new Promise<void>(() => undefined);
    });
    try {
      const started = performance.now();
      const answers = await Promise.all(Array.from({ length: 5 }, () => app.inject({ method: 'GET', url: '/ready' })));
      for (const response of answers) expectError(response, 503, 'database_unavailable', []);
      expect(performance.now() - started).toBeLessThan(1_000);
      expect(checks).toBe(1);
    } finally {
      await app.close();
    }
  });

  it('a check that throws at once, then passes: 503, then 200 (a failed check is not kept)', async () => {
    let ready = false;
    const app = await serviceWithCheck(() => {
      if (!ready) throw new Error('not yet');
    });
    try {
      expectError(await app.inject({ method: 'GET', url: '/ready' }), 503, 'database_unavailable', []);
      ready = true;
      expect((await app.inject({ method: 'GET', url: '/ready' })).statusCode).toBe(200);
    } finally {
      await app.close();
    }
  });
});
