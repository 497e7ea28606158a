import { describe, expect, it } from 'vitest';
import { expectError } from '../support/http.js';
import { KEY, startTickets } from './tickets-app.js';

const preflight = (origin: string) => ({
  method: 'OPTIONS' as const,
  url: '/v1/classify',
  headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
});

/** ticket-classifier.md, "Browser access (CORS)", one test per row of the table. */
describe('CORS', () => {
  it('ALLOWED_ORIGINS unset; preflight OPTIONS /v1/classify answers 405', async () => {
    const { app } = await startTickets({});
    const response = await app.inject(preflight('https://app.example.com'));
    expectError(response, 405, 'method_not_allowed', []);
    expect(response.headers['access-control-allow-origin']).toBeUndefined();
    await app.close();
  });

  it('ALLOWED_ORIGINS empty; preflight answers 405', async () => {
    const { app } = await startTickets({ ALLOWED_ORIGINS: '' });
    expectError(await app.inject(preflight('https://app.example.com')), 405, 'method_not_allowed', []);
    await app.close();
  });

  it('preflight from an origin in the list answers 200 with Access-Control-Allow-Origin set to that origin', async () => {
    const { app } = await startTickets({ ALLOWED_ORIGINS: 'https://app.example.com, http://localhost:3000' });
    for (const origin of ['https://app.example.com', 'http://localhost:3000']) {
      const response = await app.inject(preflight(origin));
      expect(response.statusCode).toBe(200);
      expect(response.headers['access-control-allow-origin']).toBe(origin);
      expect(response.headers['access-control-allow-methods']).toBe('GET, POST');
      expect(response.headers['access-control-allow-headers']).toBe('Content-Type, X-API-Key');
      expect(response.headers.vary).toContain('Origin');
      expect(response.headers['x-request-id']).toBeDefined();
    }
    await app.close();
  });

  it('preflight from an origin not in the list answers 400 plain text "Disallowed CORS origin", no allow-origin', async () => {
    const { app } = await startTickets({ ALLOWED_ORIGINS: 'https://app.example.com' });
    for (const origin of ['https://evil.example.com', 'https://app.example.com:8443', 'http://app.example.com', 'https://APP.example.com', 'null']) {
      const response = await app.inject(preflight(origin));
      expect(response.statusCode, origin).toBe(400);
      expect(response.body).toBe('Disallowed CORS origin');
      expect(response.headers['content-type']).toMatch(/^text\/plain/);
      expect(response.headers['access-control-allow-origin']).toBeUndefined();
      expect(response.headers['x-request-id']).toBeDefined();
    }
    await app.close();
  });

  it('real request from any client with any Origin is processed normally', async () => {
    const { app } = await startTickets({ ALLOWED_ORIGINS: 'https://app.example.com', API_KEY: KEY });
    const foreign = await app.inject({ method: 'POST', url: '/v1/classify', headers: { origin: 'https://evil.example.com', 'x-api-key': KEY }, payload: { subject: 'refund' } });
    expect(foreign.statusCode).toBe(200);
    expect(foreign.headers['access-control-allow-origin']).toBeUndefined();
    const listed = await app.inject({ method: 'POST', url: '/v1/classify', headers: { origin: 'https://app.example.com', 'x-api-key': KEY }, payload: { subject: 'refund' } });
    expect(listed.statusCode).toBe(200);
    expect(listed.headers['access-control-allow-origin']).toBe('https://app.example.com');
    await app.close();
  });

  it('CORS is not authentication: a listed origin still needs the key', async () => {
    const { app } = await startTickets({ ALLOWED_ORIGINS: 'https://app.example.com', API_KEY: KEY });
    const response = await app.inject({ method: 'POST', url: '/v1/classify', headers: { origin: 'https://app.example.com' }, payload: { subject: 'refund' } });
    expectError(response, 401, 'unauthorized', [], 'Missing or invalid API key');
    await app.close();
  });

  it('origins are matched exactly after trimming spaces; the wildcard is never used', async () => {
    const { app } = await startTickets({ ALLOWED_ORIGINS: '  https://a.example.com  ,https://b.example.com ' });
    expect((await app.inject(preflight('https://b.example.com'))).headers['access-control-allow-origin']).toBe('https://b.example.com');
    expect((await app.inject(preflight('https://a.example.com/'))).statusCode).toBe(400);
    await app.close();
    await expect(startTickets({ ALLOWED_ORIGINS: '*' })).rejects.toThrow('Invalid setting ALLOWED_ORIGINS');
  });

  it('an OPTIONS that is not a preflight answers 405 even with CORS on; an unknown path 404', async () => {
    const { app } = await startTickets({ ALLOWED_ORIGINS: 'https://app.example.com' });
    expectError(await app.inject({ method: 'OPTIONS', url: '/v1/classify' }), 405, 'method_not_allowed', []);
    expectError(await app.inject({ ...preflight('https://app.example.com'), url: '/v1/nope' }), 404, 'not_found', []);
    await app.close();
  });
});
