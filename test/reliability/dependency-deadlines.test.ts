import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PlatformApp } from '../../src/platform/app.js';
import { buildTicketsApp } from '../../src/services/tickets/app.js';
import { readTicketSettings } from '../../src/services/tickets/settings.js';
import { LogCapture, type AnyResponse } from '../support/http.js';
import { startPrivateRedis, type PrivateRedis } from '../support/private-redis.js';

/**
 * Every wait on a dependency has a deadline (docs/reliability.md, "Dependencies with deadlines").
 * Redis: a private redis-server, hung with SIGSTOP and resumed with SIGCONT (never the shared one).
 */
const KEY = 'deadline-test-key';
const LIMIT = 10;
const OPEN_WARNING = 'rate limit: Redis did not answer in time; counting locally until it answers';
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
  let redis: PrivateRedis;
  let app: PlatformApp;
  const logs = new LogCapture();
  const warnings = (msg: string) => logs.lines().filter((line) => line.msg === msg).length;
  beforeAll(async () => {
    redis = await startPrivateRedis();
    // A day's window: the test never straddles a window boundary but at midnight UTC.
    app = await buildTicketsApp(
      readTicketSettings({ API_KEY: KEY, RATE_LIMIT: `${LIMIT}/day`, RATE_LIMIT_REDIS_URL: redis.url, LOG_LEVEL: 'warn' }),
      { logStream: logs },
    );
    await app.ready();
  });
  afterAll(async () => {
    await app.close();
    await redis.stop();
  });

  it('while Redis hangs, every /v1 request answers at once (counted locally) and one warning is logged', async () => {
    for (let i = 1; i <= 3; i++) expect((await timed(app)).response.headers['ratelimit-remaining']).toBe(String(LIMIT - i));
    expect(await sharedCount(redis)).toBe(3);
    redis.hang();
    const during = [];
    for (let i = 0; i < 6; i++) during.push(await timed(app));
    for (const { response } of during) expect(response.statusCode).toBe(200);
    // Local counting from the first hung request on (this replica's own counter).
    expect(during.map(({ response }) => response.headers['ratelimit-remaining'])).toEqual(['9', '8', '7', '6', '5', '4']);
    const [first, ...rest] = during.map(({ ms }) => ms);
    // The first request waits for the command timeout (50 ms), the others not at all (generous bounds: shared CPU).
    expect(first).toBeLessThan(250);
    for (const ms of rest) expect(ms).toBeLessThan(50);
    await sleep(1_200); // retries (PINGs) go unanswered meanwhile: still one warning
    expect((await timed(app)).response.statusCode).toBe(200);
    expect(warnings(OPEN_WARNING)).toBe(1);
    expect(warnings(CLOSED_WARNING)).toBe(0);
  });

  it('after the hang: Redis is used again after the back-off, one warning, and the late increment never over-counts', async () => {
    redis.resume();
    const started = Date.now();
    while (warnings(CLOSED_WARNING) === 0 && Date.now() - started < 8_000) await sleep(50);
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
  });
});
