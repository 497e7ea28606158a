import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PlatformApp } from '../../src/platform/platform-app.js';
import { readRateLimit } from '../../src/platform/rate-limit.js';
import { buildTicketsApp } from '../../src/services/tickets/app.js';
import { readTicketSettings } from '../../src/services/tickets/settings.js';
import { expectError, type AnyResponse } from '../support/http.js';
import { createKey, keyFileDirectory } from '../support/key-files.js';
import { appDuringSuite } from '../support/during-suite.js';

/** The Redis the tests use for real (CI runs one too). */
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
/** A port where nothing listens: Redis unreachable. */
const CLOSED_REDIS_URL = 'redis://127.0.0.1:9';

async function ticketsApp(env: Record<string, string>): Promise<PlatformApp> {
  const app = await buildTicketsApp(readTicketSettings(env), { logger: false });
  await app.ready();
  return app;
}

function classify(app: PlatformApp, key?: string, address = '127.0.0.1') {
  return app.inject({
    method: 'POST',
    url: '/v1/classify',
    remoteAddress: address,
    headers: { 'content-type': 'application/json', ...(key === undefined ? {} : { 'x-api-key': key }) },
    payload: '{"subject":"My parcel is lost"}',
  });
}

function expectLimitHeaders(response: AnyResponse, limit: number, remaining: number): void {
  expect(response.headers['ratelimit-limit']).toBe(String(limit));
  expect(response.headers['ratelimit-remaining']).toBe(String(remaining));
  expect(Number(response.headers['ratelimit-reset'])).toBeGreaterThan(0);
  expect(Number(response.headers['ratelimit-reset'])).toBeLessThanOrEqual(60);
}

function expectRateLimited(response: AnyResponse): void {
  expectError(response, 429, 'rate_limited', [], 'Too many requests; retry after the number of seconds in Retry-After');
  expect(Number(response.headers['retry-after'])).toBeGreaterThan(0);
  expect(Number(response.headers['retry-after'])).toBeLessThanOrEqual(60);
  expectLimitHeaders(response, Number(response.headers['ratelimit-limit']), 0);
}

