import { hash, timingSafeEqual } from 'node:crypto';
import { ApiError } from './error-registry.js';
import { platformPlugin } from './platform-app.js';

/**
 * API keys (conventions.md): header X-API-Key, several keys for rotation, compared in constant time.
 * Both sides are hashed first so that the comparison takes the same time whatever the lengths, and
 * every configured key is compared (no early exit that would tell which key nearly matched).
 */
export class ApiKeyChecker {
  private readonly digests: Buffer[];

  constructor(keys: readonly string[]) {
    this.digests = keys.map(digest);
  }

  get enforced(): boolean {
    return this.digests.length > 0;
  }

  /** True when no key is configured, or when `presented` equals one of the configured keys. */
  accepts(presented: unknown): boolean {
    if (!this.enforced) return true;
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
}

/** onRequest: a route with `config.requiresApiKey` answers 401 without an accepted key, before its body is read. */
export const apiKeyPlugin = platformPlugin<{ apiKeys: ApiKeyChecker }>('api-key', (app, { apiKeys }) => {
  app.addHook('onRequest', (request, _reply, done) => {
    if (request.routeOptions.config.requiresApiKey && !apiKeys.accepts(request.headers['x-api-key'])) {
      done(new ApiError('unauthorized'));
      return;
    }
    done();
  });
});
