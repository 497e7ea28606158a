import { describe, expect, it } from 'vitest';
import { ApiKeyChecker } from '../../src/platform/api-key.js';
import { isAcceptableRequestId } from '../../src/platform/request-id.js';
import { readPlatformSettings } from '../../src/platform/settings.js';

describe('platform settings (conventions.md, "Running" and "Settings shared by all three")', () => {
  it('defaults: the given port, host 127.0.0.1, no keys, no origins, docs on', () => {
    expect(readPlatformSettings({}, 8001)).toEqual({ port: 8001, host: '127.0.0.1', apiKeys: [], allowedOrigins: [], showDocs: true, metricsKey: null, rateLimit: null });
  });

  it('reads PORT, HOST, API_KEY (comma-separated, trimmed), ALLOWED_ORIGINS, SHOW_DOCS', () => {
    expect(
      readPlatformSettings({ PORT: '9000', HOST: '0.0.0.0', API_KEY: ' a , b,', ALLOWED_ORIGINS: 'https://x.org , http://localhost:3000', SHOW_DOCS: 'false' }, 1),
    ).toEqual({ port: 9000, host: '0.0.0.0', apiKeys: ['a', 'b'], allowedOrigins: ['https://x.org', 'http://localhost:3000'], showDocs: false, metricsKey: null, rateLimit: null });
  });

  it.each([
    ['PORT', { PORT: '65536' }],
    ['PORT', { PORT: '-1' }],
    ['PORT', { PORT: '80a' }],
    ['ALLOWED_ORIGINS', { ALLOWED_ORIGINS: '*' }],
    ['ALLOWED_ORIGINS', { ALLOWED_ORIGINS: 'https://x.org/path' }],
    ['ALLOWED_ORIGINS', { ALLOWED_ORIGINS: 'x.org' }],
    ['SHOW_DOCS', { SHOW_DOCS: 'yes' }],
    ['API_KEY', { API_KEY: 'has space' }],
  ])('an invalid %s stops the start with a line naming it', (variable, env) => {
    expect(() => readPlatformSettings(env, 1)).toThrow(new RegExp(`^Invalid setting ${variable}: `));
  });
});

describe('API keys', () => {
  it('no key configured: not enforced', () => {
    const checker = new ApiKeyChecker([]);
    expect(checker.enforced).toBe(false);
    expect(checker.accepts(undefined)).toBe(true);
  });

  it('accepts each configured key and nothing else', () => {
    const checker = new ApiKeyChecker(['old', 'new']);
    expect(checker.accepts('old')).toBe(true);
    expect(checker.accepts('new')).toBe(true);
    for (const wrong of ['', 'ol', 'oldx', 'OLD', undefined, ['old'], 'old,new']) expect(checker.accepts(wrong)).toBe(false);
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
