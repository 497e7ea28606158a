import { hash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { LiveApiKeys } from './api-keys/key-file-watch.js';
import type { KeyIdentity } from './api-keys/key-set.js';
import { ApiError } from './error-registry.js';
import { platformPlugin } from './platform-app.js';
import type { BudgetOwner } from './work-budget.js';

/**
 * One secret compared in constant time (the metrics key, metrics.ts). Both sides are hashed first so
 * that the comparison takes the same time whatever the lengths, and every configured value is
 * compared (no early exit that would tell which one nearly matched). The API keys are looked up by
 * their SHA-256 instead (api-keys/key-set.ts), so that the check does not grow with their number.
 */
export class ApiKeyChecker {
  private readonly digests: Buffer[];

  constructor(keys: readonly string[]) {
    this.digests = keys.map(digest);
  }

  /** True when `presented` equals one of the configured values. */
  accepts(presented: unknown): boolean {
    if (this.digests.length === 0) return true;
    if (typeof presented !== 'string') return false;
    const candidate = digest(presented);
    let matched = false;
    for (const known of this.digests) {
      // Non-short-circuit OR: every key is compared.
      matched = timingSafeEqual(candidate, known) || matched;
    }
    return matched;
  }
}

function digest(value: string): Buffer {
  // crypto.hash: the one-shot form, half the time of createHash() on short input.
  return hash('sha256', value, 'buffer');
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route answers 401 unless a configured API key is presented in X-API-Key. */
    requiresApiKey?: boolean;
  }
  interface FastifyRequest {
    /** Who the request's X-API-Key is, once asked (the rate limit or the key check): never the key itself. */
    apiKeyIdentity: KeyIdentity | null;
  }
}

/**
 * The identity of the request's key, worked out once per request (the rate limit asks first, then the
 * key check): one SHA-256 and one Map lookup, whatever the number of keys.
 */
export function identifyRequest(request: FastifyRequest, keys: LiveApiKeys): KeyIdentity {
  request.apiKeyIdentity ??= keys.current.identify(request.headers['x-api-key']);
  return request.apiKeyIdentity;
}

/**
 * The caller a work budget shares its places between (work-budget.ts): the key's id (every key of
 * API_KEY is one caller, `anonymous`), and whether the keys tell several callers apart at all (one
 * shared key keeps the budget's plain order of arrival).
 */
export function budgetOwner(request: FastifyRequest, keys: LiveApiKeys): BudgetOwner | null {
  const identity = request.apiKeyIdentity;
  if (identity?.kind !== 'accepted') return null;
  return { id: identity.id, shared: keys.current.callers > 1 };
}

/**
 * Whose key the request had, when that says something: an accepted key, or a refused key on a route
 * that needs one (a route open to all, such as tickets' categories, says nothing of a missing key).
 */
export function keyOfRequest(request: FastifyRequest): KeyIdentity | null {
  const identity = request.apiKeyIdentity;
  if (identity === null || identity.kind === 'open') return null;
  if (identity.kind === 'refused' && request.routeOptions.config.requiresApiKey !== true) return null;
  return identity;
}

/** The fields of the request's log line that say whose key it was (its id, why it was refused); never the key. */
export function keyLogFields(request: FastifyRequest): { key_id?: string; key_refused?: string } | undefined {
  const identity = keyOfRequest(request);
  if (identity === null || identity.kind === 'open') return undefined;
  if (identity.kind === 'accepted') return { key_id: identity.id };
  return identity.id === null ? { key_refused: identity.reason } : { key_id: identity.id, key_refused: identity.reason };
}

/**
 * onRequest: a route with `config.requiresApiKey` answers 401 without an accepted key, before its body
 * is read. The 401 is the contract's, the same whatever the reason (no key, unknown, mistyped,
 * revoked, expired, not for this service); the reason is in the request's log line (keyLogFields).
 * The key file is watched from here while the app runs (key-file-watch.ts).
 */
export const apiKeyPlugin = platformPlugin<{ keys: LiveApiKeys }>('api-key', (app, { keys }) => {
  app.decorateRequest('apiKeyIdentity', null);
  keys.start();
  app.addHook('onClose', (_instance, done) => {
    keys.stop();
    done();
  });
  app.addHook('onRequest', (request, _reply, done) => {
    if (request.routeOptions.config.requiresApiKey && identifyRequest(request, keys).kind === 'refused') {
      done(new ApiError('unauthorized'));
      return;
    }
    done();
  });
});
