import { createRequire } from 'node:module';
import type FastifyRateLimit from '@fastify/rate-limit';
import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import type * as IoRedis from 'ioredis';
import { identifyRequest } from './api-key.js';
import type { LiveApiKeys } from './api-keys/key-file-watch.js';
import { withinDeadline } from './deadline.js';
import { ApiError } from './error-registry.js';
import { LocalWindowCounters, type CountCallback, type CounterStore } from './local-rate-counters.js';
import { platformPlugin } from './platform-app.js';
import { RATE_EXPECTED, parseRate } from './rates.js';
import { SettingsError, quoted, readText, type Env } from './setting-readers.js';

/**
 * Rate limits (`@fastify/rate-limit`), on when `RATE_LIMIT` is set (`600/minute`) or a key of
 * `API_KEYS_FILE` has a limit of its own.
 *
 * - Limited routes: the service's API, every path under `/v1/` (also its 405 answers). `/health`,
 *   `/ready`, the docs pages and `/metrics` are never limited: probes and scrapes must not be refused.
 * - Counted per API key when the request carries a key the service accepts: a key of the file by its
 *   id, with its own limit (`rate_limit` in the file) or else RATE_LIMIT; a key of API_KEY by a
 *   SHA-256 of it, with RATE_LIMIT. Per client address otherwise (no key, a refused key: an
 *   unauthenticated client cannot get fresh counters by sending made-up keys), with RATE_LIMIT; an
 *   IPv6 address counts by its /64, which one client usually holds whole. Keys are never stored.
 *   Without RATE_LIMIT, only the keys with a limit of their own are limited.
 * - The limit is checked before the API key (its hook runs first), so that 401 answers count too.
 * - Every answer of a limited route carries `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset`
 *   (seconds); over the limit: 429 `rate_limited` with the error object and `Retry-After` (seconds).
 * - `RATE_LIMIT_REDIS_URL` shares the counters of several replicas in Redis (one fixed window per
 *   counter, aligned on the epoch, its number in the key; one Lua script). Every Redis command has
 *   REDIS_COMMAND_TIMEOUT_MS and a circuit breaker (RedisBreaker): when Redis is down, hangs or is
 *   slow, each replica counts locally at once (the limit then holds per replica) until Redis answers
 *   again: the service keeps answering, still limits, and never waits on Redis more than once.
 * - Counted locally (no Redis, or the breaker open): LocalWindowCounters, whose counters live as long
 *   as their window and no less (local-rate-counters.ts).
 */
export interface RateLimitSettings {
  max: number;
  windowMs: number;
  /** The text of the setting, e.g. `600/minute`. */
  text: string;
  redisUrl: string | null;
}

const RATE_LIMIT_SHAPE = { expected: RATE_EXPECTED };
const REDIS_URL_SHAPE = { expected: 'a redis:// or rediss:// URL', secret: true };

/**
 * RATE_LIMIT and RATE_LIMIT_REDIS_URL through the shared reader (settings.ts): unset means no limit;
 * set but unusable stops the start. The Redis URL may hold a password: it is never quoted.
 */
export function readRateLimit(env: Env): RateLimitSettings | null {
  const value = readText(env, 'RATE_LIMIT', RATE_LIMIT_SHAPE);
  const redisUrl = readText(env, 'RATE_LIMIT_REDIS_URL', REDIS_URL_SHAPE) ?? null;
  if (value === undefined) {
    if (redisUrl !== null) throw new SettingsError('RATE_LIMIT_REDIS_URL', 'is set but RATE_LIMIT is not (set both, or neither)');
    return null;
  }
  const rate = parseRate(value);
  if (rate === null) throw new SettingsError('RATE_LIMIT', `${quoted(value)} is not ${RATE_LIMIT_SHAPE.expected}`);
  if (redisUrl !== null && !/^rediss?:\/\/\S+$/i.test(redisUrl)) {
    throw new SettingsError('RATE_LIMIT_REDIS_URL', `the value is not ${REDIS_URL_SHAPE.expected}`);
  }
  return { ...rate, redisUrl };
}

/** The client address a counter is named by: an IPv6 address by its /64 (`normalize`: the plugin's normalizeIP). */
type AddressNormalizer = (ip: string, ipv6Subnet?: number) => string;

/** The counter a request counts against: its accepted key's counter (an id, a hash), or the client address. */
export function rateLimitKey(request: FastifyRequest, keys: LiveApiKeys, normalize: AddressNormalizer = (ip) => ip): string {
  const identity = identifyRequest(request, keys);
  if (identity.kind === 'accepted') return identity.counter;
  return `ip:${normalize(request.ip)}`;
}

