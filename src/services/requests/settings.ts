import { randomBytes } from 'node:crypto';
import { isAbsolute, resolve } from 'node:path';
import { defaultSnapshotPath } from '../../ingest/nyc311/index.js';
import { SettingsError, readPlatformSettings, type Env, type PlatformSettings } from '../../platform/settings.js';
import { PostgresSchemaNameError, isPostgresUrl, parsePostgresTarget } from '../../shared/postgres-schema.js';

export const REQUESTS_DEFAULT_PORT = 8003;

/** A CURSOR_SECRET shorter than this is refused: a short key makes forged cursors guessable. */
export const CURSOR_SECRET_MIN_LENGTH = 16;

export type DatabaseLocation =
  | { kind: 'sqlite'; path: string; isDefault: boolean }
  /** `schema`: the PostgreSQL schema holding the snapshot tables (`?schema=` in the URL, default public, as the loader). */
  | { kind: 'postgres'; url: string; schema: string };

export interface RequestSettings extends PlatformSettings {
  database: DatabaseLocation;
  /** Key of the cursors' HMAC. */
  cursorSecret: Buffer;
  /** True when CURSOR_SECRET was unset and a random key was made at start. */
  cursorSecretGenerated: boolean;
  /** Set when API_KEY was unset: the random key made at start, to be printed once by the start command. */
  generatedApiKey: string | null;
}

/**
 * DATABASE_URL: unset means the embedded SQLite snapshot; `postgres://` or `postgresql://` a
 * PostgreSQL database (an optional `schema` query parameter names the schema of the tables);
 * anything else is a SQLite file path (relative to the working directory).
 */
export function readDatabaseLocation(env: Env): DatabaseLocation {
  const raw = env.DATABASE_URL;
  if (raw === undefined || raw.trim() === '') return { kind: 'sqlite', path: defaultSnapshotPath(), isDefault: true };
  const value = raw.trim();
  if (isPostgresUrl(value)) {
    try {
      const target = parsePostgresTarget(value);
      return { kind: 'postgres', url: target.connectionString, schema: target.schema };
    } catch (error) {
      if (error instanceof PostgresSchemaNameError) {
        throw new SettingsError('DATABASE_URL', `schema "${error.schema}" is not a plain identifier (letters, digits, _)`);
      }
      throw new SettingsError('DATABASE_URL', 'not a valid postgres:// URL');
    }
  }
  if (/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(value)) {
    throw new SettingsError('DATABASE_URL', 'must be a SQLite file path or a postgres:// URL');
  }
  return { kind: 'sqlite', path: isAbsolute(value) ? value : resolve(process.cwd(), value), isDefault: false };
}

export function readCursorSecret(env: Env): { secret: Buffer; generated: boolean } {
  const raw = env.CURSOR_SECRET;
  if (raw === undefined || raw === '') return { secret: randomBytes(32), generated: true };
  if (raw.length < CURSOR_SECRET_MIN_LENGTH) {
    throw new SettingsError('CURSOR_SECRET', `must be at least ${CURSOR_SECRET_MIN_LENGTH} characters`);
  }
  return { secret: Buffer.from(raw, 'utf8'), generated: false };
}

/**
 * The settings of the service-request API. Every /v1 path needs a key: with API_KEY unset a random
 * key is made here (the start command prints it once), so that the data is never open by accident.
 */
export function readRequestSettings(env: Env): RequestSettings {
  const platform = readPlatformSettings(env, REQUESTS_DEFAULT_PORT);
  const database = readDatabaseLocation(env);
  const cursor = readCursorSecret(env);
  let generatedApiKey: string | null = null;
  if (platform.apiKeys.length === 0) {
    generatedApiKey = randomBytes(24).toString('base64url');
    platform.apiKeys = [generatedApiKey];
  }
  return { ...platform, database, cursorSecret: cursor.secret, cursorSecretGenerated: cursor.generated, generatedApiKey };
}
