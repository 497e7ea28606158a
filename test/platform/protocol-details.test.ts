import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PlatformApp } from '../../src/platform/platform-app.js';
import { buildTicketsApp } from '../../src/services/tickets/app.js';
import { readTicketSettings } from '../../src/services/tickets/settings.js';
import { createSqliteFixture, type FixtureDatabase } from '../requests/support/fixture-database.js';
import { startTestApp, type TestApp } from '../requests/support/requests-app.js';

/**
 * Protocol details the platform writes or reads one way everywhere (docs/decisions.md, "Header
 * spellings"): auth schemes in any case (RFC 9110 11.1), and one spelling of Vary, whichever code
 * wrote it (CORS, compression, a route negotiating its format), with no name lost or repeated.
 */
const METRICS_KEY = 'metrics-key-0123456789abcdef';

describe('Authorization schemes are case-insensitive', () => {
  let app: PlatformApp;
  beforeAll(async () => {
    app = await buildTicketsApp(readTicketSettings({ METRICS_KEY }), { logger: false });
    await app.ready();
  });
  afterAll(async () => app.close());
  const scrape = (authorization: string) => app.inject({ method: 'GET', url: '/metrics', headers: { authorization } });

  it('/metrics accepts the bearer scheme in any case, and one or more spaces before the key', async () => {
    for (const scheme of ['Bearer', 'bearer', 'BEARER', 'bEaReR']) expect((await scrape(`${scheme} ${METRICS_KEY}`)).statusCode).toBe(200);
    expect((await scrape(`Bearer   ${METRICS_KEY}`)).statusCode).toBe(200);
  });

  it('/metrics still refuses another scheme, a wrong key, no space, no key or trailing words', async () => {
    for (const value of [`Basic ${METRICS_KEY}`, 'bearer wrong-key-0123456789abcdef', `Bearer${METRICS_KEY}`, 'bearer', 'Bearer ', `bearer ${METRICS_KEY} more`]) {
      const response = await scrape(value);
      expect({ value, status: response.statusCode }).toEqual({ value, status: 401 });
      expect(response.headers['www-authenticate']).toBe('Bearer');
    }
  });
});

describe('Vary: one spelling everywhere', () => {
  let fixture: FixtureDatabase;
  let plain: TestApp;
  let withCors: TestApp;
  const ORIGIN = 'https://dashboard.example';
  beforeAll(async () => {
    fixture = createSqliteFixture();
    plain = await startTestApp(fixture.databaseUrl);
    withCors = await startTestApp(fixture.databaseUrl, { ALLOWED_ORIGINS: ORIGIN });
  });
  afterAll(async () => {
    await plain.app.close();
    await withCors.app.close();
    await fixture.drop();
  });

  const negotiated = ['/v1/exports/service-requests', '/v1/exports/service-requests?format=geojson', '/v1/service-requests?limit=100', '/v1/service-requests?limit=100&format=csv'];

  it('the export and the pages: Vary: Accept, Accept-Encoding, whether compressed (gzip, br) or not', async () => {
    for (const path of negotiated) {
      for (const encoding of [undefined, 'gzip', 'br']) {
        const response = await plain.get(path, encoding === undefined ? {} : { 'accept-encoding': encoding });
        expect(response.statusCode).toBe(200);
        expect({ path, encoding, vary: response.headers.vary }).toEqual({ path, encoding, vary: 'Accept, Accept-Encoding' });
      }
    }
  });

  it('a 304 varies as the answer it stands for', async () => {
    for (const path of ['/v1/exports/service-requests', '/v1/service-requests?limit=100']) {
      for (const encoding of [undefined, 'gzip']) {
        const headers: Record<string, string> = encoding === undefined ? {} : { 'accept-encoding': encoding };
        const first = await plain.get(path, headers);
        const cached = await plain.get(path, { ...headers, 'if-none-match': String(first.headers.etag) });
        expect(cached.statusCode).toBe(304);
        expect({ path, encoding, vary: cached.headers.vary }).toEqual({ path, encoding, vary: first.headers.vary });
      }
    }
  });

  it('with CORS on, Origin is kept first on every answer, also where a route adds Accept (it was replaced)', async () => {
    for (const path of negotiated) {
      for (const encoding of [undefined, 'gzip']) {
        const response = await withCors.get(path, { origin: ORIGIN, ...(encoding === undefined ? {} : { 'accept-encoding': encoding }) });
        expect({ path, encoding, vary: response.headers.vary }).toEqual({ path, encoding, vary: 'Origin, Accept, Accept-Encoding' });
      }
    }
    const count = await withCors.get('/v1/service-requests/count', { origin: ORIGIN });
    expect(count.headers.vary).toBe('Origin, Accept-Encoding');
    const missing = await withCors.get('/nowhere', { origin: ORIGIN });
    expect(missing.headers.vary).toBe('Origin');
    const preflight = await withCors.app.inject({
      method: 'OPTIONS',
      url: '/v1/service-requests',
      headers: { origin: ORIGIN, 'access-control-request-method': 'GET' },
    });
    expect(preflight.headers.vary).toBe('Origin');
  });
});
