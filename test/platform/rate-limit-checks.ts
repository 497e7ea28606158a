import { expect } from 'vitest';
import type { PlatformApp } from '../../src/platform/platform-app.js';
import { buildTicketsApp } from '../../src/services/tickets/app.js';
import { readTicketSettings } from '../../src/services/tickets/settings.js';
import { expectError, type AnyResponse } from '../support/http.js';

/** The Redis the tests use for real (CI runs one too). */
export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
/** A port where nothing listens: Redis unreachable. */
export const CLOSED_REDIS_URL = 'redis://127.0.0.1:9';

export async function ticketsApp(env: Record<string, string>): Promise<PlatformApp> {
  const app = await buildTicketsApp(readTicketSettings(env), { logger: false });
  await app.ready();
  return app;
}

export function classify(app: PlatformApp, key?: string, address = '127.0.0.1') {
  return app.inject({
    method: 'POST',
    url: '/v1/classify',
    remoteAddress: address,
    headers: { 'content-type': 'application/json', ...(key === undefined ? {} : { 'x-api-key': key }) },
    payload: '{"subject":"My parcel is lost"}',
  });
}

export function expectLimitHeaders(response: AnyResponse, limit: number, remaining: number): void {
  expect(response.headers['ratelimit-limit']).toBe(String(limit));
  expect(response.headers['ratelimit-remaining']).toBe(String(remaining));
  expect(Number(response.headers['ratelimit-reset'])).toBeGreaterThan(0);
  expect(Number(response.headers['ratelimit-reset'])).toBeLessThanOrEqual(60);
}

export function expectRateLimited(response: AnyResponse): void {
  expectError(response, 429, 'rate_limited', [], 'Too many requests; retry after the number of seconds in Retry-After');
  expect(Number(response.headers['retry-after'])).toBeGreaterThan(0);
  expect(Number(response.headers['retry-after'])).toBeLessThanOrEqual(60);
  expectLimitHeaders(response, Number(response.headers['ratelimit-limit']), 0);
}
