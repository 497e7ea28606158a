import { hash } from 'node:crypto';
import { createRequire } from 'node:module';
import type FastifyRateLimit from '@fastify/rate-limit';
import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import type * as IoRedis from 'ioredis';
import type { ApiKeyChecker } from './api-key.js';
import { withinDeadline } from './deadline.js';
import { ApiError } from './error-registry.js';
import { platformPlugin } from './platform-app.js';
import { SettingsError, quoted, readText, type Env } from './setting-readers.js';

/**
 * Rate limits (`@fastify/rate-limit`), off unless `RATE_LIMIT` is set (`600/minute`).
 *
 * - Limited routes: the service's API, every path under `/v1/` (also its 405 answers). `/health`,
 *   `/ready`, the docs pages and `/metrics` are never limited: probes and scrapes must not be refused.
 * - Counted per API key when the request carries a key the service accepts, per client address
 *   otherwise (no key, a wrong key: an unauthenticated client cannot get fresh counters by sending
 *   made-up keys). Keys are never stored: the counter's name holds a SHA-256 of the key.
 * - The limit is checked before the API key (its hook runs first), so that 401 answers count too.
 * - Every answer of a limited route carries `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset`
 *   (seconds); over the limit: 429 `rate_limited` with the error object and `Retry-After` (seconds).
 * - `RATE_LIMIT_REDIS_URL` shares the counters of several replicas in Redis (one fixed window per
 *   counter, aligned on the epoch, its number in the key; one Lua script). Every Redis command has
 *   REDIS_COMMAND_TIMEOUT_MS and a circuit breaker (RedisBreaker): when Redis is down, hangs or is
 *   slow, each replica counts locally at once (the limit then holds per replica) until Redis answers
 *   again: the service keeps answering, still limits, and never waits on Redis more than once.
 */
export interface RateLimitSettings {
  max: number;
  windowMs: number;
  /** The text of the setting, e.g. `600/minute`. */
  text: string;
  redisUrl: string | null;
}

const WINDOWS: Readonly<Record<string, number>> = { second: 1_000, minute: 60_000, hour: 3_600_000, day: 86_400_000 };

const RATE_LIMIT_SHAPE = { expected: 'a limit of the form N/second, N/minute, N/hour or N/day with N at least 1 (for example 600/minute)' };
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
  const match = /^(\d{1,9})\s*\/\s*(second|minute|hour|day)$/i.exec(value);
  const max = match ? Number(match[1]) : 0;
  const window = match?.[2]?.toLowerCase();
  const windowMs = window === undefined ? undefined : WINDOWS[window];
  if (window === undefined || windowMs === undefined || max < 1) throw new SettingsError('RATE_LIMIT', `${quoted(value)} is not ${RATE_LIMIT_SHAPE.expected}`);
  if (redisUrl !== null && !/^rediss?:\/\/\S+$/i.test(redisUrl)) {
    throw new SettingsError('RATE_LIMIT_REDIS_URL', `the value is not ${REDIS_URL_SHAPE.expected}`);
  }
  return { max, windowMs, text: `${max}/${window}`, redisUrl };
}

/** The counter a request counts against: a hash of an accepted key, or the client address. */
export function rateLimitKey(request: FastifyRequest, apiKeys: ApiKeyChecker): string {
  const key = request.headers['x-api-key'];
  if (apiKeys.enforced && typeof key === 'string' && apiKeys.accepts(key)) {
    return `key:${hash('sha256', key, 'base64url')}`;
  }
  return `ip:${request.ip}`;
}

/** The routes a limit counts: the API under /v1/ (not /health, /ready, /metrics or the docs). */
export function isRateLimitedPath(url: string | undefined): boolean {
  return url?.startsWith('/v1/') === true;
}

export function isRateLimited(request: FastifyRequest): boolean {
  return isRateLimitedPath(request.routeOptions.url);
}

type Counted = { current: number; ttl: number };
type CountCallback = (error: Error | null, result: Counted | null) => void;
interface CounterStore {
  incr(key: string, callback: CountCallback, timeWindow: number, max: number): void;
  child(routeOptions: unknown): CounterStore;
}

// The plugin, its local store (a plain CommonJS constructor, not in its type declarations) and the
// Redis client are loaded when a limit is set, not at every start (ioredis alone is about 0.1 s of loading).
const require = createRequire(import.meta.url);
type LocalStoreClass = new (continueExceeding: boolean, exponentialBackoff: boolean) => CounterStore;

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
  /** RATE_LIMIT and RATE_LIMIT_REDIS_URL; null or unset: no limit, no hook. */
  settings: RateLimitSettings | null | undefined;
  apiKeys: ApiKeyChecker;
}

/**
 * The limit's onRequest hook on the routes under /v1/. Registered before the API key plugin: its hook
 * runs first, so that 401 answers count too.
 */
export const rateLimitPlugin = platformPlugin<RateLimitOptions>('rate-limit', async (app, { service, settings, apiKeys }) => {
  if (!settings) return;
  const fastifyRateLimit = require('@fastify/rate-limit') as typeof FastifyRateLimit;
  let store: (new () => CounterStore) | undefined;
  if (settings.redisUrl !== null) {
    const LocalStore = require('@fastify/rate-limit/store/LocalStore.js') as LocalStoreClass;
    const redis = connectRedis(settings.redisUrl);
    const breaker = new RedisBreaker(redis, app.log);
    await firstContact(redis);
    if (redis.status !== 'ready') breaker.open('no answer at start');
    const prefix = `city-services:rate-limit:${service}:`;
    // The plugin constructs its store itself (`new store(options)`): a subclass bound to this Redis.
    store = class extends RedisOrLocalStore {
      constructor() {
        super(breaker, prefix, new LocalStore(false, false));
      }
    };
    app.addHook('onClose', (_instance, done) => {
      breaker.stop();
      redis.disconnect();
      done();
    });
  }
  await app.register(fastifyRateLimit, {
    global: false,
    max: settings.max,
    timeWindow: settings.windowMs,
    enableDraftSpec: true,
    keyGenerator: (request) => rateLimitKey(request, apiKeys),
    errorResponseBuilder: () => new ApiError('rate_limited'),
    ...(store ? { store: store as never } : {}),
  });
  const limit = app.rateLimit();
  app.addHook('onRequest', async (request, reply) => {
    if (isRateLimited(request)) await limit.call(app, request as never, reply as never);
  });
});
