import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REDIS_URL, classify, expectRateLimited, ticketsApp } from './rate-limit-checks.js';

/** RATE_LIMIT shared through the test Redis (RATE_LIMIT_REDIS_URL); counted in the process in rate-limit.test.ts. */
describe('RATE_LIMIT shared through Redis (RATE_LIMIT_REDIS_URL)', () => {
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
});
