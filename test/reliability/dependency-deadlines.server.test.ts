import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PlatformApp } from '../../src/platform/platform-app.js';
import { buildTicketsApp } from '../../src/services/tickets/app.js';
import { readTicketSettings } from '../../src/services/tickets/settings.js';
import { expectError, LogCapture, type AnyResponse } from '../support/http.js';
import { startPrivateRedis, type PrivateRedis } from '../support/private-redis.js';
import { startStallingProxy, type StallingProxy } from '../support/stalling-proxy.js';
import { createPostgresFixture, TEST_POSTGRES_URL, type FixtureDatabase } from '../requests/support/fixture-database.js';
import { startTestApp, type TestApp } from '../requests/support/requests-app.js';
import { REQUESTS } from './services.js';

/**
 * Every wait on a dependency has a deadline (docs/reliability.md, "Dependencies with deadlines").
 * Redis: a private redis-server, hung with SIGSTOP and resumed with SIGCONT (never the shared one).
 * PostgreSQL: the shared server behind a TCP proxy of the test's own that stops forwarding.
 * The readiness check's own deadline: dependency-deadlines.test.ts.
 */
const KEY = 'deadline-test-key';
const LIMIT = 10;
const OPEN_WARNING = 'rate limit: Redis does not answer (in time); counting locally until it answers';
const CLOSED_WARNING = 'rate limit: Redis answers again; counters shared';

async function timed(app: PlatformApp): Promise<{ response: AnyResponse; ms: number }> {
  const started = performance.now();
  const response = await app.inject({
    method: 'POST',
    url: '/v1/classify',
    headers: { 'content-type': 'application/json', 'x-api-key': KEY },
    payload: '{"subject":"My parcel is lost"}',
  });
  return { response, ms: performance.now() - started };
}

async function sharedCount(redis: PrivateRedis): Promise<number> {
  const keys = await redis.client.keys('city-services:rate-limit:tickets:key:*');
  const values = await Promise.all(keys.map((key) => redis.client.get(key)));
  return values.reduce((sum, value) => sum + Number(value ?? 0), 0);
}

const sleep = (ms: number) => new Promise((wait) => setTimeout(wait, ms));

describe('Redis hung (SIGSTOP) under RATE_LIMIT_REDIS_URL', () => {
  // One scenario per try, on a Redis and a service of its own: on a machine starved of CPU, a Redis
  // descheduled for over 50 ms before the hang really is late and opens the breaker (then the try is
  // run again from the start).
  it('while Redis hangs every /v1 request answers at once (counted locally), one warning per state change, Redis used again after the back-off, the late increment never over-counts', { retry: 2, timeout: 20_000 }, async () => {
    const redis = await startPrivateRedis();
    const logs = new LogCapture();
    const warnings = (msg: string) => logs.lines().filter((line) => line.msg === msg).length;
    // A day's window: the test never straddles a window boundary but at midnight UTC.
    const app = await buildTicketsApp(
      readTicketSettings({ API_KEY: KEY, RATE_LIMIT: `${LIMIT}/day`, RATE_LIMIT_REDIS_URL: redis.url, LOG_LEVEL: 'warn' }),
      { logStream: logs },
    );
    try {
      await app.ready();
      for (let i = 1; i <= 3; i++) expect((await timed(app)).response.headers['ratelimit-remaining']).toBe(String(LIMIT - i));
      expect(await sharedCount(redis)).toBe(3);

      redis.hang();
      const during = [];
      for (let i = 0; i < 6; i++) during.push(await timed(app));
      for (const { response } of during) expect(response.statusCode).toBe(200);
      // Local counting from the first hung request on (this replica's own counter).
      expect(during.map(({ response }) => response.headers['ratelimit-remaining'])).toEqual(['9', '8', '7', '6', '5', '4']);
      const [first = 0, ...rest] = during.map(({ ms }) => ms);
      // The first request waits for the command's deadline (50 ms), the others not at all: before, each
      // waited 250 ms. Generous bounds: the CPU is shared with other work.
      expect(first).toBeLessThan(240);
      expect(Math.max(...rest)).toBeLessThan(150);
      expect(rest.reduce((sum, ms) => sum + ms, 0)).toBeLessThan(250);
      await sleep(1_200); // retries (PINGs) go unanswered meanwhile: still one warning
      expect((await timed(app)).response.statusCode).toBe(200);
      expect(warnings(OPEN_WARNING)).toBe(1);
      expect(warnings(CLOSED_WARNING)).toBe(0);

      redis.resume();
      const resumed = Date.now();
      while (warnings(CLOSED_WARNING) === 0 && Date.now() - resumed < 8_000) await sleep(50);
      expect(warnings(CLOSED_WARNING)).toBe(1);
      // Redis ran the one increment sent when it hung, late, in the window it was made in: 3 + 1. The
      // requests counted locally are not added to the shared counter.
      expect(await sharedCount(redis)).toBe(4);
      const after = await timed(app);
      expect(after.response.statusCode).toBe(200);
      expect(after.response.headers['ratelimit-remaining']).toBe(String(LIMIT - 5));
      expect(await sharedCount(redis)).toBe(5);
      // The key is within its limit: its last requests are answered, the one past it refused.
      for (let i = 6; i <= LIMIT; i++) expect((await timed(app)).response.statusCode).toBe(200);
      expect((await timed(app)).response.statusCode).toBe(429);
      expect(warnings(OPEN_WARNING)).toBe(1);
      expect(warnings(CLOSED_WARNING)).toBe(1);
    } finally {
      await app.close();
      await redis.stop();
    }
  });
});

