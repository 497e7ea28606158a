import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { timingSafeEqual } from 'node:crypto';
import { DOCS_CSP } from '../../src/platform/docs.js';
import { LogCapture, REPO_ROOT, expectError } from '../support/http.js';
import { SERVICES, type ServiceUnderTest } from './services.js';

/**
 * Security checks (the reliability decisions): API keys never logged, rotation with two keys, constant-time comparison,
 * X-Content-Type-Options on every response, a content security policy on the docs pages that keeps
 * them working offline (every script and style they load is same-origin). Cursor forgery and model
 * file tampering are tested by the requests and houses suites (see docs/reliability-findings.md).
 */
// Every comparison of the platform goes through a spy that still compares (hoisted by Vitest).
vi.mock('node:crypto', async (importOriginal) => {
  const original = await importOriginal<typeof import('node:crypto')>();
  return { ...original, timingSafeEqual: vi.fn(original.timingSafeEqual) };
});

const OLD_KEY = 'rotation-old-key-7f3a9c';
const NEW_KEY = 'rotation-new-key-b81d20';
const WRONG_KEY = 'wrong-key-should-not-appear-5e61';

function protectedInject(service: ServiceUnderTest, key?: string) {
  const { method, url, payload } = service.protectedRequest;
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (key !== undefined) headers['x-api-key'] = key;
  return { method, url, headers, ...(payload === undefined ? {} : { payload: JSON.stringify(payload) }) };
}

