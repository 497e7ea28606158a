import { readFileSync, statSync } from 'node:fs';
import { chmod, open, readFile, rename, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Type, type Static } from 'typebox';
import { Compile } from 'typebox/compile';
import { RATE_EXPECTED, parseRate, type Rate } from '../rates.js';

/**
 * The key file, `API_KEYS_FILE` (docs/deploy.md, "Keys per client"): JSON, one entry per key with its
 * id, name, the SHA-256 of the key (never the key), the services it opens, its own rate limit, its
 * expiry and whether it is disabled. Written by `npm run keys` (cli.ts); read at start (an unusable
 * file stops the start) and again whenever it changes (key-file-watch.ts).
 *
 * ```json
 * { "version": 1, "keys": [{ "id": "key_5f0c2a9e41d7", "name": "Newsroom dashboard",
 *   "sha256": "9f86d0...", "services": ["requests"], "rate_limit": "600/minute",
 *   "expires_at": "2026-01-01T00:00:00.000Z", "disabled": false, "created_at": "2025-07-01T09:12:44.120Z" }] }
 * ```
 */

/** The services a key may open: the three of this repository (the names of their log lines and metrics). */
export const SERVICE_NAMES = ['tickets', 'houses', 'requests'] as const;

/** Ids the metrics and logs use for what is not a key of the file: refused in a file. */
export const RESERVED_KEY_IDS = ['anonymous', 'refused'] as const;

/** YYYY-MM-DD (the start of that day, UTC) or an ISO 8601 instant in UTC. */
const INSTANT_PATTERN = '^\\d{4}-\\d{2}-\\d{2}(T\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,3})?Z)?$';

const FIELD_EXPECTED: Readonly<Record<string, string>> = {
  version: 'the number 1',
  keys: 'a list of keys',
  id: 'an id of 1 to 64 letters, digits, "_", "." or "-", starting with a letter or digit',
  name: 'a name of 1 to 200 characters',
  sha256: 'the SHA-256 of the key in 64 lower-case hexadecimal digits',
  services: `a list of one or more of ${SERVICE_NAMES.join(', ')}, each once`,
  rate_limit: `null or ${RATE_EXPECTED}`,
  expires_at: 'null, a date YYYY-MM-DD or an instant YYYY-MM-DDTHH:MM:SSZ (UTC)',
  disabled: 'true or false',
  created_at: 'an instant YYYY-MM-DDTHH:MM:SSZ (UTC)',
  rotated_from: 'the id of the key this one replaces',
};

const KeyId = Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$' });

const KeyEntry = Type.Object(
  {
    id: KeyId,
    // No control character: a name is printed by `keys list` and may reach a terminal.
    name: Type.String({ minLength: 1, maxLength: 200, pattern: '^[^\\u0000-\\u001f\\u007f]+$' }),
    sha256: Type.String({ pattern: '^[0-9a-f]{64}$' }),
    services: Type.Array(Type.Union([Type.Literal(SERVICE_NAMES[0]), Type.Literal(SERVICE_NAMES[1]), Type.Literal(SERVICE_NAMES[2])]), { minItems: 1, uniqueItems: true }),
    rate_limit: Type.Optional(Type.Union([Type.String({ maxLength: 40 }), Type.Null()])),
    expires_at: Type.Optional(Type.Union([Type.String({ pattern: INSTANT_PATTERN }), Type.Null()])),
    disabled: Type.Optional(Type.Boolean()),
    created_at: Type.Optional(Type.String({ pattern: INSTANT_PATTERN })),
    rotated_from: Type.Optional(KeyId),
  },
  { additionalProperties: false },
);
export type KeyFileEntry = Static<typeof KeyEntry>;

const KeyFileSchema = Type.Object({ version: Type.Literal(1), keys: Type.Array(KeyEntry) }, { additionalProperties: false });
export type KeyFileContent = Static<typeof KeyFileSchema>;

const compileKeyFileValidator = () => Compile(KeyFileSchema);
let compiledValidator: ReturnType<typeof compileKeyFileValidator> | undefined;
/** The schema's check, compiled when a file is first read (not at every start: most run without a key file). */
function keyFileValidator(): ReturnType<typeof compileKeyFileValidator> {
  compiledValidator ??= compileKeyFileValidator();
  return compiledValidator;
}

/** A key of the file as the services use it: its rate and expiry read. */
export interface KeyRecord {
  id: string;
  name: string;
  sha256: string;
  services: readonly string[];
  /** Its own limit; null: the service's RATE_LIMIT. */
  rate: Rate | null;
  /** Refused from this instant (ms since the epoch); null: never expires. */
  expiresAtMs: number | null;
  disabled: boolean;
}

/** The file, read and checked: its entries as written (for the command) and as used (for the services). */
export interface KeyFile {
  content: KeyFileContent;
  records: KeyRecord[];
}

/** A file that cannot be used: the message says where and why, in one line (it never holds a key). */
export class KeyFileError extends Error {
  override name = 'KeyFileError';
}

/** A larger file is refused unread: 1,000 keys take about 350 KB. */
export const KEY_FILE_MAX_BYTES = 16 * 1024 * 1024;

/** The instant of a file's date or timestamp, or NaN when it is no real date (2025-02-30). */
export function instantOf(text: string): number {
  const iso = text.length === 10 ? `${text}T00:00:00.000Z` : text;
  const ms = Date.parse(iso);
  // Date.parse rolls 2025-02-30 over into March: a real date prints back as it was written.
  return Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== iso.slice(0, 10) ? Number.NaN : ms;
}

/** `/keys/3/rate_limit` as `keys[3].rate_limit`. */
function readablePath(pointer: string): string {
  return pointer
    .split('/')
    .slice(1)
    .reduce((path, part) => (/^\d+$/.test(part) ? `${path}[${part}]` : path ? `${path}.${part}` : part), '');
}

