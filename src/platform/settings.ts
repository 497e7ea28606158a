/**
 * Reading the settings that all three services share (conventions.md, "Settings shared by all three").
 * A setting with an invalid value throws a SettingsError whose message is one clear line naming the
 * variable; the start command prints it and exits 1.
 */

import { readMetricsKey } from './metrics.js';
import { readRateLimit, type RateLimitSettings } from './rate-limit.js';

export type Env = Record<string, string | undefined>;

export class SettingsError extends Error {
  constructor(
    readonly variable: string,
    detail: string,
  ) {
    super(`Invalid setting ${variable}: ${detail}`);
    this.name = 'SettingsError';
  }
}

export interface PlatformSettings {
  port: number;
  host: string;
  /** Accepted API keys (several for rotation). Empty: no key configured. */
  apiKeys: string[];
  /** Exact origins allowed to call the service from a browser. Empty: CORS off. */
  allowedOrigins: string[];
  showDocs: boolean;
  /** METRICS_KEY: GET /metrics answers a scrape with this bearer key; null: no /metrics (metrics.ts). */
  metricsKey?: string | null;
  /** RATE_LIMIT and RATE_LIMIT_REDIS_URL; null: no limit (rate-limit.ts). */
  rateLimit?: RateLimitSettings | null;
}

/** Splits a comma-separated list, trimming spaces and dropping empty items. */
export function readList(value: string | undefined): string[] {
  if (value === undefined) return [];
  return value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item.length > 0);
}

export function readPort(env: Env, defaultPort: number): number {
  const raw = env.PORT;
  if (raw === undefined || raw.trim() === '') return defaultPort;
  const trimmed = raw.trim();
  if (!/^\d+$/.test(trimmed)) throw new SettingsError('PORT', `"${raw}" is not a port number (0 to 65535)`);
  const port = Number(trimmed);
  if (port > 65535) throw new SettingsError('PORT', `"${raw}" is not a port number (0 to 65535)`);
  return port;
}

export function readHost(env: Env): string {
  const raw = env.HOST;
  if (raw === undefined || raw.trim() === '') return '127.0.0.1';
  const host = raw.trim();
  if (/\s/.test(host)) throw new SettingsError('HOST', `"${raw}" is not a host name or address`);
  return host;
}

export function readApiKeys(env: Env): string[] {
  const keys = readList(env.API_KEY);
  for (const key of keys) {
    // Header values cannot carry control characters; such a key could never be sent.
    if (!/^[\x21-\x7e]+$/.test(key)) {
      throw new SettingsError('API_KEY', 'keys must be printable ASCII without spaces (separate several keys by commas)');
    }
  }
  return keys;
}

/** An origin is scheme://host[:port] with nothing after it, exactly as a browser sends it. */
const ORIGIN_PATTERN = /^https?:\/\/(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(:\d{1,5})?$/;

export function readAllowedOrigins(env: Env): string[] {
  const origins = readList(env.ALLOWED_ORIGINS);
  for (const origin of origins) {
    if (origin === '*') {
      throw new SettingsError('ALLOWED_ORIGINS', 'the wildcard origin "*" is not allowed; list exact origins');
    }
    if (!ORIGIN_PATTERN.test(origin)) {
      throw new SettingsError(
        'ALLOWED_ORIGINS',
        `"${origin}" is not an origin of the form scheme://host[:port] (for example https://dashboard.example.org)`,
      );
    }
  }
  return origins;
}

export function readBoolean(env: Env, variable: string, defaultValue: boolean): boolean {
  const raw = env[variable];
  if (raw === undefined || raw.trim() === '') return defaultValue;
  const value = raw.trim().toLowerCase();
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw new SettingsError(variable, `"${raw}" must be true or false`);
}

export function readPlatformSettings(env: Env, defaultPort: number): PlatformSettings {
  return {
    port: readPort(env, defaultPort),
    host: readHost(env),
    apiKeys: readApiKeys(env),
    allowedOrigins: readAllowedOrigins(env),
    showDocs: readBoolean(env, 'SHOW_DOCS', true),
    metricsKey: readMetricsKey(env),
    rateLimit: readRateLimit(env),
  };
}
