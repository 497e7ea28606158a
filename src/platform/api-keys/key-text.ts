import { hash, randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';

/**
 * The text of a key made by `npm run keys`: `cs_` (what it is: a city-services key, so that a secret
 * scanner and a reader of a leaked file know it), 30 random base62 characters (178 bits: well over the
 * 128 bits no guess reaches), then 6 base62 characters of the CRC32 of the random part. The checksum
 * lets a scanner tell a real key from a look-alike, and the service refuse a mistyped key without
 * hashing or looking it up. Only a key's SHA-256 is ever stored (key-file.ts).
 */
export const KEY_PREFIX = 'cs_';
const RANDOM_LENGTH = 30;
const CHECKSUM_LENGTH = 6;
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** A key of this form: the prefix, then base62 only, of the exact length. */
const GENERATED_KEY = new RegExp(`^${KEY_PREFIX}[0-9A-Za-z]{${RANDOM_LENGTH + CHECKSUM_LENGTH}}$`);

/** `value` in base62 over exactly `length` characters (leading zeros). */
function base62(value: number, length: number): string {
  let text = '';
  let rest = value;
  for (let i = 0; i < length; i++) {
    text = BASE62.charAt(rest % 62) + text;
    rest = Math.floor(rest / 62);
  }
  return text;
}

function checksumOf(randomPart: string): string {
  // 62^6 > 2^32: every CRC32 fits in the 6 characters.
  return base62(crc32(randomPart), CHECKSUM_LENGTH);
}

/** A new key: uniform base62 characters (bytes of 248 and over are drawn again, so that none is likelier). */
export function newKeyText(): string {
  let randomPart = '';
  while (randomPart.length < RANDOM_LENGTH) {
    for (const byte of randomBytes(RANDOM_LENGTH * 2)) {
      if (byte < 248 && randomPart.length < RANDOM_LENGTH) randomPart += BASE62.charAt(byte % 62);
    }
  }
  return `${KEY_PREFIX}${randomPart}${checksumOf(randomPart)}`;
}

/** Whether `key` has the form of a made key (prefix, length, alphabet), whatever its checksum. */
export function hasKeyForm(key: string): boolean {
  return GENERATED_KEY.test(key);
}

/** Whether a key of the made form carries a wrong checksum: a mistyped or made-up key, refused without a lookup. */
export function checksumFails(key: string): boolean {
  if (!hasKeyForm(key)) return false;
  const randomPart = key.slice(KEY_PREFIX.length, KEY_PREFIX.length + RANDOM_LENGTH);
  return key.slice(KEY_PREFIX.length + RANDOM_LENGTH) !== checksumOf(randomPart);
}

/** The SHA-256 of a key in hexadecimal: what the key file holds, and what a presented key is looked up by. */
export function keyDigest(key: string): string {
  // crypto.hash: the one-shot form, half the time of createHash() on short input.
  return hash('sha256', key, 'hex');
}
