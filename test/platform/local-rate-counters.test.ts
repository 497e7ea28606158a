import { afterEach, describe, expect, it, vi } from 'vitest';
import { ADDRESSES_PAST_THE_BOUND, LocalWindowCounters } from '../../src/platform/local-rate-counters.js';

/**
 * The rate limit's counters in the process (without Redis, or while its breaker is open): a counter
 * lives as long as its window, never less, so a client spreading over many addresses cannot push its
 * own counter out; the addresses past the bound share one counter. A client spread over 6,000
 * addresses against a service: local-rate-counters.machine.test.ts.
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
