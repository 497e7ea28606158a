import { describe, expect, it } from 'vitest';
import { ApiKeyChecker } from '../../src/platform/api-key.js';
import { isAcceptableRequestId } from '../../src/platform/request-id.js';
import { SettingsError, quoted } from '../../src/platform/setting-readers.js';
import { readAllowedOrigins, readApiKeys, readPlatformSettings } from '../../src/platform/settings.js';

describe('platform settings (conventions.md, "Running" and "Settings shared by all three")', () => {
  it('defaults: the given port, host 127.0.0.1, no keys, no origins, docs on, log level info', () => {
    expect(readPlatformSettings({}, 8001)).toEqual({ port: 8001, host: '127.0.0.1', apiKeys: [], apiKeysFile: null, allowedOrigins: [], showDocs: true, logLevel: 'info', metricsKey: null, rateLimit: null, shutdownGraceMs: 10_000, trustedProxies: [] });
  });

  it('reads PORT, HOST, API_KEY (comma-separated, trimmed), ALLOWED_ORIGINS, SHOW_DOCS, LOG_LEVEL', () => {
    expect(
      readPlatformSettings(
        { PORT: '9000', HOST: '0.0.0.0', API_KEY: ' key-a-0123456789 , key-b-0123456789 ', ALLOWED_ORIGINS: 'https://x.org , http://localhost:3000', SHOW_DOCS: 'false', LOG_LEVEL: 'warn' },
        1,
      ),
    ).toEqual({ port: 9000, host: '0.0.0.0', apiKeys: ['key-a-0123456789', 'key-b-0123456789'], apiKeysFile: null, allowedOrigins: ['https://x.org', 'http://localhost:3000'], showDocs: false, logLevel: 'warn', metricsKey: null, rateLimit: null, shutdownGraceMs: 10_000, trustedProxies: [] });
  });

  it('words are read in any case; PORT 0 picks a free port; HOST takes names and IPv6 addresses', () => {
    const settings = readPlatformSettings({ SHOW_DOCS: 'FALSE', LOG_LEVEL: ' Debug ', PORT: '0', HOST: '::1' }, 1);
    expect(settings).toMatchObject({ showDocs: false, logLevel: 'debug', port: 0, host: '::1' });
    expect(readPlatformSettings({ HOST: 'service-1.internal.example' }, 1).host).toBe('service-1.internal.example');
  });

  it('origins are kept as a browser sends them: lower-case scheme and host, no default port', () => {
    expect(readAllowedOrigins({ ALLOWED_ORIGINS: 'HTTPS://Dashboard.Example.org:443,http://x.org:80,http://[::1]:3000' })).toEqual([
      'https://dashboard.example.org',
      'http://x.org',
      'http://[::1]:3000',
    ]);
  });

  it('ALLOWED_ORIGINS empty or blank means none, as the contract says (the closed state)', () => {
    expect(readAllowedOrigins({ ALLOWED_ORIGINS: '' })).toEqual([]);
    expect(readAllowedOrigins({ ALLOWED_ORIGINS: '  ' })).toEqual([]);
  });

  // Every platform setting, every kind of unusable value: one line naming the variable.
  const INVALID: [variable: string, value: string][] = [
    ['PORT', ''],
    ['PORT', '   '],
    ['PORT', '65536'],
    ['PORT', '-1'],
    ['PORT', '80a'],
    ['PORT', '8e3'],
    ['PORT', '0x50'],
    ['PORT', '1234567'],
    ['PORT', '80\n81'],
    ['HOST', ''],
    ['HOST', ' \t '],
    ['HOST', 'a host'],
    ['HOST', 'http://127.0.0.1'],
    ['HOST', '127.0.0.1:8001'],
    ['HOST', 'host_name'],
    ['HOST', '127.0.0.1\u0000'],
    ['API_KEY', ''],
    ['API_KEY', '   '],
    ['API_KEY', ','],
    ['API_KEY', ' , '],
    ['API_KEY', ',,,'],
    ['API_KEY', 'old,,new'],
    ['API_KEY', 'old,'],
    ['API_KEY', 'same,same'],
    ['API_KEY', 'has space'],
    ['API_KEY', 'tab\tinside'],
    ['API_KEY', 'ключ'],
    // Each key has at least 16 characters; a key of the made form (cs_...) has its checksum.
    ['API_KEY', 'short-key'],
    ['API_KEY', 'long-enough-key-0123,fifteen-chars-0'],
    ['API_KEY', 'cs_000000000000000000000000000000000000'],
    ['API_KEYS_FILE', ''],
    ['API_KEYS_FILE', '/nonexistent/keys.json'],
    ['ALLOWED_ORIGINS', ' , '],
    ['ALLOWED_ORIGINS', '*'],
    ['ALLOWED_ORIGINS', 'https://x.org/path'],
    ['ALLOWED_ORIGINS', 'https://x.org/'],
    ['ALLOWED_ORIGINS', 'x.org'],
    ['ALLOWED_ORIGINS', 'ftp://x.org'],
    ['ALLOWED_ORIGINS', 'https://x.org:70000'],
    ['ALLOWED_ORIGINS', 'https://x.org,https://X.org:443'],
    ['ALLOWED_ORIGINS', 'https://x.org,,https://y.org'],
    ['SHOW_DOCS', ''],
    ['SHOW_DOCS', ' '],
    ['SHOW_DOCS', 'yes'],
    ['SHOW_DOCS', '1'],
    ['LOG_LEVEL', ''],
    ['LOG_LEVEL', '  '],
    ['LOG_LEVEL', 'loud'],
    ['LOG_LEVEL', 'warning'],
    ['LOG_LEVEL', 'info,debug'],
    ['METRICS_KEY', ''],
    ['METRICS_KEY', '  '],
    ['METRICS_KEY', 'short'],
    ['METRICS_KEY', 'a metrics key with spaces'],
    ['RATE_LIMIT', ''],
    ['RATE_LIMIT', ' '],
    ['RATE_LIMIT', '600'],
    ['RATE_LIMIT', '0/minute'],
    ['RATE_LIMIT_REDIS_URL', ''],
    ['RATE_LIMIT_REDIS_URL', 'redis://127.0.0.1:6379'],
  ];
  it.each(INVALID)('%s=%j stops the start with one line naming it', (variable, value) => {
    let error: unknown;
    try {
      readPlatformSettings({ [variable]: value }, 1);
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(SettingsError);
    const message = (error as SettingsError).message;
    expect(message).toMatch(new RegExp(`^Invalid setting ${variable}: \\S`));
    expect(message).not.toMatch(/[\r\n]/);
  });

  it('a key is never quoted in a settings message', () => {
    for (const value of ['secret-key-1-abcdef,secret-key-1-abcdef', 'secret key', 'secret-key-1-abcdef,,x', 'secret-short', 'long-secret-key-0123,secret-short']) {
      expect(() => readApiKeys({ API_KEY: value })).toThrow(SettingsError);
      expect(() => readApiKeys({ API_KEY: value })).not.toThrow(/secret/);
    }
    // METRICS_KEY and RATE_LIMIT_REDIS_URL (which may hold a password) are secrets too.
    for (const env of [{ METRICS_KEY: 'secret-short' }, { METRICS_KEY: 'secret key of the metrics' }, { RATE_LIMIT: '1/second', RATE_LIMIT_REDIS_URL: 'http://user:secret@x' }]) {
      expect(() => readPlatformSettings(env, 1)).toThrow(SettingsError);
      expect(() => readPlatformSettings(env, 1)).not.toThrow(/secret/);
    }
  });

  it('a quoted value stays on one line and short whatever it holds', () => {
    expect(quoted('a\nb\r\u001b[31m')).toBe('"a\\nb\\r\\u001b[31m"');
    expect(quoted('x'.repeat(500)).length).toBeLessThan(100);
  });
});

describe('API_KEY', () => {
  it('each key at least 16 characters, named by its place, never quoted', () => {
    expect(readApiKeys({ API_KEY: 'exactly-16-chars' })).toEqual(['exactly-16-chars']);
    expect(() => readApiKeys({ API_KEY: 'long-enough-key-0123,fifteen-chars-0' })).toThrow(
      'Invalid setting API_KEY: key 2 has 15 characters; each must have at least 16 (for example openssl rand -hex 16)',
    );
  });
});

describe('the metrics key comparison (ApiKeyChecker)', () => {
  it('accepts each configured value and nothing else', () => {
    const checker = new ApiKeyChecker(['old-metrics-key-0123', 'new-metrics-key-0123']);
    expect(checker.accepts('old-metrics-key-0123')).toBe(true);
    expect(checker.accepts('new-metrics-key-0123')).toBe(true);
    for (const wrong of ['', 'old-metrics-key-012', 'old-metrics-key-0123x', 'OLD-METRICS-KEY-0123', undefined, ['old-metrics-key-0123'], 'old-metrics-key-0123,new-metrics-key-0123']) {
      expect(checker.accepts(wrong)).toBe(false);
    }
  });
});

describe('request ids', () => {
  it('1 to 128 characters of [A-Za-z0-9._:-] are acceptable', () => {
    expect(isAcceptableRequestId('a')).toBe(true);
    expect(isAcceptableRequestId('A-z_0.9:x')).toBe(true);
    expect(isAcceptableRequestId('x'.repeat(128))).toBe(true);
    expect(isAcceptableRequestId('')).toBe(false);
    expect(isAcceptableRequestId('x'.repeat(129))).toBe(false);
    expect(isAcceptableRequestId('a b')).toBe(false);
    expect(isAcceptableRequestId('a\r\nX-Evil: 1')).toBe(false);
    expect(isAcceptableRequestId(['a'])).toBe(false);
  });
});