describe('RATE_LIMIT', () => {
  it('reads N/second, N/minute, N/hour, N/day; anything else refuses the start naming the variable', () => {
    expect(readRateLimit({})).toBeNull();
    expect(readRateLimit({ RATE_LIMIT: '600/minute' })).toEqual({ max: 600, windowMs: 60_000, text: '600/minute', redisUrl: null });
    expect(readRateLimit({ RATE_LIMIT: ' 5 / second ', RATE_LIMIT_REDIS_URL: REDIS_URL })).toMatchObject({ max: 5, windowMs: 1_000, redisUrl: REDIS_URL });
    for (const bad of ['600', '600/minutes', '0/minute', '-1/minute', 'ten/minute', '600/fortnight', '1.5/second']) {
      expect(() => readTicketSettings({ RATE_LIMIT: bad }), bad).toThrow(/^Invalid setting RATE_LIMIT: /);
    }
    expect(() => readTicketSettings({ RATE_LIMIT_REDIS_URL: REDIS_URL })).toThrow(/^Invalid setting RATE_LIMIT_REDIS_URL: .*RATE_LIMIT is not/);
    expect(() => readTicketSettings({ RATE_LIMIT: '1/second', RATE_LIMIT_REDIS_URL: 'http://127.0.0.1:6379' })).toThrow(/^Invalid setting RATE_LIMIT_REDIS_URL: /);
  });

  it('off by default: no RateLimit headers, no 429', async () => {
    const app = await ticketsApp({});
    for (let i = 0; i < 5; i++) {
      const response = await classify(app);
      expect(response.statusCode).toBe(200);
      expect(response.headers['ratelimit-limit']).toBeUndefined();
    }
    await app.close();
  });

  describe('counted in the process (no Redis)', () => {
    const app = appDuringSuite(() => ticketsApp({ RATE_LIMIT: '2/minute', API_KEY: 'rate-key-a-0123456,rate-key-b-0123456' }));

    it('per API key: RateLimit headers on every answer, then 429 rate_limited with Retry-After; another key has its own counter', async () => {
      const first = await classify(app, 'rate-key-a-0123456');
      expect(first.statusCode).toBe(200);
      expectLimitHeaders(first, 2, 1);
      expectLimitHeaders(await classify(app, 'rate-key-a-0123456'), 2, 0);
      const over = await classify(app, 'rate-key-a-0123456');
      expectRateLimited(over);
      expect(over.headers['x-request-id']).toBe(JSON.parse(over.body).error.request_id);
      // Another key, from the same address: its own counter.
      expect((await classify(app, 'rate-key-b-0123456')).statusCode).toBe(200);
    });

    it('per client address without a valid key (401 answers count too); health, readiness and docs are never limited', async () => {
      const address = '192.0.2.10';
      const noKey = await classify(app, undefined, address);
      expectError(noKey, 401, 'unauthorized', []);
      expectLimitHeaders(noKey, 2, 1);
      expectLimitHeaders(await classify(app, 'made-up-key', address), 2, 0);
      expectRateLimited(await classify(app, 'another-made-up-key', address));
      // Another address starts afresh.
      expectError(await classify(app, undefined, '192.0.2.11'), 401, 'unauthorized', []);
      for (let i = 0; i < 4; i++) {
        for (const url of ['/health', '/ready', '/openapi.json']) {
          const response = await app.inject({ method: 'GET', url, remoteAddress: address });
          expect(response.statusCode, url).toBe(200);
          expect(response.headers['ratelimit-limit'], url).toBeUndefined();
        }
      }
      // A limited route's other answers carry the headers too (GET /v1/categories, a 405).
      expectLimitHeaders(await app.inject({ method: 'GET', url: '/v1/categories', remoteAddress: '192.0.2.12' }), 2, 1);
    });
  });

  describe('shared through Redis (RATE_LIMIT_REDIS_URL)', () => {
    let redis: Redis | undefined;
    beforeAll(() => {
      redis = new Redis(REDIS_URL);
    });
    afterAll(() => redis?.disconnect());

    it('two replicas share one counter; Redis holds a hash of the key, never the key', async () => {
      const key = `replica-key-${randomBytes(8).toString('hex')}`;
      const env = { RATE_LIMIT: '3/minute', RATE_LIMIT_REDIS_URL: REDIS_URL, API_KEY: key };
      const [one, two] = [await ticketsApp(env), await ticketsApp(env)];
      try {
        // Each replica waited for Redis at start: the first request is counted in Redis.
        expect((await classify(one, key)).headers['ratelimit-remaining']).toBe('2');
        const stored = await redis!.keys('city-services:rate-limit:tickets:*');
        expect(stored.length).toBeGreaterThan(0);
        expect(stored.join(' ')).not.toContain(key);
        const remainingAfterFirst = Number((await classify(two, key)).headers['ratelimit-remaining']);
        expect(remainingAfterFirst).toBe(1);
        expect((await classify(one, key)).headers['ratelimit-remaining']).toBe('0');
        expectRateLimited(await classify(two, key));
        expectRateLimited(await classify(one, key));
      } finally {
        await one.close();
        await two.close();
      }
    });

    it('a key of the key file: its own limit, one counter across the replicas, named by its id (never the key)', async () => {
      const directory = keyFileDirectory();
      const { key, id } = await createKey(directory.path, '--name', `Replicated ${randomBytes(4).toString('hex')}`, '--rate', '3/minute');
      const env = { RATE_LIMIT: '100/minute', RATE_LIMIT_REDIS_URL: REDIS_URL, API_KEYS_FILE: directory.path };
      const [one, two] = [await ticketsApp(env), await ticketsApp(env)];
      try {
        const first = await classify(one, key);
        expectLimitHeaders(first, 3, 2);
        expectLimitHeaders(await classify(two, key), 3, 1);
        expectLimitHeaders(await classify(one, key), 3, 0);
        expectRateLimited(await classify(two, key));
        const stored = await redis!.keys(`city-services:rate-limit:tickets:id:${id}:*`);
        expect(stored).toHaveLength(1);
        expect((await redis!.keys('city-services:rate-limit:tickets:*')).join(' ')).not.toContain(key);
      } finally {
        await one.close();
        await two.close();
        directory.remove();
      }
    });

    it('Redis unreachable: the service keeps answering and counts locally (fail to local, not open)', async () => {
      const started = Date.now();
      const app = await ticketsApp({ RATE_LIMIT: '2/minute', RATE_LIMIT_REDIS_URL: CLOSED_REDIS_URL, API_KEY: 'unreachable-key-0123' });
      try {
        const first = await classify(app, 'unreachable-key-0123');
        expect(first.statusCode).toBe(200);
        expectLimitHeaders(first, 2, 1);
        expect((await classify(app, 'unreachable-key-0123')).statusCode).toBe(200);
        expectRateLimited(await classify(app, 'unreachable-key-0123'));
        expect((await app.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200);
        // Generous: the answers do not wait for Redis.
        expect(Date.now() - started).toBeLessThan(5_000);
      } finally {
        await app.close();
      }
    });
  });
});
