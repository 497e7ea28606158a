import { isIP } from 'node:net';
import { isAbsolute, resolve } from 'node:path';
import { KeyFileError, readKeyFileSync } from './api-keys/key-file.js';
import type { KeyFileSource } from './api-keys/key-file-watch.js';
import { checksumFails } from './api-keys/key-text.js';
import { SettingsError, quoted, readBoolean, readChoice, readList, readSecretList, readSeconds, readText, type Env, type SettingShape } from './setting-readers.js';
import { readMetricsKey } from './metrics.js';
import { readRateLimit, type RateLimitSettings } from './rate-limit.js';

/**
 * The settings every service shares (conventions.md, "Running" and "Settings shared by all three"),
 * read with the fail-closed primitives of setting-readers.ts.
 *
 * Rules shared by every setting (README, "Settings"):
 * - unset means the default; set to an empty or blank value is refused (`API_KEY=` is far more
 *   often a variable that failed to expand than a wish for the default), except ALLOWED_ORIGINS,
 *   whose contract says "empty or unset means none";
 * - spaces around the value, and around each item of a list, are ignored;
 * - a list is comma-separated; an empty item (`a,,b`, `a,`) and a repeated item are refused;
 * - words (`true`, `warn`, `unavailable`) are read in any case;
 * - a value is quoted in the message (JSON-escaped, so the message stays one line) unless it is a
 *   secret: keys, cursor secrets and database URLs are never echoed.
 */

const PORT_SHAPE: SettingShape = { expected: 'a port number (0 to 65535; 0 picks a free port)' };

/** A TCP port, 0 to 65535 in decimal digits; undefined when unset. `variable`: PORT, or TICKETS_PORT... for npm start. */
export function readOptionalPort(env: Env, variable: string): number | undefined {
  const value = readText(env, variable, PORT_SHAPE);
  if (value === undefined) return undefined;
  if (!/^[0-9]{1,5}$/.test(value) || Number(value) > 65535) {
    throw new SettingsError(variable, `${quoted(value)} is not ${PORT_SHAPE.expected}`);
  }
  return Number(value);
}

export function readPort(env: Env, defaultPort: number, variable = 'PORT'): number {
  return readOptionalPort(env, variable) ?? defaultPort;
}

const HOST_SHAPE: SettingShape = { expected: 'an IP address or a host name (0.0.0.0 listens on every interface)' };
/** A DNS host name: labels of letters, digits and inner hyphens, separated by dots, at most 253 characters. */
const HOST_NAME = /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$/;

export function readHost(env: Env): string {
  const value = readText(env, 'HOST', HOST_SHAPE);
  if (value === undefined) return '127.0.0.1';
  if (isIP(value) === 0 && !HOST_NAME.test(value)) {
    throw new SettingsError('HOST', `${quoted(value)} is not ${HOST_SHAPE.expected} (no scheme, port or path)`);
  }
  return value;
}

/**
 * Each key of API_KEY shorter than this is refused: 16 characters of any random text are 64 bits or
 * more, as METRICS_KEY (the keys `npm run keys` makes have 178 random bits).
 */
export const API_KEY_MIN_LENGTH = 16;

/** API_KEY: unset means none configured (the service decides what that means). */
export function readApiKeys(env: Env): string[] {
  // A key with a control character or an inner space could never be sent in a header.
  const keys = readSecretList(env, 'API_KEY', { expected: `one or more keys of at least ${API_KEY_MIN_LENGTH} characters, separated by commas`, item: 'key' }) ?? [];
  keys.forEach((key, index) => {
    if (key.length < API_KEY_MIN_LENGTH) {
      throw new SettingsError('API_KEY', `key ${index + 1} has ${key.length} characters; each must have at least ${API_KEY_MIN_LENGTH} (for example openssl rand -hex 16)`);
    }
    // It would be refused as mistyped at every request (api-keys/key-set.ts).
    if (checksumFails(key)) throw new SettingsError('API_KEY', `key ${index + 1} has the form of a key made by npm run keys (cs_...) but not its checksum: it is mistyped`);
  });
  return keys;
}

/**
 * API_KEYS_FILE: the key file (api-keys/key-file.ts), read and checked now: a file that cannot be
 * read or does not parse stops the start. Unset: none. Relative to the working directory.
 */
export function readApiKeysFile(env: Env): KeyFileSource | null {
  const value = readText(env, 'API_KEYS_FILE', { expected: 'the path of a key file (npm run keys -- create makes one)' });
  if (value === undefined) return null;
  const path = isAbsolute(value) ? value : resolve(process.cwd(), value);
  try {
    return { path, initial: readKeyFileSync(path) };
  } catch (error) {
    if (error instanceof KeyFileError) throw new SettingsError('API_KEYS_FILE', `${quoted(value)}: ${error.message}`);
    throw error;
  }
}

