import { describe, expect, it } from 'vitest';
import { EXPOSED_HEADERS } from '../../src/platform/cors.js';
import { buildTicketsApp } from '../../src/services/tickets/app.js';
import { readTicketSettings } from '../../src/services/tickets/settings.js';
import { buildFixtureApp } from '../houses/support.js';
import { fixtureDuringSuite } from '../requests/support/fixture-database.js';
import { startTestApp, TEST_API_KEY } from '../requests/support/requests-app.js';

const ORIGIN = 'https://app.example.com';

function preflight(url: string, method: string) {
  return { method: 'OPTIONS' as const, url, headers: { origin: ORIGIN, 'access-control-request-method': method } };
}

/** CORS for real browser pages: the methods each service allows, the headers a page may read, Vary. */
describe('CORS in each service', () => {
  const fixture = fixtureDuringSuite();

  it('tickets and houses allow GET and POST in preflights, as the contract says', async () => {
    const tickets = await buildTicketsApp(readTicketSettings({ ALLOWED_ORIGINS: ORIGIN }), { logger: false });
    const houses = await buildFixtureApp({ ALLOWED_ORIGINS: ORIGIN });
    expect((await tickets.inject(preflight('/v1/classify', 'POST'))).headers['access-control-allow-methods']).toBe('GET, POST');
    expect((await houses.inject(preflight('/v1/estimates', 'POST'))).headers['access-control-allow-methods']).toBe('GET, POST');
    await tickets.close();
    await houses.close();
  });

  it('requests (read-only) allows GET only in preflights; the table of the contract otherwise unchanged', async () => {
    const { app } = await startTestApp(fixture.databaseUrl, { ALLOWED_ORIGINS: ORIGIN });
    const allowed = await app.inject(preflight('/v1/service-requests', 'GET'));
    expect(allowed.statusCode).toBe(200);
    expect(allowed.headers['access-control-allow-origin']).toBe(ORIGIN);
    expect(allowed.headers['access-control-allow-methods']).toBe('GET');
    expect(allowed.headers['access-control-allow-headers']).toBe('Content-Type, X-API-Key');
    const foreign = await app.inject({ ...preflight('/v1/service-requests', 'GET'), headers: { origin: 'https://other.example', 'access-control-request-method': 'GET' } });
    expect(foreign.statusCode).toBe(400);
    expect(foreign.body).toBe('Disallowed CORS origin');
    await app.close();
  });

  it('answers to a listed origin expose X-Request-ID, ETag, Link and the rate-limit headers, and vary by Origin', async () => {
    expect(EXPOSED_HEADERS.split(', ')).toEqual(['X-Request-ID', 'ETag', 'Link', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'Retry-After']);
    const { app } = await startTestApp(fixture.databaseUrl, { ALLOWED_ORIGINS: ORIGIN, RATE_LIMIT: '100/minute' });
    const listed = await app.inject({ method: 'GET', url: '/v1/dataset', headers: { origin: ORIGIN, 'x-api-key': TEST_API_KEY } });
    expect(listed.statusCode).toBe(200);
    expect(listed.headers['access-control-allow-origin']).toBe(ORIGIN);
    expect(listed.headers['access-control-expose-headers']).toBe(EXPOSED_HEADERS);
    expect(listed.headers.vary).toContain('Origin');
    expect(listed.headers.etag).toBeDefined();
    expect(listed.headers['ratelimit-limit']).toBe('100');
    // Another origin: processed normally, nothing exposed to its pages, still Vary: Origin.
    const other = await app.inject({ method: 'GET', url: '/v1/dataset', headers: { origin: 'https://other.example', 'x-api-key': TEST_API_KEY } });
    expect(other.statusCode).toBe(200);
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
    expect(other.headers['access-control-expose-headers']).toBeUndefined();
    expect(other.headers.vary).toContain('Origin');
    await app.close();
  });

  it('a CSV page to a listed origin carries its next page in Link, which the page may read', async () => {
    const { app } = await startTestApp(fixture.databaseUrl, { ALLOWED_ORIGINS: ORIGIN });
    const page = await app.inject({ method: 'GET', url: '/v1/service-requests?format=csv&limit=2', headers: { origin: ORIGIN, 'x-api-key': TEST_API_KEY } });
    expect(page.statusCode).toBe(200);
    expect(page.headers.link).toMatch(/^<\/v1\/service-requests\?.*cursor=[^>]+>; rel="next"$/);
    expect(String(page.headers['access-control-expose-headers']).split(', ')).toContain('Link');
    await app.close();
  });

  it('CORS off: answers do not depend on Origin, so no Vary: Origin and nothing exposed', async () => {
    const app = await buildTicketsApp(readTicketSettings({}), { logger: false });
    const response = await app.inject({ method: 'GET', url: '/v1/categories', headers: { origin: ORIGIN } });
    expect(response.headers.vary ?? '').not.toContain('Origin');
    expect(response.headers['access-control-expose-headers']).toBeUndefined();
    await app.close();
  });
});