describe.each(SERVICES.map((service) => [service.name, service] as const))('%s: security', (_name, service: ServiceUnderTest) => {
  const test = it.skipIf(!service.available);

  test('API keys are never logged: right, wrong, rotated, in every kind of request', async () => {
    const logs = new LogCapture();
    const { app, cleanup } = await service.build(`${OLD_KEY},${NEW_KEY}`, logs);
    try {
      for (const key of [OLD_KEY, NEW_KEY, WRONG_KEY, `${OLD_KEY},${NEW_KEY}`]) {
        await app.inject(protectedInject(service, key));
        await app.inject({ method: 'GET', url: service.keyedGet, headers: { 'x-api-key': key } });
        await app.inject({ method: 'GET', url: `/nowhere?key=${key}`, headers: { 'x-api-key': key } });
        await app.inject({ method: 'DELETE', url: service.protectedRequest.url, headers: { 'x-api-key': key } });
        await app.inject({ method: 'POST', url: service.protectedRequest.url, headers: { 'x-api-key': key, 'content-type': 'application/json' }, payload: '{bad' });
      }
    } finally {
      await app.close();
      await cleanup();
    }
    expect(logs.raw.length).toBeGreaterThan(10);
    const text = logs.text();
    for (const key of [OLD_KEY, NEW_KEY, WRONG_KEY]) expect(text).not.toContain(key);
  });

  test('rotation with two keys: each is accepted, a wrong one, none, or both joined are 401', async () => {
    const { app, cleanup } = await service.build(`${OLD_KEY}, ${NEW_KEY}`);
    try {
      expect((await app.inject(protectedInject(service, OLD_KEY))).statusCode).toBe(200);
      expect((await app.inject(protectedInject(service, NEW_KEY))).statusCode).toBe(200);
      for (const key of [WRONG_KEY, undefined, '', `${OLD_KEY},${NEW_KEY}`, OLD_KEY.toUpperCase(), `${NEW_KEY} `.trim() + 'x']) {
        expectError(await app.inject(protectedInject(service, key)), 401, 'unauthorized', [], 'Missing or invalid API key');
      }
    } finally {
      await app.close();
      await cleanup();
    }
  });

  test('X-Content-Type-Options: nosniff on every kind of response', async () => {
    const { app, cleanup } = await service.build(NEW_KEY);
    try {
      const requests = [
        { method: 'GET' as const, url: '/health' },
        { method: 'GET' as const, url: '/ready' },
        { method: 'GET' as const, url: service.keyedGet, headers: { 'x-api-key': NEW_KEY } },
        protectedInject(service),
        { method: 'GET' as const, url: '/nowhere' },
        { method: 'DELETE' as const, url: '/health' },
        { method: 'GET' as const, url: '/openapi.json' },
        { method: 'GET' as const, url: '/docs' },
        { method: 'GET' as const, url: '/docs/static/swagger-ui.css' },
        { method: 'GET' as const, url: '/redoc' },
        { method: 'GET' as const, url: '/redoc/redoc.standalone.js' },
        { method: 'GET' as const, url: `/v1/service-requests/${'9'.repeat(300)}` },
      ];
      for (const request of requests) {
        const response = await app.inject(request);
        expect(response.headers['x-content-type-options'], `${request.method} ${request.url} (${response.statusCode})`).toBe('nosniff');
      }
    } finally {
      await app.close();
      await cleanup();
    }
  });

  test('ReDoc renders the description with its sanitizer on (the docs pages allow inline scripts)', async () => {
    const { app, cleanup } = await service.build(NEW_KEY);
    try {
      const page = await app.inject({ method: 'GET', url: '/redoc' });
      expect(page.body).toMatch(/<redoc spec-url="\/openapi.json"[^>]* sanitize="true"/);
    } finally {
      await app.close();
      await cleanup();
    }
  });

  test('docs pages: a content security policy of this origin only, and every script and style they load is same-origin', async () => {
    const { app, cleanup } = await service.build(NEW_KEY);
    try {
      for (const url of ['/docs', '/redoc']) {
        let response = await app.inject({ method: 'GET', url });
        if (response.statusCode >= 300 && response.statusCode < 400) response = await app.inject({ method: 'GET', url: String(response.headers.location) });
        expect(response.statusCode, url).toBe(200);
        expect(response.headers['content-security-policy'], url).toBe(DOCS_CSP);
        const references = [...response.body.matchAll(/<(?:script|link|img)\b[^>]*\b(?:src|href)="([^"]+)"/g)].map((match) => match[1]!);
        expect(references.length, url).toBeGreaterThan(0);
        for (const reference of references) {
          expect(reference, `${url} loads ${reference}`).not.toMatch(/^(?:[a-z]+:)?\/\//i);
          const asset = new URL(reference, `http://service${url.endsWith('/') ? url : `${url}/`}`);
          const target = reference.startsWith('/') ? reference : `${url.replace(/\/?$/, '/')}${reference.replace(/^\.\//, '')}`;
          const loaded = await app.inject({ method: 'GET', url: target });
          expect(loaded.statusCode, `${url} -> ${target} (${asset.pathname})`).toBe(200);
          // A script or style must not fetch anything from elsewhere either (no CDN URL in the code that runs first).
          if (/\.css$/.test(target)) expect(loaded.body).not.toMatch(/@import\s+url\(["']?https?:/);
        }
      }
      const initializer = await app.inject({ method: 'GET', url: '/docs/static/swagger-initializer.js' });
      // The initializer points Swagger UI at this service's description, not at a URL elsewhere.
      expect(initializer.body.replace(/\/\/[^\n]*/g, '')).not.toMatch(/["'`]https?:\/\//);
    } finally {
      await app.close();
      await cleanup();
    }
  });
});

describe('docs content security policy', () => {
  it('allows only this origin for scripts, styles, connections, fonts, images and workers; no object, no foreign frame', () => {
    const directives = Object.fromEntries<string[]>(DOCS_CSP.split(';').map((part) => part.trim().split(/\s+/)).map(([name = '', ...values]) => [name, values]));
    expect(directives['default-src']).toEqual(["'self'"]);
    expect(directives['connect-src']).toEqual(["'self'"]);
    expect(directives['object-src']).toEqual(["'none'"]);
    expect(directives['frame-ancestors']).toEqual(["'self'"]);
    for (const values of Object.values(directives)) {
      for (const value of values) expect(value).toMatch(/^('self'|'none'|'unsafe-inline'|data:|blob:)$/);
    }
  });
});

describe('API keys: looked up by their SHA-256, never compared themselves', () => {
  it('the presented key is hashed and its hash looked up (a Map of hashes); the key itself is never compared', () => {
    const source = readFileSync(resolve(REPO_ROOT, 'src/platform/api-keys/key-set.ts'), 'utf8');
    expect(source).toContain('this.byDigest.get(keyDigest(presented))');
    expect(source).not.toMatch(/(?<!typeof )presented\s*[!=]==|[!=]==\s*presented|presented\.(startsWith|endsWith|includes|localeCompare|equals)\(/);
    const text = readFileSync(resolve(REPO_ROOT, 'src/platform/api-keys/key-text.ts'), 'utf8');
    expect(text).toContain("hash('sha256', key, 'hex')");
  });
});

describe('ApiKeyChecker (the metrics key): constant-time comparison', () => {
  it('compares SHA-256 digests with timingSafeEqual, every configured key every time', async () => {
    const spy = vi.mocked(timingSafeEqual);
    // A fresh copy of the checker's module, which imports the spied node:crypto even where another test
    // file of the same worker loaded it first (the fast tier shares modules between files).
    vi.resetModules();
    const { ApiKeyChecker } = await import('../../src/platform/api-key.js');
    {
      const checker = new ApiKeyChecker(['first-key', 'second-key', 'third-key']);
      spy.mockClear();
      expect(checker.accepts('first-key')).toBe(true);
      // No early exit on a match: the three keys are compared.
      expect(spy).toHaveBeenCalledTimes(3);
      for (const [a, b] of spy.mock.calls) {
        expect((a as Buffer).length).toBe(32);
        expect((b as Buffer).length).toBe(32);
      }
      spy.mockClear();
      expect(checker.accepts('x'.repeat(10_000))).toBe(false);
      expect(spy).toHaveBeenCalledTimes(3);
    }
  });

  it('the source compares digests only with timingSafeEqual (no ===, no startsWith on keys)', () => {
    const source = readFileSync(resolve(REPO_ROOT, 'src/platform/api-key.ts'), 'utf8');
    expect(source).toContain("hash('sha256', value, 'buffer')");
    expect(source).toContain('timingSafeEqual(candidate, known)');
    expect(source).not.toMatch(/presented\s*===|===\s*presented|\.startsWith\(|\.equals\(/);
  });
});
