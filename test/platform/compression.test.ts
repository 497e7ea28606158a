import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PlatformApp } from '../../src/platform/app.js';
import { etagMatches } from '../../src/platform/compression.js';
import { buildFixtureApp } from '../houses/support.js';
import { startTickets } from '../tickets/tickets-app.js';
import { createFixture, type FixtureDatabase } from '../requests/support/fixture-database.js';
import { startTestApp, TEST_API_KEY, type TestApp } from '../requests/support/requests-app.js';

/**
 * Issue 14: gzip and brotli in every service for answers above 1 KB when the client accepts them,
 * `Vary: Accept-Encoding`, and ETags that name each encoding while 304 keeps working.
 */
const decode: Record<string, (body: Buffer) => Buffer> = { gzip: gunzipSync, br: brotliDecompressSync };

describe('compression in the three services', () => {
  let fixture: FixtureDatabase;
  let requests: TestApp;
  const apps: PlatformApp[] = [];

  beforeAll(async () => {
    fixture = await createFixture('sqlite');
    requests = await startTestApp(fixture.databaseUrl);
    apps.push((await startTickets({ API_KEY: 'k' })).app, await buildFixtureApp({ API_KEY: 'k' }), requests.app);
    for (const app of apps) await app.ready();
  });
  afterAll(async () => {
    for (const app of apps) await app.close();
    await fixture?.drop();
  });

  it('each service sends its OpenAPI description (over 1 KB) with gzip or brotli as accepted, the same bytes once decoded', async () => {
    for (const app of apps) {
      const plain = await app.inject({ method: 'GET', url: '/openapi.json' });
      expect(plain.headers['content-encoding']).toBeUndefined();
      expect(plain.headers.vary).toMatch(/Accept-Encoding/i);
      expect(plain.rawPayload.length).toBeGreaterThan(1024);
      for (const [accept, encoding] of [['gzip', 'gzip'], ['br', 'br'], ['gzip, br', 'gzip'], ['gzip;q=0.5, br', 'br'], ['br;q=0.5, gzip', 'gzip'], ['deflate', undefined], ['identity', undefined]] as const) {
        const response = await app.inject({ method: 'GET', url: '/openapi.json', headers: { 'accept-encoding': accept } });
        expect(response.headers['content-encoding'], accept).toBe(encoding);
        expect(response.headers.vary).toMatch(/accept-encoding/i);
        const body = encoding === undefined ? response.rawPayload : decode[encoding]!(response.rawPayload);
        expect(body.equals(plain.rawPayload), accept).toBe(true);
        if (encoding !== undefined) expect(response.rawPayload.length).toBeLessThan(plain.rawPayload.length / 3);
      }
    }
  });

  it('a small answer is sent as it is; a request body is never decompressed', async () => {
    const small = await requests.get('/v1/service-requests/1001', { 'accept-encoding': 'gzip, br' });
    expect(small.headers['content-encoding']).toBeUndefined();
    expect(small.headers.vary).toMatch(/Accept-Encoding/);
    const houses = apps[1]!;
    const compressedBody = await houses.inject({
      method: 'POST',
      url: '/v1/estimates',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip', 'x-api-key': 'k' },
      payload: Buffer.from([0x1f, 0x8b, 0x08, 0x00]),
    });
    // Never decompressed: a body in a Content-Encoding is refused before it is read (src/platform/http-protocol.ts).
    expect(compressedBody.statusCode).toBe(415);
    expect((compressedBody.json() as { error: { fields: string[] } }).error.fields).toEqual(['Content-Encoding']);
  });

  it('the ETag names the encoding, and If-None-Match with any of the forms answers 304', async () => {
    const url = '/v1/service-requests?limit=30';
    const plain = await requests.get(url);
    const etag = plain.headers.etag as string;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    for (const encoding of ['gzip', 'br']) {
      const response = await requests.app.inject({ method: 'GET', url, headers: { 'x-api-key': TEST_API_KEY, 'accept-encoding': encoding } });
      expect(response.headers['content-encoding']).toBe(encoding);
      const encodedTag = response.headers.etag as string;
      expect(encodedTag).toBe(`${etag.slice(0, -1)}-${encoding}"`);
      expect(decode[encoding]!(response.rawPayload).toString()).toBe(plain.body);
      for (const ifNoneMatch of [encodedTag, `W/${encodedTag}`, etag]) {
        const cached = await requests.app.inject({
          method: 'GET',
          url,
          headers: { 'x-api-key': TEST_API_KEY, 'accept-encoding': encoding, 'if-none-match': ifNoneMatch },
        });
        expect(cached.statusCode, ifNoneMatch).toBe(304);
        expect(cached.body).toBe('');
        expect(cached.headers.vary).toMatch(/Accept-Encoding/);
      }
    }
    expect(etagMatches('"abc-gzip"', '"abc"')).toBe('"abc-gzip"');
    expect(etagMatches('"abc-zstd"', '"abc"')).toBeNull();
    expect(etagMatches('"abcd-gzip"', '"abc"')).toBeNull();
  });
});
