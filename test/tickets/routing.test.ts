import { describe, expect, it } from 'vitest';
import { isAcceptableRequestId } from '../../src/platform/request-id.js';
import { expectError } from '../support/http.js';
import { startTickets } from './tickets-app.js';
import { appDuringSuite } from '../support/during-suite.js';

/** ticket-classifier.md, "Endpoints" and "Other requirements"; conventions.md, "Every response". */
describe('routing', () => {
  const app = appDuringSuite(async () => (await startTickets()).app);

  it('GET /health answers 200 status ok', async () => {
    const response = await app.inject({ method: 'GET', url: '/health' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ status: 'ok' });
  });

  it('GET /ready answers 200 status ready', async () => {
    const response = await app.inject({ method: 'GET', url: '/ready' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ status: 'ready' });
  });

  it('GET /v1/categories answers the categories in order', async () => {
    const response = await app.inject({ method: 'GET', url: '/v1/categories' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ categories: ['billing', 'login', 'shipping', 'account', 'other'] });
  });

  it('GET /v1/categories ignores unknown query parameters', async () => {
    const response = await app.inject({ method: 'GET', url: '/v1/categories?foo=bar&limit=3' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ categories: ['billing', 'login', 'shipping', 'account', 'other'] });
  });

  it('GET /v1/classify answers 405 method_not_allowed with Allow: POST', async () => {
    const response = await app.inject({ method: 'GET', url: '/v1/classify' });
    expectError(response, 405, 'method_not_allowed', [], 'Method Not Allowed');
    expect(response.headers.allow).toBe('POST');
  });

  it('POST /v1/categories answers 405 with Allow: GET, HEAD', async () => {
    const response = await app.inject({ method: 'POST', url: '/v1/categories', payload: {} });
    expectError(response, 405, 'method_not_allowed', []);
    expect(response.headers.allow).toBe('GET, HEAD');
  });

  it('DELETE /health answers 405', async () => {
    expectError(await app.inject({ method: 'DELETE', url: '/health' }), 405, 'method_not_allowed', []);
  });

  it('GET /v1/category answers 404 not_found', async () => {
    expectError(await app.inject({ method: 'GET', url: '/v1/category' }), 404, 'not_found', [], 'Not Found');
  });

  it('the unversioned path POST /classify answers 404', async () => {
    expectError(await app.inject({ method: 'POST', url: '/classify', payload: { subject: 'x' } }), 404, 'not_found', [], 'Not Found');
  });

  it('a trailing slash is another path: POST /v1/classify/ answers 404', async () => {
    expectError(await app.inject({ method: 'POST', url: '/v1/classify/', payload: { subject: 'x' } }), 404, 'not_found', []);
  });

  describe('X-Request-ID', () => {
    it('is on every response, success and error alike', async () => {
      for (const request of [
        { method: 'GET', url: '/health' },
        { method: 'GET', url: '/nope' },
        { method: 'GET', url: '/v1/classify' },
        { method: 'POST', url: '/v1/classify', payload: { subject: '' } },
        { method: 'POST', url: '/v1/classify', payload: { subject: 'x'.repeat(70_000) } },
      ] as const) {
        const response = await app.inject(request);
        expect(isAcceptableRequestId(response.headers['x-request-id']), `${request.method} ${request.url}`).toBe(true);
      }
    });

    it('a well-formed incoming id is kept, and is the error object request_id', async () => {
      const id = 'client-abc.123:XYZ_-';
      const response = await app.inject({ method: 'POST', url: '/v1/classify', headers: { 'x-request-id': id }, payload: {} });
      expect(response.headers['x-request-id']).toBe(id);
      expect(response.json().error.request_id).toBe(id);
    });

    it('an id of 128 characters is kept; 129 characters is replaced by a UUID v4', async () => {
      const kept = await app.inject({ method: 'GET', url: '/health', headers: { 'x-request-id': 'a'.repeat(128) } });
      expect(kept.headers['x-request-id']).toBe('a'.repeat(128));
      const replaced = await app.inject({ method: 'GET', url: '/health', headers: { 'x-request-id': 'a'.repeat(129) } });
      expect(replaced.headers['x-request-id']).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    });

    it('an id with other characters (header injection, spaces) is replaced by a UUID v4', async () => {
      for (const bad of ['has space', 'semi;colon', '<script>', 'x\u00e9']) {
        const response = await app.inject({ method: 'GET', url: '/health', headers: { 'x-request-id': bad } });
        expect(response.headers['x-request-id']).not.toBe(bad);
        expect(response.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
      }
    });

    it('each request without an id gets a new one', async () => {
      const a = await app.inject({ method: 'GET', url: '/health' });
      const b = await app.inject({ method: 'GET', url: '/health' });
      expect(a.headers['x-request-id']).not.toBe(b.headers['x-request-id']);
    });
  });

  it('responses carry X-Content-Type-Options: nosniff', async () => {
    expect((await app.inject({ method: 'GET', url: '/health' })).headers['x-content-type-options']).toBe('nosniff');
  });
});
