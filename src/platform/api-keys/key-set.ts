import { hash } from 'node:crypto';
import type { Rate } from '../rates.js';
import type { KeyRecord } from './key-file.js';
import { checksumFails, keyDigest } from './key-text.js';

/**
 * The keys a service accepts at one moment: the anonymous keys of `API_KEY` (one set, id `anonymous`)
 * and the keys of `API_KEYS_FILE`, by the SHA-256 of each key. Immutable: a reload of the file builds
 * a new set (key-file-watch.ts).
 *
 * A presented key is hashed, and its hash looked up in a Map: the lookup does not grow with the number
 * of keys, and what is compared is the hash of the presented key, never the key itself, so the time a
 * comparison takes tells an attacker at most how many leading characters of a SHA-256 matched, which
 * does not help to find a key (finding a key with a given hash prefix is a preimage search). No key
 * is held in memory: the anonymous keys are hashed as the set is built.
 */

/** Why a key was refused: in the service's log and metrics only; the client gets the same 401 whatever it is. */
export type KeyRefusal =
  /** No X-API-Key header, or one given twice. */
  | 'missing'
  /** A key of the made form (`cs_...`) whose checksum is wrong: mistyped, refused without a lookup. */
  | 'mistyped'
  /** No key of the set has this hash. */
  | 'unknown'
  /** The key's entry is disabled (`npm run keys -- revoke`). */
  | 'revoked'
  /** The key's expiry has passed. */
  | 'expired'
  /** The key does not open this service. */
  | 'not_for_service';

export type KeyIdentity =
  /** No key is configured: every request passes, and none is counted per key. */
  | { readonly kind: 'open' }
  | {
      readonly kind: 'accepted';
      /** The file's id, or `anonymous` for a key of API_KEY. */
      readonly id: string;
      /** The rate-limit counter of the key (never the key: its id, or a hash of an anonymous key). */
      readonly counter: string;
      /** The key's own limit; null: the service's RATE_LIMIT. */
      readonly rate: Rate | null;
    }
  | {
      readonly kind: 'refused';
      readonly reason: KeyRefusal;
      /** The file's id when the key was found (revoked, expired, not for this service); null otherwise. */
      readonly id: string | null;
    };

/** The id of every key of API_KEY in logs and metrics. */
export const ANONYMOUS_KEY_ID = 'anonymous';

const OPEN: KeyIdentity = { kind: 'open' };
const MISSING: KeyIdentity = { kind: 'refused', reason: 'missing', id: null };
const MISTYPED: KeyIdentity = { kind: 'refused', reason: 'mistyped', id: null };
const UNKNOWN: KeyIdentity = { kind: 'refused', reason: 'unknown', id: null };

type Known = { kind: 'anonymous'; identity: KeyIdentity } | { kind: 'file'; record: KeyRecord; accepted: KeyIdentity; refused: (reason: KeyRefusal) => KeyIdentity };

export class ApiKeySet {
  private readonly byDigest = new Map<string, Known>();
  /** Whether keys are checked at all: an API_KEY is set, or a key file is (even an empty one). */
  readonly enforced: boolean;
  /** The ids of the file's keys: the only ids metrics may carry, with `anonymous` and `refused`. */
  readonly fileIds: ReadonlySet<string>;
  /** How many callers the set tells apart: the file's keys, plus one for the anonymous keys. */
  readonly callers: number;

  constructor(
    /** This service's name: a key whose entry does not list it is refused. */
    private readonly service: string,
    anonymousKeys: readonly string[],
    records: readonly KeyRecord[] | null,
  ) {
    for (const key of anonymousKeys) {
      // The anonymous keys share one id, and keep a counter each (as before the key file).
      const counter = `key:${hash('sha256', key, 'base64url')}`;
      this.byDigest.set(keyDigest(key), { kind: 'anonymous', identity: { kind: 'accepted', id: ANONYMOUS_KEY_ID, counter, rate: null } });
    }
    for (const record of records ?? []) {
      const refusals = new Map<KeyRefusal, KeyIdentity>();
      // A key of API_KEY that is also in the file is the file's key (its id, its limit).
      this.byDigest.set(record.sha256, {
        kind: 'file',
        record,
        accepted: { kind: 'accepted', id: record.id, counter: `id:${record.id}`, rate: record.rate },
        refused: (reason) => {
          let refusal = refusals.get(reason);
          if (refusal === undefined) refusals.set(reason, (refusal = { kind: 'refused', reason, id: record.id }));
          return refusal;
        },
      });
    }
    this.enforced = anonymousKeys.length > 0 || records !== null;
    this.fileIds = new Set((records ?? []).map((record) => record.id));
    this.callers = (records?.length ?? 0) + (anonymousKeys.length > 0 ? 1 : 0);
  }

  /** Who presents `presented` (the X-API-Key header) at `now`: accepted, refused with why, or open. */
  identify(presented: unknown, now: number = Date.now()): KeyIdentity {
    if (!this.enforced) return OPEN;
    if (typeof presented !== 'string' || presented.length === 0) return MISSING;
    // A made key with a wrong checksum is refused before it is hashed or looked up.
    if (checksumFails(presented)) return MISTYPED;
    const known = this.byDigest.get(keyDigest(presented));
    if (known === undefined) return UNKNOWN;
    if (known.kind === 'anonymous') return known.identity;
    const { record } = known;
    if (record.disabled) return known.refused('revoked');
    if (record.expiresAtMs !== null && now >= record.expiresAtMs) return known.refused('expired');
    if (!record.services.includes(this.service)) return known.refused('not_for_service');
    return known.accepted;
  }
}
