import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SettingsError, readBoolean, readPlatformSettings, type Env, type PlatformSettings } from '../../platform/settings.js';

export const REQUESTS_DEFAULT_PORT = 8003;

/** The embedded snapshot, relative to the repository root. */
export const DEFAULT_SNAPSHOT_RELATIVE_PATH = 'data/service-requests.sqlite';

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
  /** SHOW_DASHBOARD (default true): false turns off /dashboard and its files (404). */
  showDashboard: boolean;
}

/** The repository root: the nearest folder above this file holding package.json (works from src/ and dist/src/). */
export function repositoryRoot(): string {
  let folder = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(folder, 'package.json'))) return folder;
    const parent = dirname(folder);
    if (parent === folder) return process.cwd();
    folder = parent;
  }
}

export function defaultSnapshotPath(): string {
  return resolve(repositoryRoot(), DEFAULT_SNAPSHOT_RELATIVE_PATH);
}

export const DEFAULT_POSTGRES_SCHEMA = 'public';
const SCHEMA_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/**
 * DATABASE_URL: unset means the embedded SQLite snapshot; `postgres://` or `postgresql://` a
 * PostgreSQL database (an optional `schema` query parameter names the schema of the tables);
 * anything else is a SQLite file path (relative to the working directory).
 */
export function readDatabaseLocation(env: Env): DatabaseLocation {
  const raw = env.DATABASE_URL;
  if (raw === undefined || raw.trim() === '') return { kind: 'sqlite', path: defaultSnapshotPath(), isDefault: true };
  const value = raw.trim();
  if (/^postgres(ql)?:\/\//i.test(value)) {
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      throw new SettingsError('DATABASE_URL', 'not a valid postgres:// URL');
    }
    const schema = url.searchParams.get('schema');
    if (schema !== null && !SCHEMA_NAME.test(schema)) {
      throw new SettingsError('DATABASE_URL', `schema "${schema}" is not a plain identifier (letters, digits, _)`);
    }
    url.searchParams.delete('schema');
    return { kind: 'postgres', url: url.toString(), schema: schema ?? DEFAULT_POSTGRES_SCHEMA };
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
  const showDashboard = readBoolean(env, 'SHOW_DASHBOARD', true);
  let generatedApiKey: string | null = null;
  if (platform.apiKeys.length === 0) {
    generatedApiKey = randomBytes(24).toString('base64url');
    platform.apiKeys = [generatedApiKey];
  }
  return { ...platform, database, cursorSecret: cursor.secret, cursorSecretGenerated: cursor.generated, generatedApiKey, showDashboard };
}
