import { afterEach, describe, expect, it, vi } from 'vitest';
import { ADDRESSES_PAST_THE_BOUND, LocalWindowCounters } from '../../src/platform/local-rate-counters.js';
import { buildTicketsApp } from '../../src/services/tickets/app.js';
import { readTicketSettings } from '../../src/services/tickets/settings.js';
import { expectError } from '../support/http.js';

/**
 * The rate limit's counters in the process (without Redis, or while its breaker is open): a counter
 * lives as long as its window, never less, so a client spreading over many addresses cannot push its
 * own counter out; the addresses past the bound share one counter.
 */
afterEach(() => {
  vi.useRealTimers();
});

function count(store: LocalWindowCounters, key: string, windowMs = 60_000): { current: number; ttl: number } {
  let result: { current: number; ttl: number } | null = null;
  store.incr(key, (error, counted) => {
    if (error) throw error;
    result = counted;
  }, windowMs);
  return result!;
}

describe('LocalWindowCounters', () => {
  it('one fixed window per counter, aligned on the epoch (as in Redis): every counter of a window goes when it ends, not before', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.UTC(2030, 0, 1, 0, 0, 10));
    const store = new LocalWindowCounters();
    expect(count(store, 'ip:192.0.2.1')).toEqual({ current: 1, ttl: 50_000 });
    expect(count(store, 'ip:192.0.2.1')).toEqual({ current: 2, ttl: 50_000 });
    vi.setSystemTime(Date.UTC(2030, 0, 1, 0, 0, 59, 999));
    expect(count(store, 'ip:192.0.2.1').current).toBe(3);
    vi.setSystemTime(Date.UTC(2030, 0, 1, 0, 1, 0));
    expect(count(store, 'ip:192.0.2.1')).toEqual({ current: 1, ttl: 60_000 });
    expect(store.size).toBe(1);
  });

  it('past the bound, new addresses share one counter; the counters already counting are kept, and so are the keys\'', () => {
    const store = new LocalWindowCounters(100);
    count(store, 'ip:192.0.2.1');
    count(store, 'key:some-key-hash');
    for (let i = 0; i < 1_000; i++) count(store, `ip:198.51.100.${i}`);
    // The first address's counter is still there, and still counts.
    expect(count(store, 'ip:192.0.2.1').current).toBe(2);
    // 99 more addresses had counters of their own; the 901 others, one between them.
    expect(count(store, ADDRESSES_PAST_THE_BOUND).current).toBe(902);
    expect(count(store, 'ip:198.51.100.999').current).toBe(903);
    expect(count(store, 'ip:198.51.100.5').current).toBe(2);
    // Keys are bounded by the key file and API_KEY themselves: never shared.
    expect(count(store, 'key:some-key-hash').current).toBe(2);
    expect(count(store, 'id:key_abc').current).toBe(1);
    expect(store.size).toBe(100 + 1 + 2);
  });
});

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