/** The routes a limit counts: the API under /v1/ (not /health, /ready, /metrics or the docs). */
export function isRateLimitedPath(url: string | undefined): boolean {
  return url?.startsWith('/v1/') === true;
}

export function isRateLimited(request: FastifyRequest): boolean {
  return isRateLimitedPath(request.routeOptions.url);
}

// The plugin and the Redis client are loaded when a limit is set, not at every start (ioredis alone
// is about 0.1 s of loading).
const require = createRequire(import.meta.url);

/** How long a Redis command may take before the request is counted locally and the breaker opens. */
export const REDIS_COMMAND_TIMEOUT_MS = 50;
/** The first wait before an open breaker tries Redis again; doubled after each failed try, up to the next. */
export const REDIS_RETRY_FIRST_MS = 500;
export const REDIS_RETRY_MAX_MS = 5_000;

/**
 * One fixed window per counter, its number in the key (`...:<window>`, windows aligned on the epoch):
 * an increment that Redis runs late (it hung with the command in its input) lands in the window the
 * request was made in, never in a later one. INCR and PEXPIRE in one script: a counter never lives on
 * without its expiry.
 */
const INCREMENT_IN_WINDOW = `
local current = redis.call('INCR', KEYS[1])
if current == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return current
`;

const redisLate = () => new Error(`Redis did not answer within ${REDIS_COMMAND_TIMEOUT_MS} ms`);

interface RedisWithScript extends Redis {
  incrementInWindow(key: string, ttlMs: number): Promise<number>;
}

/**
 * The circuit breaker in front of Redis. Closed: counters are in Redis, each command given
 * REDIS_COMMAND_TIMEOUT_MS. Any failure (a timeout, a refused or lost connection, an error reply)
 * opens it: every request is counted locally at once, without a Redis command, and one warning is
 * logged. While open, a PING tries Redis after a back-off (REDIS_RETRY_FIRST_MS doubling up to
 * REDIS_RETRY_MAX_MS, and at once when the client reconnects); an answer in time closes it, with one
 * warning again. Never one line per request.
 */
export class RedisBreaker {
  private closedState = true;
  private retryMs = REDIS_RETRY_FIRST_MS;
  private retryTimer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    readonly redis: RedisWithScript,
    private readonly log: FastifyBaseLogger,
  ) {
    redis.on('error', (error: Error) => this.open(`unreachable (${error.message})`));
    redis.on('close', () => this.open('connection closed'));
    redis.on('ready', () => {
      if (this.closedState) return;
      this.cancelRetry();
      void this.tryAgain();
    });
  }

  /** Counters go to Redis now. */
  get usable(): boolean {
    return this.closedState && this.redis.status === 'ready';
  }

  open(reason: string): void {
    if (this.stopped) return;
    if (this.closedState) {
      this.closedState = false;
      this.log.warn({ reason }, 'rate limit: Redis does not answer (in time); counting locally until it answers');
    }
    this.scheduleRetry();
  }

  stop(): void {
    this.stopped = true;
    this.cancelRetry();
  }

  private close(): void {
    this.cancelRetry();
    this.retryMs = REDIS_RETRY_FIRST_MS;
    if (this.closedState || this.stopped) return;
    this.closedState = true;
    this.log.warn('rate limit: Redis answers again; counters shared');
  }

  private scheduleRetry(): void {
    if (this.retryTimer !== undefined || this.stopped) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      void this.tryAgain();
    }, this.retryMs);
    this.retryTimer.unref();
    this.retryMs = Math.min(this.retryMs * 2, REDIS_RETRY_MAX_MS);
  }

  private cancelRetry(): void {
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
  }

  private async tryAgain(): Promise<void> {
    if (this.redis.status === 'ready') {
      try {
        await withinDeadline(this.redis.ping(), REDIS_COMMAND_TIMEOUT_MS, redisLate);
        this.close();
        return;
      } catch {
        // Still hung or failing: wait longer.
      }
    }
    this.scheduleRetry();
  }
}

/** Counts in Redis while the breaker is closed, locally (this replica alone) while it is open. */
class RedisOrLocalStore implements CounterStore {
  constructor(
    private readonly breaker: RedisBreaker,
    private readonly prefix: string,
    private readonly local: CounterStore,
  ) {}