function schemaProblem(value: unknown): string | undefined {
  const validator = keyFileValidator();
  if (validator.Check(value)) return undefined;
  const errors = [...validator.Errors(value)];
  const error = errors.find((e) => e.keyword === 'additionalProperties' || e.keyword === 'required') ?? errors[0];
  if (error === undefined) return 'does not match the key file schema';
  const path = readablePath(error.instancePath);
  const params = error.params as { requiredProperties?: string[]; additionalProperties?: string[] };
  if (error.keyword === 'required') return `${(params.requiredProperties ?? []).map((key) => (path ? `${path}.${key}` : key)).join(', ')}: missing`;
  if (error.keyword === 'additionalProperties') return `${path || 'the file'}: unknown field ${JSON.stringify(params.additionalProperties?.[0] ?? '')}`;
  // The field's own name (`keys[2].services[1]` is a services item).
  const field = error.instancePath.split('/').filter((part) => !/^\d+$/.test(part)).pop() ?? '';
  const expected = FIELD_EXPECTED[field];
  return `${path || 'the file'}: ${expected === undefined ? error.message : `expected ${expected}`}`;
}

/** The file's text, checked: the schema, then what a schema cannot say (rates, real dates, ids and hashes given once). */
export function parseKeyFile(text: string): KeyFile {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new KeyFileError(`not JSON (${(error as Error).message})`);
  }
  const problem = schemaProblem(value);
  if (problem !== undefined) throw new KeyFileError(problem);
  const content = value as KeyFileContent;
  const ids = new Map<string, number>();
  const hashes = new Map<string, number>();
  const records = content.keys.map((entry, index): KeyRecord => {
    const where = `keys[${index}]`;
    if ((RESERVED_KEY_IDS as readonly string[]).includes(entry.id)) throw new KeyFileError(`${where}.id: "${entry.id}" is reserved (the metrics' name for keys outside the file)`);
    const sameId = ids.get(entry.id);
    if (sameId !== undefined) throw new KeyFileError(`${where}.id: "${entry.id}" is already the id of keys[${sameId}]`);
    ids.set(entry.id, index);
    const sameHash = hashes.get(entry.sha256);
    if (sameHash !== undefined) throw new KeyFileError(`${where}.sha256: the same key as keys[${sameHash}]`);
    hashes.set(entry.sha256, index);
    const rate = entry.rate_limit == null ? null : parseRate(entry.rate_limit);
    if (entry.rate_limit != null && rate === null) throw new KeyFileError(`${where}.rate_limit: ${JSON.stringify(entry.rate_limit)} is not ${RATE_EXPECTED}`);
    const expiresAtMs = entry.expires_at == null ? null : instantOf(entry.expires_at);
    if (Number.isNaN(expiresAtMs)) throw new KeyFileError(`${where}.expires_at: ${JSON.stringify(entry.expires_at)} is not a real date`);
    return { id: entry.id, name: entry.name, sha256: entry.sha256, services: entry.services, rate, expiresAtMs, disabled: entry.disabled === true };
  });
  return { content, records };
}

/** An empty file's content (the command's first `create`). */
export function emptyKeyFile(): KeyFileContent {
  return { version: 1, keys: [] };
}

function tooLarge(size: number): KeyFileError {
  return new KeyFileError(`${size} bytes; a key file has at most ${KEY_FILE_MAX_BYTES} bytes`);
}

/** Why a file cannot be read, without the path (the caller names it). */
function unreadable(error: unknown): KeyFileError {
  if (error instanceof KeyFileError) return error;
  const code = (error as NodeJS.ErrnoException).code;
  return new KeyFileError(`cannot be read (${code ?? (error as Error).message})`);
}

/** What tells a file's versions apart: a change of any of these is a new version to read. */
export interface FileState {
  size: number;
  mtimeMs: number;
  ctimeMs: number;
  ino: number;
}

/** The file read and checked, at start (synchronously, before anything runs), with its state before the read. */
export function readKeyFileSync(path: string): KeyFile & { state: FileState } {
  let text: string;
  let state: FileState;
  try {
    state = statSync(path);
    const bytes = readFileSync(path);
    if (bytes.length > KEY_FILE_MAX_BYTES) throw tooLarge(bytes.length);
    text = bytes.toString('utf8');
  } catch (error) {
    throw unreadable(error);
  }
  return { ...parseKeyFile(text), state };
}

/** The file read and checked, while the service runs (key-file-watch.ts, the command). */
export async function readKeyFile(path: string): Promise<KeyFile> {
  let text: string;
  try {
    const { size } = await stat(path);
    if (size > KEY_FILE_MAX_BYTES) throw tooLarge(size);
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw unreadable(error);
  }
  return parseKeyFile(text);
}

/**
 * Writes the file whole or not at all: a temporary file beside it, flushed, then renamed over it, so
 * that a service reading it at any moment reads the old file or the new one, never half of one. The
 * mode of the file it replaces is kept (a new file: 0644, readable by the services' user, as it holds
 * no key).
 */
export async function writeKeyFile(path: string, content: KeyFileContent): Promise<void> {
  const text = `${JSON.stringify(content, null, 2)}\n`;
  parseKeyFile(text);
  const temporary = join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const mode = await stat(path).then((existing) => existing.mode & 0o777, () => 0o644);
  const handle = await open(temporary, 'wx', mode);
  try {
    await handle.writeFile(text, 'utf8');
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await chmod(temporary, mode);
    await rename(temporary, path);
  } catch (error) {
    await unlink(temporary).catch(() => undefined);
    throw error;
  }
}