describe.skipIf(!REQUESTS.available)('PostgreSQL that stops answering (a proxy that stops forwarding)', () => {
  let fixture: FixtureDatabase;
  let proxy: StallingProxy;
  let service: TestApp;
  const ready = async () => {
    const started = performance.now();
    const response = await service.app.inject({ method: 'GET', url: '/ready' });
    return { response, ms: performance.now() - started };
  };
  beforeAll(async () => {
    fixture = await createPostgresFixture();
    const target = new URL(TEST_POSTGRES_URL);
    proxy = await startStallingProxy(target.hostname, Number(target.port || 5432));
    const viaProxy = new URL(fixture.databaseUrl);
    viaProxy.host = `127.0.0.1:${proxy.port}`;
    service = await startTestApp(viaProxy.toString());
  });
  afterAll(async () => {
    proxy.resume();
    await service.app.close();
    await proxy.close();
    await fixture.drop();
  });

  it('/ready: 200 while the database answers, 503 database_unavailable within 1 s while it hangs, 200 again after', async () => {
    expect((await ready()).response.statusCode).toBe(200);
    expect((await service.get('/v1/service-requests?limit=2')).statusCode).toBe(200);
    proxy.stall();
    for (let probe = 0; probe < 3; probe++) {
      const { response, ms } = await ready();
      expectError(response, 503, 'database_unavailable', [], 'The database cannot be read');
      expect(ms).toBeLessThan(1_000);
    }
    // Liveness never waits on the database.
    expect((await service.app.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200);
    proxy.resume();
    const started = Date.now();
    let status = 0;
    while (status !== 200 && Date.now() - started < 5_000) {
      status = (await ready()).response.statusCode;
      if (status !== 200) await sleep(100);
    }
    expect(status).toBe(200);
  });

  it('a query waiting on the hung database ends 503 database_unavailable at its deadline, never hangs', async () => {
    proxy.stall();
    try {
      const started = Date.now();
      const response = await service.get('/v1/service-requests/count?borough=queens');
      expectError(response, 503, 'database_unavailable', []);
      // The pool's connection deadline (3 s) or the query's (6 s), whichever the request met.
      expect(Date.now() - started).toBeLessThan(8_000);
    } finally {
      proxy.resume();
    }
  }, 15_000);
});
