import { randomBytes } from 'node:crypto';
import { isAbsolute, resolve } from 'node:path';
import { defaultSnapshotPath } from '../../ingest/nyc311/index.js';
import { SettingsError, quoted, readBoolean, readSeconds, readSecretList, readText, readWholeNumber, type Env } from '../../platform/setting-readers.js';
import { readPlatformSettings, type PlatformSettings } from '../../platform/settings.js';
import { PostgresSchemaNameError, isPostgresUrl, parsePostgresTarget } from '../../shared/postgres-schema.js';

export const REQUESTS_DEFAULT_PORT = 8003;

const MEGABYTE = 1_048_576;

/**
 * Each CURSOR_SECRET shorter than this is refused: 32 characters are 128 bits or more for any random
 * text (`openssl rand -hex 16` is exactly 32), so a forged cursor cannot be signed by guessing the key.
 */
export const CURSOR_SECRET_MIN_LENGTH = 32;

export type DatabaseLocation =
  | { kind: 'sqlite'; path: string; isDefault: boolean }
  /** `schema`: the PostgreSQL schema holding the snapshot tables (`?schema=` in the URL, default public, as the loader). */
  | { kind: 'postgres'; url: string; schema: string };

export interface RequestSettings extends PlatformSettings {
  database: DatabaseLocation;
  /** Keys of the cursors' HMAC: the first signs, any of them is accepted (rotation). */
  cursorSecrets: Buffer[];
  /** True when CURSOR_SECRET was unset and a random key was made at start. */
  cursorSecretGenerated: boolean;
  /** Set when API_KEY was unset: the random key made at start, to be printed once by the start command. */
  generatedApiKey: string | null;
  /** SHOW_DASHBOARD (default true): false turns off /dashboard and its files (404). */
  showDashboard: boolean;
  /** EXPORT_MAX_SECONDS in milliseconds: an export still running then is cut (default 300 s). */
  exportMaxMs: number;
  /** ROW_COLUMNS_MAX_MB in bytes: the most bytes the row columns of a snapshot may take, in their file or in memory (default 2048 MB). */
  rowColumnsMaxBytes: number;
}

/**
 * The default of ROW_COLUMNS_MAX_MB: the row columns of the full history (about 40 million requests
 * of every agency) with room, at 33 to 45 bytes a request (a column of more than 255 values, such as
 * the descriptors and zip codes of every agency, takes two bytes a request; closed_at four, the
 * location sixteen).
 */
export const ROW_COLUMNS_DEFAULT_MAX_MB = 2048;

/**
 * DATABASE_URL: unset means the embedded SQLite snapshot; `postgres://` or `postgresql://` a
 * PostgreSQL database (an optional `schema` query parameter names the schema of the tables);
 * anything else is a SQLite file path (relative to the working directory).
 */
export function readDatabaseLocation(env: Env): DatabaseLocation {
  const value = readText(env, 'DATABASE_URL', { expected: 'a SQLite file path or a postgres:// URL', secret: true });
  if (value === undefined) return { kind: 'sqlite', path: defaultSnapshotPath(), isDefault: true };
  if (isPostgresUrl(value)) {
    if (URL.canParse(value) && new URL(value).searchParams.getAll('schema').length > 1) {
      throw new SettingsError('DATABASE_URL', 'the schema parameter is given more than once');
    }
    try {
      const target = parsePostgresTarget(value);
      return { kind: 'postgres', url: target.connectionString, schema: target.schema };
    } catch (error) {
      if (error instanceof PostgresSchemaNameError) {
        throw new SettingsError('DATABASE_URL', `schema ${quoted(error.schema)} is not a plain identifier (letters, digits, _)`);
      }
      throw new SettingsError('DATABASE_URL', 'not a valid postgres:// URL');
    }
  }
  if (/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(value)) {
    throw new SettingsError('DATABASE_URL', 'must be a SQLite file path or a postgres:// URL');
  }
  return { kind: 'sqlite', path: isAbsolute(value) ? value : resolve(process.cwd(), value), isDefault: false };
}

/**
 * CURSOR_SECRET: one or more secrets separated by commas, each at least 32 characters of printable
 * ASCII. The first signs new cursors, any of them is accepted, so that the secret can be rotated
 * like API keys: add the new one in front, and drop the old one once its cursors no longer matter.
 * Unset: one random secret made at start (`generated`), which dies with the process.
 */
export function readCursorSecrets(env: Env): { secrets: Buffer[]; generated: boolean } {
  const secrets = readSecretList(env, 'CURSOR_SECRET', {
    expected: `one or more secrets of at least ${CURSOR_SECRET_MIN_LENGTH} characters, separated by commas`,
    item: 'secret',
  });
  if (secrets === undefined) return { secrets: [randomBytes(32)], generated: true };
  secrets.forEach((secret, index) => {
    if (secret.length < CURSOR_SECRET_MIN_LENGTH) {
      throw new SettingsError(
        'CURSOR_SECRET',
        `secret ${index + 1} has ${secret.length} characters; each must have at least ${CURSOR_SECRET_MIN_LENGTH} (for example openssl rand -hex 16)`,
      );
    }
  });
  return { secrets: secrets.map((secret) => Buffer.from(secret, 'utf8')), generated: false };
}

/**
 * The settings of the service-request API. Every /v1 path needs a key: with neither API_KEY nor
 * API_KEYS_FILE set a random key is made here (the start command prints it once), so that the data is
 * never open by accident.
 */
export function readRequestSettings(env: Env): RequestSettings {
  const platform = readPlatformSettings(env, REQUESTS_DEFAULT_PORT);
  const database = readDatabaseLocation(env);
  const cursor = readCursorSecrets(env);
  const showDashboard = readBoolean(env, 'SHOW_DASHBOARD', true);
  const exportMaxMs = readSeconds(env, 'EXPORT_MAX_SECONDS', { min: 1, max: 86_400, defaultSeconds: 300 });
  const rowColumnsMaxBytes = readWholeNumber(env, 'ROW_COLUMNS_MAX_MB', { min: 0, max: 1_048_576, defaultValue: ROW_COLUMNS_DEFAULT_MAX_MB, unit: 'megabytes' }) * MEGABYTE;
  let generatedApiKey: string | null = null;
  if (platform.apiKeys.length === 0 && platform.apiKeysFile === null) {
    generatedApiKey = randomBytes(24).toString('base64url');
    platform.apiKeys = [generatedApiKey];
  }
  return { ...platform, database, cursorSecrets: cursor.secrets, cursorSecretGenerated: cursor.generated, generatedApiKey, showDashboard, exportMaxMs, rowColumnsMaxBytes };
}
