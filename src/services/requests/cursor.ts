import { createHmac, hash, timingSafeEqual } from 'node:crypto';
import { ApiError } from '../../platform/error-registry.js';
import { FILTER_NAMES, type ListFilters } from './list-filters.js';

/**
 * The keyset cursor of `GET /v1/service-requests`.
 *
 * Text: `<payload>.<signature>`, both base64url without padding (URL-safe, nothing to escape).
 * payload: the JSON array `[2, created_at, id, filter_set, filters_hash, snapshot_id]`: format
 * version, the last row's (created_at, id), the id of the filter set (FILTER_SET_ID), the hash of
 * every normalized filter of that set, the snapshot id. Not `limit`.
 * signature: HMAC-SHA256 of the payload text with the first CURSOR_SECRET; any of the configured
 * secrets is accepted (rotation), each compared in constant time.
 * About 155 characters, at most 166 (an id of 16 digits): always under the 200 of the contract.
 */
export const CURSOR_MAX_LENGTH = 200;
const CURSOR_VERSION = 2;
/**
 * Format 1 names no filter set: `[1, created_at, id, filters_hash, snapshot_id]`. Still read so that
 * such a cursor, which the service did hand out, is told "no longer accepted" like a cursor of another
 * filter set, not "not valid".
 */
const CURSOR_VERSION_WITHOUT_FILTER_SET = 1;
const SIGNATURE_CHARACTERS = 43; // 32 bytes in base64url without padding
const CURSOR_SHAPE = /^([A-Za-z0-9_-]{1,150})\.([A-Za-z0-9_-]{43})$/;
const CREATED_AT = /^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}$/;
const HASH_TEXT = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * The filter set a cursor is made under: 8 base64url characters of SHA-256 over FILTER_NAMES in
 * order (FILTERED_COLUMNS, then the time bounds and the box). Derived from the list, so that adding,
 * removing or reordering a filter changes it with no number to remember to bump. A filters hash only
 * compares values within one set, so a cursor of another set (made before such a change) is refused
 * "no longer accepted" rather than "other filters": its client may have changed no filter at all.
 */
export const FILTER_SET_ID = hash('sha256', JSON.stringify(FILTER_NAMES), 'base64url').slice(0, 8);

export const CURSOR_NOT_VALID = 'The cursor is not valid';
export const CURSOR_OTHER_FILTERS = 'The cursor belongs to other filters: start again without a cursor';
/** A cursor of a snapshot that a refresh has replaced: its positions may not exist in the new one. */
export const CURSOR_OTHER_SNAPSHOT = 'The cursor belongs to an earlier snapshot of the data: start again without a cursor';
/**
 * A well-formed cursor that no current secret signed (made by an earlier run, a replica with another
 * secret, a retired secret), or one made under another filter set than FILTER_SET_ID.
 */
export const CURSOR_NO_LONGER_ACCEPTED = 'The cursor is no longer accepted: start again without a cursor';

export interface CursorPosition {
  created_at: string;
  id: number;
}

/** 16 base64url characters (96 bits) of SHA-256 over the normalized filters in the order of FILTER_NAMES. */
export function filtersHash(filters: ListFilters): string {
  const values = FILTER_NAMES.map((name) => filters[name]);
  return hash('sha256', JSON.stringify(values), 'base64url').slice(0, 16);
}

function invalidCursor(message: string): ApiError {
  return new ApiError('invalid_cursor', { fields: ['cursor'], message });
}

export class CursorCodec {
  private readonly secrets: readonly Buffer[];

  /** `secrets`: the first signs new cursors; a cursor signed by any of them is accepted. */
  constructor(secrets: readonly Buffer[]) {
    if (secrets.length === 0) throw new Error('a cursor codec needs at least one secret');
    this.secrets = secrets;
  }

  private static signature(secret: Buffer, payload: string): Buffer {
    // Compared as text: base64url decoding ignores the last character's spare bits, the text does not.
    return Buffer.from(createHmac('sha256', secret).update(payload).digest('base64url'), 'latin1');
  }

