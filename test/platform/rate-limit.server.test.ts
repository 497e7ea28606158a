import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, keyFilePath } from '../support/key-files.js';
import { REDIS_URL, classify, expectLimitHeaders, expectRateLimited, ticketsApp } from './rate-limit-checks.js';

/** RATE_LIMIT shared through the test Redis (RATE_LIMIT_REDIS_URL); counted in the process in rate-limit.test.ts. */
describe('RATE_LIMIT shared through Redis (RATE_LIMIT_REDIS_URL)', () => {
  let redis: Redis | undefined;
  beforeAll(() => {
    redis = new Redis(REDIS_URL);
  });
  afterAll(() => redis?.disconnect());

  it('a key of the key file: its own limit, one counter across the replicas, named by its id (never the key)', async () => {
    const path = keyFilePath();
    const { key, id } = await createKey(path, '--name', `Replicated ${randomBytes(4).toString('hex')}`, '--rate', '3/minute');
    const env = { RATE_LIMIT: '100/minute', RATE_LIMIT_REDIS_URL: REDIS_URL, API_KEYS_FILE: path };
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
    }
  });

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
});
