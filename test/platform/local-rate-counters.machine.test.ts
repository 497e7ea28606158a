import { describe, expect, it } from 'vitest';
import { buildTicketsApp } from '../../src/services/tickets/app.js';
import { readTicketSettings } from '../../src/services/tickets/settings.js';
import { expectError } from '../support/http.js';

/**
 * The rate limit's counters in the process (local-rate-counters.test.ts) against a client that
 * spreads its requests over more addresses than the counters a former LRU kept: 6,000 requests
 * through the service, whose first address stays refused.
 */
describe('a client that spreads over many addresses keeps its own counter', () => {
  it('2/minute from one address, then 6,000 requests from as many other addresses (more than the 5,000 counters of the former LRU): the first address is still refused', async () => {
    const app = await buildTicketsApp(readTicketSettings({ RATE_LIMIT: '2/minute' }), { logger: false });
    try {
      const get = (address: string) => app.inject({ method: 'GET', url: '/v1/categories', remoteAddress: address });
      // A run that could cross into the next minute waits for it (one window for the whole test).
      const intoMinute = Date.now() % 60_000;
      if (intoMinute > 50_000) await new Promise((resolve) => setTimeout(resolve, 60_000 - intoMinute + 100));
      expect((await get('203.0.113.7')).statusCode).toBe(200);
      expect((await get('203.0.113.7')).statusCode).toBe(200);
      expectError(await get('203.0.113.7'), 429, 'rate_limited', []);
      for (let i = 0; i < 6_000; i++) await get(`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`);
      expectError(await get('203.0.113.7'), 429, 'rate_limited', []);
      // IPv6: one client's /64 is one counter.
      expect((await get('2001:db8:1:2::1')).statusCode).toBe(200);
      expect((await get('2001:db8:1:2::ffff')).statusCode).toBe(200);
      expectError(await get('2001:db8:1:2:abcd::1'), 429, 'rate_limited', []);
      expect((await get('2001:db8:1:3::1')).statusCode).toBe(200);
    } finally {
      await app.close();
    }
  }, 60_000);
});
