import { describe, expect, it } from 'vitest';
import { expectError, LogCapture } from '../support/http.js';
import { buildFixtureApp, house, postJson } from './support.js';
import { appDuringSuite } from '../support/during-suite.js';

/** house-prices.md "Authentication", rule 1 (413 before validation), and the 404 of the error table. */
describe('API keys (two keys, for rotation)', () => {
  const app = appDuringSuite(() => buildFixtureApp({ API_KEY: 'first-key-0123456789,second-key-012345678' }));

  for (const url of ['/v1/estimates', '/v1/estimates/batch']) {
    const body = url.endsWith('batch') ? { houses: [house()] } : house();
    it(`POST ${url} without a key is 401 unauthorized`, async () => {
      expectError(await postJson(app, url, body), 401, 'unauthorized', [], 'Missing or invalid API key');
    });
    it(`POST ${url} with a wrong key is 401`, async () => {
      expectError(await postJson(app, url, body, { 'x-api-key': 'third-key' }), 401, 'unauthorized', [], 'Missing or invalid API key');
    });
    it(`POST ${url} accepts either key`, async () => {
      expect((await postJson(app, url, body, { 'x-api-key': 'first-key-0123456789' })).statusCode).toBe(200);
      expect((await postJson(app, url, body, { 'x-api-key': 'second-key-012345678' })).statusCode).toBe(200);
    });
  }
  it('the key is checked before the body: an invalid body without key is 401', async () => {
    expectError(await postJson(app, '/v1/estimates', { nonsense: true }), 401, 'unauthorized', []);
  });
  for (const url of ['/v1/model', '/health', '/ready']) {
    it(`GET ${url} needs no key`, async () => {
      expect((await app.inject({ url })).statusCode).toBe(200);
    });
  }
});

describe('no API_KEY set', () => {
  it('enforces no key and logs a warning at start', async () => {
    const logs = new LogCapture();
    const app = await buildFixtureApp({}, { logStream: logs });
    expect((await postJson(app, '/v1/estimates', house())).statusCode).toBe(200);
    expect(logs.lines().some((line) => line.level === 40 && String(line.msg).includes('API_KEY is not set'))).toBe(true);
    await app.close();
  });
});

describe('body size (64 KiB), checked before validation', () => {
  const app = appDuringSuite(() => buildFixtureApp({ API_KEY: 'houses-limits-key-01' }));
  const padding = 'x'.repeat(70_000);

  it('an oversized house with unknown fields is 413 body_too_large, not 422', async () => {
    const response = await postJson(app, '/v1/estimates', house({ unknown_field: padding, another: 1 }), { 'x-api-key': 'houses-limits-key-01' });
    expectError(response, 413, 'body_too_large', []);
  });
  it('an oversized batch with unknown fields is 413', async () => {
    const response = await postJson(app, '/v1/estimates/batch', { houses: [house({ notes: padding })], extra: true }, { 'x-api-key': 'houses-limits-key-01' });
    expectError(response, 413, 'body_too_large', []);
  });
  it('a batch of 100 houses fits under the limit', async () => {
    const response = await postJson(app, '/v1/estimates/batch', { houses: Array.from({ length: 100 }, () => house()) }, { 'x-api-key': 'houses-limits-key-01' });
    expect(response.statusCode).toBe(200);
  });
});

describe('CORS (ALLOWED_ORIGINS)', () => {
  it('a preflight from a listed origin is 200 with X-API-Key allowed; another origin is 400', async () => {
    const app = await buildFixtureApp({ ALLOWED_ORIGINS: 'https://agent.example.org' });
    const preflight = (origin: string) =>
      app.inject({ method: 'OPTIONS', url: '/v1/estimates', headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type, x-api-key' } });
    const allowed = await preflight('https://agent.example.org');
    expect(allowed.statusCode).toBe(200);
    expect(allowed.headers['access-control-allow-origin']).toBe('https://agent.example.org');
    expect(String(allowed.headers['access-control-allow-headers'])).toContain('X-API-Key');
    const refused = await preflight('https://other.example.org');
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toBe('Disallowed CORS origin');
    await app.close();
  });
});

describe('other answers', () => {
  const app = appDuringSuite(() => buildFixtureApp());
  it('an unknown path is 404 not_found with message Not Found', async () => {
    expectError(await app.inject({ url: '/v1/nothing' }), 404, 'not_found', [], 'Not Found');
  });
  it('GET on an estimate path is 405 with Allow', async () => {
    const response = await app.inject({ url: '/v1/estimates' });
    expectError(response, 405, 'method_not_allowed', []);
    expect(response.headers.allow).toBe('POST');
  });
  it('the error request_id equals a kept incoming X-Request-ID', async () => {
    const response = await postJson(app, '/v1/estimates', house({ grade: 14 }), { 'x-request-id': 'client-id-42' });
    expectError(response, 422, 'invalid_request', ['grade']);
    expect(response.headers['x-request-id']).toBe('client-id-42');
  });
  it('every response has an X-Request-ID header', async () => {
    for (const response of [
      await postJson(app, '/v1/estimates', house()),
      await postJson(app, '/v1/estimates/batch', { houses: [house()] }),
      await app.inject({ url: '/v1/model' }),
      await app.inject({ url: '/health' }),
      await app.inject({ url: '/ready' }),
    ]) {
      expect(response.statusCode).toBe(200);
      expect(response.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    }
  });
  it('a body that is not JSON by Content-Type is 415', async () => {
    const response = await app.inject({ method: 'POST', url: '/v1/estimates', headers: { 'content-type': 'text/plain' }, payload: JSON.stringify(house()) });
    expectError(response, 415, 'unsupported_media_type', ['Content-Type']);
  });
  it('/health answers ok and /ready answers ready', async () => {
    expect((await app.inject({ url: '/health' })).json()).toEqual({ status: 'ok' });
    const ready = await app.inject({ url: '/ready' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({ status: 'ready' });
  });
});
