import { hash, timingSafeEqual } from 'node:crypto';

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
