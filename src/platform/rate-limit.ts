import { hash } from 'node:crypto';
import { createRequire } from 'node:module';
import type FastifyRateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import type * as IoRedis from 'ioredis';
import type { ApiKeyChecker } from './api-key.js';
import { ApiError } from './error-registry.js';
import { SettingsError, quoted, readText, type Env } from './settings.js';

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
 *   counter, the plugin's Lua script). When Redis cannot be reached, each replica counts locally
 *   (the limit then holds per replica) until Redis answers again: the service keeps answering and
 *   still limits.
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

// The plugin, its own stores (plain CommonJS constructors, not in its type declarations) and the Redis
// client are loaded when a limit is set, not at every start (ioredis alone is about 0.1 s of loading).
const require = createRequire(import.meta.url);
type RedisStoreClass = new (continueExceeding: boolean, exponentialBackoff: boolean, redis: Redis, prefix: string) => CounterStore;
type LocalStoreClass = new (continueExceeding: boolean, exponentialBackoff: boolean) => CounterStore;

/** Counts in Redis while it answers, locally while it does not. */
class RedisOrLocalStore implements CounterStore {
  constructor(
    private readonly redis: Redis,
    private readonly shared: CounterStore,
    private readonly local: CounterStore,
  ) {}

  incr(key: string, callback: CountCallback, timeWindow: number, max: number): void {
    if (this.redis.status !== 'ready') {
      this.local.incr(key, callback, timeWindow, max);
      return;
    }
    this.shared.incr(key, (error, result) => {
      if (error) this.local.incr(key, callback, timeWindow, max);
      else callback(null, result);
    }, timeWindow, max);
  }

  child(routeOptions: unknown): CounterStore {
    return new RedisOrLocalStore(this.redis, this.shared.child(routeOptions), this.local.child(routeOptions));
  }
}

/** How long a Redis command may take before the request is counted locally instead. */
const REDIS_COMMAND_TIMEOUT_MS = 250;

function connectRedis(app: FastifyInstance, url: string): Redis {
  const { Redis: RedisClient } = require('ioredis') as typeof IoRedis;
  const redis = new RedisClient(url, {
    // Commands fail at once while disconnected (no queue), and never wait long: requests go on.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
    connectTimeout: 1_000,
    retryStrategy: (attempt) => Math.min(attempt * 200, 5_000),
  });
  let reachable = true;
  redis.on('error', (error: Error) => {
    if (!reachable) return;
    reachable = false;
    app.log.warn({ err: { message: error.message } }, 'rate limit: Redis unreachable; counting locally until it answers');
  });
  redis.on('ready', () => {
    if (reachable) return;
    reachable = true;
    app.log.info('rate limit: Redis answers again; counters shared');
  });
  return redis;
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

/**
 * Registers the limit. Call before the API key check is added: the returned hook must run first.
 * Returns the onRequest hook to add.
 */
export async function registerRateLimit(
  app: FastifyInstance,
  service: string,
  settings: RateLimitSettings,
  apiKeys: ApiKeyChecker,
): Promise<(request: FastifyRequest, reply: import('fastify').FastifyReply) => Promise<void>> {
  const fastifyRateLimit = require('@fastify/rate-limit') as typeof FastifyRateLimit;
  let store: (new () => CounterStore) | undefined;
  if (settings.redisUrl !== null) {
    const RedisStore = require('@fastify/rate-limit/store/RedisStore.js') as RedisStoreClass;
    const LocalStore = require('@fastify/rate-limit/store/LocalStore.js') as LocalStoreClass;
    const redis = connectRedis(app, settings.redisUrl);
    await firstContact(redis);
    const prefix = `city-services:rate-limit:${service}:`;
    const shared = new RedisStore(false, false, redis, prefix);
    // The plugin constructs its store itself (`new store(options)`): a subclass bound to this Redis.
    store = class extends RedisOrLocalStore {
      constructor() {
        super(redis, shared, new LocalStore(false, false));
      }
    };
    app.addHook('onClose', (_instance, done) => {
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
  return async (request, reply) => {
    if (isRateLimited(request)) await limit.call(app, request as never, reply as never);
  };
}
