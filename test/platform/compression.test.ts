import Fastify from 'fastify';
import { randomBytes } from 'node:crypto';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PlatformApp } from '../../src/platform/platform-app.js';
import { ByteBoundedLru } from '../../src/platform/byte-bounded-lru.js';
import { etagMatches, registerCompression } from '../../src/platform/compression.js';
import { buildFixtureApp } from '../houses/support.js';
import { startTickets } from '../tickets/tickets-app.js';
import { createFixture, type FixtureDatabase } from '../requests/support/fixture-database.js';
import { startTestApp, TEST_API_KEY, type TestApp } from '../requests/support/requests-app.js';

/**
 * The dashboard API decisions: gzip and brotli in every service for answers above 1 KB when the client accepts them,
 * `Vary: Accept-Encoding`, and ETags that name each encoding while 304 keeps working.
 */
const decode: Record<string, (body: Buffer) => Buffer> = { gzip: gunzipSync, br: brotliDecompressSync };

describe('compression in the three services', () => {
  let fixture: FixtureDatabase | undefined;
  let requests: TestApp;
  const apps: PlatformApp[] = [];

  beforeAll(async () => {
    fixture = await createFixture('sqlite');
    requests = await startTestApp(fixture.databaseUrl);
    apps.push((await startTickets({ API_KEY: 'compression-key-0123' })).app, await buildFixtureApp({ API_KEY: 'compression-key-0123' }), requests.app);
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
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip', 'x-api-key': 'compression-key-0123' },
      payload: Buffer.from([0x1f, 0x8b, 0x08, 0x00]),
    });
    // Never decompressed: a body in a Content-Encoding is refused before it is read (src/platform/http-protocol.ts).
    expect(compressedBody.statusCode).toBe(415);
    expect((compressedBody.json<{ error: { fields: string[] } }>()).error.fields).toEqual(['Content-Encoding']);
    expect(compressedBody.json().error.code).toBe('unsupported_media_type');
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

describe('compressed copies of answers with an ETag are kept, within a byte bound', () => {
  it('the LRU drops the least recently used entries past its bound and never keeps a value over a quarter of it', () => {
    const lru = new ByteBoundedLru(1000);
    for (let i = 0; i < 50; i += 1) {
      lru.set(`k${i}`, Buffer.alloc(100));
      if (i % 3 === 0) lru.get('k0'); // k0 stays recently used
      expect(lru.stats().bytes).toBeLessThanOrEqual(1000);
    }
    expect(lru.get('k0')).toBeDefined();
    expect(lru.get('k1')).toBeUndefined();
    expect(lru.get('k49')).toBeDefined();
    lru.set('large', Buffer.alloc(251));
    expect(lru.get('large')).toBeUndefined();
  });

  it('an answer is compressed once per ETag and encoding; the kept copies stay under the bound', async () => {
    const app = Fastify({ logger: false });
    const kept = await registerCompression(app, 64 * 1024);
    // 20 KB bodies that compress to about 10 KB (half random hex): many more than the bound holds.
    const bodies = new Map<number, Buffer>();
    const bodyOf = (id: number) => bodies.get(id) ?? bodies.set(id, Buffer.from(JSON.stringify({ id, text: randomBytes(5000).toString('hex') + 'a'.repeat(10_000) }))).get(id)!;
    app.get('/items/:id', async (request, reply) => {
      const id = Number((request.params as { id: string }).id);
      return reply.header('ETag', `"item-${id}"`).type('application/json; charset=utf-8').send(bodyOf(id));
    });
    await app.ready();
    try {
      for (let id = 0; id < 40; id += 1) {
        for (const encoding of ['gzip', 'br']) {
          const first = await app.inject({ url: `/items/${id}`, headers: { 'accept-encoding': encoding } });
          const again = await app.inject({ url: `/items/${id}`, headers: { 'accept-encoding': encoding } });
          expect(first.headers['content-encoding']).toBe(encoding);
          expect(first.headers.etag).toBe(`"item-${id}-${encoding}"`);
          expect(first.headers.vary).toMatch(/Accept-Encoding/i);
          expect(Number(first.headers['content-length'])).toBe(first.rawPayload.length);
          expect(decode[encoding]!(first.rawPayload).equals(bodyOf(id))).toBe(true);
          expect(again.rawPayload.equals(first.rawPayload), 'the kept copy').toBe(true);
          expect(kept.stats().bytes).toBeLessThanOrEqual(64 * 1024);
        }
      }
      expect(kept.stats().entries).toBeGreaterThan(2);
      const plain = await app.inject({ url: '/items/3' });
      expect(plain.headers['content-encoding']).toBeUndefined();
      expect(plain.rawPayload.equals(bodyOf(3))).toBe(true);
    } finally {
      await app.close();
    }
  });
});