  incr(key: string, callback: CountCallback, timeWindow: number, max: number): void {
    if (!this.breaker.usable) {
      this.local.incr(key, callback, timeWindow, max);
      return;
    }
    const now = Date.now();
    const window = Math.floor(now / timeWindow);
    const ttl = Math.max(1, (window + 1) * timeWindow - now);
    withinDeadline(this.breaker.redis.incrementInWindow(`${this.prefix}${key}:${window}`, ttl), REDIS_COMMAND_TIMEOUT_MS, redisLate).then(
      (current) => callback(null, { current, ttl }),
      (error: unknown) => {
        this.breaker.open(error instanceof Error ? error.message : String(error));
        this.local.incr(key, callback, timeWindow, max);
      },
    );
  }

  child(routeOptions: unknown): CounterStore {
    const route = (routeOptions as { routeInfo?: { method?: string; url?: string } }).routeInfo;
    return new RedisOrLocalStore(this.breaker, `${this.prefix}${route?.method ?? ''}${route?.url ?? ''}-`, this.local.child(routeOptions));
  }
}

function connectRedis(url: string): RedisWithScript {
  const { Redis: RedisClient } = require('ioredis') as typeof IoRedis;
  const redis = new RedisClient(url, {
    // Commands fail at once while disconnected (no queue) and are never sent twice; each waits at
    // most REDIS_COMMAND_TIMEOUT_MS (withinDeadline, deadline.ts).
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 1_000,
    retryStrategy: (attempt) => Math.min(attempt * 200, 5_000),
  });
  redis.defineCommand('incrementInWindow', { numberOfKeys: 1, lua: INCREMENT_IN_WINDOW });
  return redis as RedisWithScript;
}

/** How long a start waits for Redis: a replica that starts with Redis up shares its counters at once. */
const REDIS_START_WAIT_MS = 1_000;

function firstContact(redis: Redis): Promise<void> {
  return new Promise((resolveContact) => {
    const done = () => {
      clearTimeout(timer);
      redis.off('ready', done);
      redis.off('error', done);
      resolveContact();
    };
    const timer = setTimeout(done, REDIS_START_WAIT_MS);
    redis.once('ready', done);
    redis.once('error', done);
  });
}

interface RateLimitOptions {
  service: string;
  /** RATE_LIMIT and RATE_LIMIT_REDIS_URL; null or unset: only the keys with a limit of their own are limited. */
  settings: RateLimitSettings | null | undefined;
  keys: LiveApiKeys;
  /** Whether API_KEYS_FILE is set: its keys may have limits of their own, now or after a reload. */
  keysHaveLimits: boolean;
}

/**
 * The limit's onRequest hook on the routes under /v1/ (none when neither RATE_LIMIT nor a key file is
 * set). Registered before the API key plugin: its hook runs first, so that 401 answers count too.
 */
export const rateLimitPlugin = platformPlugin<RateLimitOptions>('rate-limit', async (app, { service, settings, keys, keysHaveLimits }) => {
  if (!settings && !keysHaveLimits) return;
  const fastifyRateLimit = require('@fastify/rate-limit') as typeof FastifyRateLimit;
  // The plugin constructs its store itself (`new store(options)`): a class bound to this service's counters.
  let store: new () => CounterStore = class extends LocalWindowCounters {};
  const redisUrl = settings?.redisUrl ?? null;
  if (redisUrl !== null) {
    const redis = connectRedis(redisUrl);
    const breaker = new RedisBreaker(redis, app.log);
    await firstContact(redis);
    if (redis.status !== 'ready') breaker.open('no answer at start');
    const prefix = `city-services:rate-limit:${service}:`;
    store = class extends RedisOrLocalStore {
      constructor() {
        super(breaker, prefix, new LocalWindowCounters());
      }
    };
    app.addHook('onClose', (_instance, done) => {
      breaker.stop();
      redis.disconnect();
      done();
    });
  }
  /** The key's own limit, when the request carries an accepted key that has one. */
  const ownRate = (request: FastifyRequest) => {
    const identity = identifyRequest(request, keys);
    return identity.kind === 'accepted' ? identity.rate : null;
  };
  await app.register(fastifyRateLimit, {
    global: false,
    max: (request) => ownRate(request)?.max ?? settings?.max ?? Number.MAX_SAFE_INTEGER,
    timeWindow: (request) => ownRate(request)?.windowMs ?? settings?.windowMs ?? 60_000,
    // Without RATE_LIMIT, a request is limited only by its key's own limit.
    allowList: (request) => !settings && ownRate(request) === null,
    enableDraftSpec: true,
    keyGenerator: (request) => rateLimitKey(request, keys, fastifyRateLimit.normalizeIP),
    errorResponseBuilder: () => new ApiError('rate_limited'),
    store: store as never,
  });
  const limit = app.rateLimit();
  app.addHook('onRequest', async (request, reply) => {
    if (isRateLimited(request)) await limit.call(app, request as never, reply as never);
  });
});