  encode(position: CursorPosition, filters: ListFilters, snapshotId: string): string {
    const payload = Buffer.from(
      JSON.stringify([CURSOR_VERSION, position.created_at, position.id, FILTER_SET_ID, filtersHash(filters), snapshotId]),
    ).toString('base64url');
    const cursor = `${payload}.${CursorCodec.signature(this.secrets[0] as Buffer, payload).toString('latin1')}`;
    if (cursor.length > CURSOR_MAX_LENGTH) throw new Error(`cursor of ${cursor.length} characters`);
    return cursor;
  }

  /** True when one of the secrets made this signature; every secret is compared (no early exit). */
  private signedByCurrentSecret(payload: string, signature: string): boolean {
    const presented = Buffer.from(signature, 'latin1');
    if (presented.length !== SIGNATURE_CHARACTERS) return false;
    let matched = false;
    for (const secret of this.secrets) {
      const expected = CursorCodec.signature(secret, payload);
      matched = (expected.length === SIGNATURE_CHARACTERS && timingSafeEqual(presented, expected)) || matched;
    }
    return matched;
  }

  /**
   * The position after which the next page starts. 422 invalid_cursor "not valid" when the text is
   * undecodable, malformed or of wrong types; "start again" when it is well-formed but no current
   * secret signed it (an earlier run, another replica's secret, a retired secret) or when it was made
   * under another filter set (FILTER_SET_ID: the service's filters changed since), or under other
   * filter values, or for another snapshot (one a refresh has replaced).
   */
  decode(cursor: string, filters: ListFilters, snapshotId: string): CursorPosition {
    const shape = CURSOR_SHAPE.exec(cursor);
    if (!shape) throw invalidCursor(CURSOR_NOT_VALID);
    const payload = shape[1] as string;
    const position = readPayload(payload);
    if (!this.signedByCurrentSecret(payload, shape[2] as string)) throw invalidCursor(CURSOR_NO_LONGER_ACCEPTED);
    if (position.filterSet !== FILTER_SET_ID) throw invalidCursor(CURSOR_NO_LONGER_ACCEPTED);
    if (position.filtersHash !== filtersHash(filters)) throw invalidCursor(CURSOR_OTHER_FILTERS);
    if (position.snapshotId !== snapshotId) throw invalidCursor(CURSOR_OTHER_SNAPSHOT);
    return { created_at: position.created_at, id: position.id };
  }
}

function isHashText(value: unknown): value is string {
  return typeof value === 'string' && HASH_TEXT.test(value);
}

function invalidContent(): never {
  throw invalidCursor(CURSOR_NOT_VALID);
}

/**
 * The content of a payload, checked before its signature so that a well-formed cursor of an earlier
 * secret can be told from garbage (a payload is at most 150 characters: reading it costs nothing).
 */
function readPayload(payload: string): CursorPosition & { filterSet: string | null; filtersHash: string; snapshotId: string } {
  let content: unknown;
  try {
    content = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return invalidContent();
  }
  if (!Array.isArray(content)) return invalidContent();
  let filterSet: string | null;
  let rest: unknown[];
  if (content[0] === CURSOR_VERSION && content.length === 6) {
    filterSet = isHashText(content[3]) ? content[3] : invalidContent();
    rest = [content[1], content[2], content[4], content[5]];
  } else if (content[0] === CURSOR_VERSION_WITHOUT_FILTER_SET && content.length === 5) {
    filterSet = null;
    rest = content.slice(1);
  } else {
    return invalidContent();
  }
  const [createdAt, id, hash, snapshot] = rest;
  if (
    typeof createdAt !== 'string' ||
    !CREATED_AT.test(createdAt) ||
    typeof id !== 'number' ||
    !Number.isSafeInteger(id) ||
    !isHashText(hash) ||
    !isHashText(snapshot)
  ) {
    return invalidContent();
  }
  return { created_at: createdAt, id, filterSet, filtersHash: hash, snapshotId: snapshot };
}
