/**
 * The rate limit's counters in the process (rate-limit.ts): used without Redis, and while the Redis
 * breaker is open. One fixed window per counter, aligned on the epoch as the Redis counters are, so
 * that a replica counting alone for a while counts in the same windows.
 *
 * A counter is dropped only with its window, never to make room: a client cannot get its own counter
 * forgotten by spreading its requests over many addresses (as it could with an LRU of counters, where
 * each new address pushes out the oldest). Memory stays bounded all the same: the counters of keys
 * are bounded by the keys themselves (the key file, API_KEY), and the counters of client addresses by
 * ADDRESS_COUNTERS_MAX per window (about 100 bytes each: some 10 MB). Past it, an address that has no
 * counter yet in the window shares one counter with every other such address: the new addresses of a
 * spreading client are limited together, the counters already counting are kept.
 */
export type Counted = { current: number; ttl: number };
export type CountCallback = (error: Error | null, result: Counted | null) => void;

/** The store interface of @fastify/rate-limit. */
export interface CounterStore {
  incr(key: string, callback: CountCallback, timeWindow: number, max: number): void;
  child(routeOptions: unknown): CounterStore;
}

export const ADDRESS_COUNTERS_MAX = 100_000;

/** The counter that every address past ADDRESS_COUNTERS_MAX shares in a window. */
export const ADDRESSES_PAST_THE_BOUND = 'ip:past-the-bound';

/** Counter names of client addresses start with this (rate-limit.ts, rateLimitKey). */
const ADDRESS_COUNTER = 'ip:';

interface Window {
  /** The window's number: floor(now / length). */
  number: number;
  counts: Map<string, number>;
  addresses: number;
}

export class LocalWindowCounters implements CounterStore {
  /** The current window of each window length in use (a second, a minute, an hour, a day): at most four. */
  private readonly windows = new Map<number, Window>();

  constructor(private readonly addressesMax = ADDRESS_COUNTERS_MAX) {}

  incr(key: string, callback: CountCallback, timeWindow: number): void {
    const now = Date.now();
    const number = Math.floor(now / timeWindow);
    let window = this.windows.get(timeWindow);
    if (window?.number !== number) {
      // The window ended: every counter of it goes, and only then.
      window = { number, counts: new Map(), addresses: 0 };
      this.windows.set(timeWindow, window);
    }
    let name = key;
    if (key.startsWith(ADDRESS_COUNTER) && !window.counts.has(key)) {
      if (window.addresses >= this.addressesMax) name = ADDRESSES_PAST_THE_BOUND;
      else window.addresses += 1;
    }
    const current = (window.counts.get(name) ?? 0) + 1;
    window.counts.set(name, current);
    callback(null, { current, ttl: Math.max(1, (number + 1) * timeWindow - now) });
  }

  /** Counters currently kept (for the tests). */
  get size(): number {
    let size = 0;
    for (const window of this.windows.values()) size += window.counts.size;
    return size;
  }

  child(): CounterStore {
    return this;
  }
}