/** An origin is scheme://host[:port] with nothing after it, exactly as a browser sends it. */
const ORIGIN_PATTERN = /^(https?):\/\/(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(?::([0-9]{1,5}))?$/i;
const DEFAULT_PORTS: Record<string, string> = { http: '80', https: '443' };

/**
 * ALLOWED_ORIGINS: exact origins; empty, blank or unset means none. Written the way a browser sends them (lower-case scheme and host,
 * no default port), so that `https://Dashboard.example.org:443` matches the `Origin` the browser sends.
 */
export function readAllowedOrigins(env: Env): string[] {
  // The one setting where empty is a value: the contract says "empty or unset means none"
  // (ticket-classifier.md), and none is the closed state (no browser origin is allowed).
  if (env.ALLOWED_ORIGINS?.trim() === '') return [];
  const expected = 'exact origins of the form scheme://host[:port], separated by commas';
  const origins = readList(env, 'ALLOWED_ORIGINS', { expected, item: 'origin' });
  if (origins === undefined) return [];
  const normalized = origins.map((origin) => {
    if (origin === '*') {
      throw new SettingsError('ALLOWED_ORIGINS', 'the wildcard origin "*" is not allowed; list exact origins');
    }
    const parts = ORIGIN_PATTERN.exec(origin);
    if (!parts || (parts[3] !== undefined && Number(parts[3]) > 65535)) {
      throw new SettingsError(
        'ALLOWED_ORIGINS',
        `${quoted(origin)} is not an origin of the form scheme://host[:port] (for example https://dashboard.example.org)`,
      );
    }
    const scheme = (parts[1] as string).toLowerCase();
    const host = (parts[2] as string).toLowerCase();
    const port = parts[3] === undefined || parts[3] === DEFAULT_PORTS[scheme] ? '' : `:${Number(parts[3])}`;
    return `${scheme}://${host}${port}`;
  });
  normalized.forEach((origin, index) => {
    const first = normalized.indexOf(origin);
    if (first !== index) throw new SettingsError('ALLOWED_ORIGINS', `origin ${index + 1} is the same origin as origin ${first + 1}; give each once`);
  });
  return normalized;
}

const TRUSTED_PROXIES_SHAPE = { expected: 'IP addresses or CIDR ranges of the proxies in front of the service, separated by commas', item: 'proxy' };

/**
 * TRUSTED_PROXIES: the addresses (or CIDR ranges) of the proxies whose `X-Forwarded-For` is believed.
 * Unset: none, the client is the address that connected (a header a client writes itself could name
 * any address, and so escape its rate limit). Set: a request from one of them is the client's the
 * header names, read from its right end back to the first address that is not a trusted proxy.
 * A range that holds every address (`0.0.0.0/0`, `::/0`) is refused: it would trust any client.
 */
export function readTrustedProxies(env: Env): string[] {
  const items = readList(env, 'TRUSTED_PROXIES', TRUSTED_PROXIES_SHAPE) ?? [];
  items.forEach((item, index) => {
    const [address = '', prefix, ...rest] = item.split('/');
    const version = isIP(address);
    const bits = version === 4 ? 32 : 128;
    const prefixOk = prefix === undefined || (/^[0-9]{1,3}$/.test(prefix) && Number(prefix) <= bits);
    if (version === 0 || rest.length > 0 || !prefixOk) {
      throw new SettingsError('TRUSTED_PROXIES', `proxy ${index + 1}, ${quoted(item)}, is not an IP address or a CIDR range (such as 10.0.0.5 or 10.0.0.0/24)`);
    }
    if (prefix !== undefined && Number(prefix) === 0) {
      throw new SettingsError('TRUSTED_PROXIES', `proxy ${index + 1}, ${quoted(item)}, holds every address: any client could name its own address; list the proxies' addresses`);
    }
  });
  return items;
}

/**
 * SHUTDOWN_GRACE_SECONDS (default 10, under Kubernetes' 30 s): after SIGTERM, what finishes within
 * this time finishes; then the connections still open are cut and the process exits (server.ts).
 */
export function readShutdownGrace(env: Env): number {
  return readSeconds(env, 'SHUTDOWN_GRACE_SECONDS', { min: 0, max: 3600, defaultSeconds: SHUTDOWN_GRACE_DEFAULT_MS / 1_000 });
}

export const SHUTDOWN_GRACE_DEFAULT_MS = 10_000;

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export function readLogLevel(env: Env): LogLevel {
  return readChoice(env, 'LOG_LEVEL', LOG_LEVELS, 'info');
}

export interface PlatformSettings {
  port: number;
  host: string;
  /** Accepted API keys (several for rotation), the anonymous keys. Empty: none configured. */
  apiKeys: string[];
  /** API_KEYS_FILE and its keys as read at start; null: no key file. */
  apiKeysFile: KeyFileSource | null;
  /** Exact origins allowed to call the service from a browser. Empty: CORS off. */
  allowedOrigins: string[];
  showDocs: boolean;
  /** pino level of the service's log. */
  logLevel: LogLevel;
  /** METRICS_KEY: GET /metrics answers a scrape with this bearer key; null: no /metrics (metrics.ts). */
  metricsKey?: string | null;
  /** RATE_LIMIT and RATE_LIMIT_REDIS_URL; null: no limit (rate-limit.ts). */
  rateLimit?: RateLimitSettings | null;
  /** SHUTDOWN_GRACE_SECONDS in milliseconds (server.ts); unset here: the default. */
  shutdownGraceMs?: number;
  /** TRUSTED_PROXIES: whose X-Forwarded-For names the client (rate limits, logs); empty or unset here: none. */
  trustedProxies?: string[];
}

export function readPlatformSettings(env: Env, defaultPort: number): PlatformSettings {
  return {
    port: readPort(env, defaultPort),
    host: readHost(env),
    apiKeys: readApiKeys(env),
    apiKeysFile: readApiKeysFile(env),
    allowedOrigins: readAllowedOrigins(env),
    showDocs: readBoolean(env, 'SHOW_DOCS', true),
    logLevel: readLogLevel(env),
    metricsKey: readMetricsKey(env),
    rateLimit: readRateLimit(env),
    shutdownGraceMs: readShutdownGrace(env),
    trustedProxies: readTrustedProxies(env),
  };
}
