import { describe, expect, it } from 'vitest';
import { expectError, type AnyResponse } from '../support/http.js';
import { chunkedEncoding, rawExchange, repeatedChunks, type RawExchange } from './raw-http.js';
import { SERVICES, serveDuringSuite, type ServiceUnderTest } from './services.js';

/**
 * Hostile input (the reliability decisions), one test per case per service: each answers a clear 4xx error object,
 * never a 500, and the process keeps serving (checked after every test on the real server).
 * Fastify's inject where it shows the behaviour; a real server (app.listen on a free loopback port)
 * and raw node:net sockets where Node's HTTP layer matters.
 */
const KEY = 'hostile-input-key';
const json = { 'content-type': 'application/json', 'x-api-key': KEY };

/** A 4xx with the error object (request_id = X-Request-ID), optionally an exact status/code/fields. */
function expectClientError(response: AnyResponse, status?: number, code?: string, fields?: string[]): void {
  expect(response.statusCode, response.body).toBeGreaterThanOrEqual(400);
  expect(response.statusCode, response.body).toBeLessThan(500);
  const body = JSON.parse(response.body) as { error: { code: string; fields: string[] } };
  expectError(response, status ?? response.statusCode, code ?? body.error.code, fields ?? body.error.fields);
}

function fromRaw(exchange: RawExchange): AnyResponse {
  return { statusCode: exchange.status, headers: exchange.headers, body: exchange.body };
}

describe.each(SERVICES.map((service) => [service.name, service] as const))('%s: hostile input', (_name, service: ServiceUnderTest) => {
  const live = serveDuringSuite(service, KEY, { checkHealthAfterEach: true });

  // A case that does not apply to a service (a JSON body sent to a read-only service, or the reverse)
  // is not registered for it, rather than reported as skipped.
  const notApplicable = (() => undefined) as unknown as typeof it;
  const test = service.available ? it : notApplicable;
  const withJson = service.available && service.json !== undefined ? it : notApplicable;
  const withoutJson = service.available && service.json === undefined ? it : notApplicable;
  const endpoint = () => service.json!;
  const post = (payload: string | Buffer, headers: Record<string, string> = json) =>
    live.app.inject({ method: 'POST', url: endpoint().path, headers, payload });
  const withField = (field: string, rawValue: string) => {
    const { [field]: _dropped, ...rest } = endpoint().validBody;
    return `${JSON.stringify(rest).slice(0, -1)},"${field}":${rawValue}}`;
  };

  test('sanity: the valid request answers 200 (so the cases below test what they claim)', async () => {
    if (service.json) expect((await post(JSON.stringify(endpoint().validBody))).statusCode).toBe(200);
    expect((await live.app.inject({ method: 'GET', url: service.keyedGet, headers: { 'x-api-key': KEY } })).statusCode).toBe(200);
  });

  withJson('a body that is not JSON: 422 invalid_request, fields body', async () => {
    for (const payload of ['hello', '{"subject": ', "{'subject': 'x'}", '{"a":1}garbage', '\u0000']) {
      expectClientError(await post(payload), 422, 'invalid_request', ['body']);
    }
  });

  withoutJson('a body sent to a read-only service: 405 method_not_allowed before the body is read', async () => {
    const response = await live.app.inject({ method: 'POST', url: '/v1/service-requests', headers: json, payload: '{"not": json' });
    expectClientError(response, 405, 'method_not_allowed', []);
    expect(response.headers.allow).toBe('GET, HEAD');
  });

  withJson('deeply nested JSON (10,000 and 30,000 levels within 64 KiB): 422, no stack overflow', async () => {
    const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
    expectClientError(await post(nested(10_000)), 422, 'invalid_request');
    expectClientError(await post(nested(30_000)), 422, 'invalid_request');
    expectClientError(await post(withField(endpoint().stringField, nested(10_000))), 422, 'invalid_request', [endpoint().stringField]);
    expectClientError(await post(`{"deep":${'{"a":'.repeat(6000)}1${'}'.repeat(6000)}}`), 422, 'invalid_request');
  });

  withJson('huge numbers (1e400, a 40-digit integer, -1e400): 422 naming the field', async () => {
    for (const value of ['1e400', '-1e400', '1234567890123456789012345678901234567890', '1e-400000']) {
      const response = await post(withField(endpoint().numberField, value));
      if (value === '1e-400000' && response.statusCode === 200) continue; // parses as 0: a valid area for houses
      expectClientError(response, 422, 'invalid_request', [endpoint().numberField]);
    }
  });

  withJson('NaN, Infinity, -Infinity as text: not JSON, 422 fields body', async () => {
    for (const value of ['NaN', 'Infinity', '-Infinity', 'undefined']) {
      expectClientError(await post(withField(endpoint().numberField, value)), 422, 'invalid_request', ['body']);
    }
  });

  withJson('duplicate keys: 422 naming the repeated field (parsers disagree on which value wins)', async () => {
    const field = endpoint().stringField;
    const body = `${JSON.stringify(endpoint().validBody).slice(0, -1)},"${field}":${JSON.stringify(endpoint().validBody[field])}}`;
    expectClientError(await post(body), 422, 'invalid_request', [field]);
    const escaped = body.replace(`,"${field}":`, `,"\\u00${field.charCodeAt(0).toString(16)}${field.slice(1)}":`);
    expectClientError(await post(escaped), 422, 'invalid_request', [field]);
  });

  withJson('invalid UTF-8 bytes: 422 fields body', async () => {
    const valid = Buffer.from(JSON.stringify(endpoint().validBody));
    const at = valid.indexOf('"', valid.indexOf(':')) + 1;
    for (const bad of [[0xff], [0xc3, 0x28], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80]]) {
      const payload = Buffer.concat([valid.subarray(0, at), Buffer.from(bad), valid.subarray(at)]);
      expectClientError(await post(payload), 422, 'invalid_request', ['body']);
    }
  });

  withJson('strings with NUL bytes or lone surrogates: 422 naming the field', async () => {
    const field = endpoint().stringField;
    for (const value of ['"a\\u0000b"', '"\\ud800"', '"x\\udfff"', '"\\udc00\\ud800"']) {
      expectClientError(await post(withField(field, value)), 422, 'invalid_request', [field]);
    }
    // A well-formed pair is text: refused or accepted by the service's own rules, never as unusable.
    const paired = await post(withField(field, '"\\ud83d\\ude00"'));
    expect(paired.statusCode).toBeLessThan(500);
  });

  test('NUL bytes and lone surrogates in query parameters: 422 naming the parameter', async () => {
    const [path] = service.keyedGet.split('?');
    for (const value of ['a%00b', '%00']) {
      const response = await live.app.inject({ method: 'GET', url: `${path}?limit=1&complaint_type=${value}`, headers: { 'x-api-key': KEY } });
      if (service.name === 'requests') expectClientError(response, 422, 'invalid_request', ['complaint_type']);
      else expect(response.statusCode, response.body).toBeLessThan(500);
    }
    // A percent-encoded lone surrogate cannot be decoded: it stays text, never reaches the data as one.
    const surrogate = await live.app.inject({ method: 'GET', url: `${path}?limit=1&complaint_type=%ED%A0%80`, headers: { 'x-api-key': KEY } });
    expect(surrogate.statusCode, surrogate.body).toBeLessThan(500);
  });

  test('a 10 MB body with Content-Length: 413 (405 for a GET-only service) without reading it, connection closed', async () => {
    const path = service.json?.path ?? '/v1/service-requests';
    const size = 10 * 1024 * 1024;
    const head = `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-API-Key: ${KEY}\r\nContent-Length: ${size}\r\n\r\n`;
    const exchange = await rawExchange(live.port, head, { bodyChunks: () => repeatedChunks(size / 65_536, 65_536), timeoutMs: 5000 });
    expectClientError(fromRaw(exchange), service.json ? 413 : 405, service.json ? 'body_too_large' : 'method_not_allowed', []);
    expect(exchange.ms).toBeLessThan(3000);
    expect(exchange.closedByServer).toBe(true);
    expect(exchange.bodyBytesWritten).toBeLessThan(size);
  });

  withJson('a chunked body over the limit: 413 once 64 KiB have arrived, connection closed', async () => {
    const head = `POST ${endpoint().path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-API-Key: ${KEY}\r\nTransfer-Encoding: chunked\r\n\r\n`;
    const exchange = await rawExchange(live.port, head, { bodyChunks: () => chunkedEncoding(640, 16_384), timeoutMs: 5000 });
    expectClientError(fromRaw(exchange), 413, 'body_too_large', []);
    expect(exchange.closedByServer).toBe(true);
    expect(exchange.bodyBytesWritten).toBeLessThan(640 * 16_384);
  });

  withJson('a body just over 64 KiB by inject: 413 body_too_large even with unknown fields', async () => {
    expectClientError(await post(JSON.stringify({ ...endpoint().validBody, filler: 'x'.repeat(65_536) })), 413, 'body_too_large', []);
  });

  withJson('wrong or missing Content-Type: 415 unsupported_media_type, fields Content-Type', async () => {
    const body = JSON.stringify(endpoint().validBody);
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml', 'multipart/form-data; boundary=x', 'application/jsonx']) {
      expectClientError(await post(body, { 'content-type': type, 'x-api-key': KEY }), 415, 'unsupported_media_type', ['Content-Type']);
    }
    const missing = await live.app.inject({ method: 'POST', url: endpoint().path, headers: { 'x-api-key': KEY }, payload: Buffer.from(body) });
    expectClientError({ ...missing, headers: missing.headers }, 415, 'unsupported_media_type', ['Content-Type']);
  });

  test('a 100 KB URL: 431 request_header_too_large with the error object, connection closed', async () => {
    const exchange = await rawExchange(live.port, `GET /v1/${'a'.repeat(100_000)} HTTP/1.1\r\nHost: x\r\nX-API-Key: ${KEY}\r\n\r\n`);
    expectClientError(fromRaw(exchange), 431, 'request_header_too_large', []);
    expect(exchange.closedByServer).toBe(true);
  });

  test('a long URL under the header limit (10 KB path, 10 KB id): 404, or 414 uri_too_long for a parameter, never 500', async () => {
    expectClientError(await live.app.inject({ method: 'GET', url: `/v1/${'a'.repeat(10_000)}`, headers: { 'x-api-key': KEY } }), 404, 'not_found', []);
    const longId = await live.app.inject({ method: 'GET', url: `${service.traversalPath.replace(/\/[^/]*$/, '')}/${'9'.repeat(10_000)}`, headers: { 'x-api-key': KEY } });
    if (service.name === 'requests') expectClientError(longId, 414, 'uri_too_long', []);
    else expectClientError(longId, 404, 'not_found', []);
    expect(longId.body.length).toBeLessThan(1000);
  });

  test('a URL with broken percent-encoding: 400 bad_request or 404, with the error object', async () => {
    expectClientError(await live.app.inject({ method: 'GET', url: `${service.traversalPath.replace(/\/[^/]*$/, '')}/%zz%E0%A4%A`, headers: { 'x-api-key': KEY } }));
  });

  test('a 20 KB header value: 431 with the error object; a 4 KB one is served', async () => {
    const big = await rawExchange(live.port, `GET /health HTTP/1.1\r\nHost: x\r\nX-Long: ${'b'.repeat(20_000)}\r\n\r\n`);
    expectClientError(fromRaw(big), 431, 'request_header_too_large', []);
    expect(big.closedByServer).toBe(true);
    const fine = await live.app.inject({ method: 'GET', url: '/health', headers: { 'x-long': 'b'.repeat(4000) } });
    expect(fine.statusCode).toBe(200);
  });

  test('repeated query parameters', async () => {
    if (service.name === 'requests') {
      // the dashboard API decisions: a repeated filter means any of its values; a parameter that takes one value is still refused twice
      const both = await live.app.inject({ method: 'GET', url: '/v1/service-requests?borough=queens&borough=bronx', headers: { 'x-api-key': KEY } });
      expect(both.statusCode).toBe(200);
      const many = `/v1/service-requests?${Array.from({ length: 51 }, () => 'borough=queens').join('&')}`;
      expectClientError(await live.app.inject({ method: 'GET', url: many, headers: { 'x-api-key': KEY } }), 422, 'invalid_request', ['borough']);
      const response = await live.app.inject({ method: 'GET', url: '/v1/service-requests?created_from=2025-01-01&created_from=2025-01-02', headers: { 'x-api-key': KEY } });
      expectClientError(response, 422, 'invalid_request', ['created_from']);
      const limits = await live.app.inject({ method: 'GET', url: '/v1/service-requests?limit=1&limit=2', headers: { 'x-api-key': KEY } });
      expectClientError(limits, 422, 'invalid_request', ['limit']);
    } else {
      // tickets: unknown query parameters are ignored by contract; houses: the same on GET /v1/model.
      const response = await live.app.inject({ method: 'GET', url: `${service.keyedGet}?x=1&x=2`, headers: { 'x-api-key': KEY } });
      expect(response.statusCode).toBe(200);
    }
  });

  test('path traversal in ids and static paths: 4xx error object, no file content', async () => {
    expectClientError(await live.app.inject({ method: 'GET', url: service.traversalPath, headers: { 'x-api-key': KEY } }));
    for (const url of ['/docs/static/..%2F..%2F..%2Fpackage.json', '/docs/static/%2e%2e/%2e%2e/%2e%2e/package.json', '/redoc/..%2F..%2Fpackage.json']) {
      const response = await live.app.inject({ method: 'GET', url });
      expect(response.statusCode, url).toBeGreaterThanOrEqual(400);
      expect(response.statusCode, url).toBeLessThan(500);
      expect(response.body, url).not.toContain('"devDependencies"');
    }
    // Raw, unnormalised dot segments on the wire.
    const raw = await rawExchange(live.port, 'GET /docs/static/../../../package.json HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(raw.status).toBeGreaterThanOrEqual(400);
    expect(raw.status).toBeLessThan(500);
    expect(raw.body).not.toContain('"devDependencies"');
  });

  test('X-Request-ID over 128 characters or with other characters: replaced by a UUID v4', async () => {
    for (const id of ['x'.repeat(129), 'a b', '<script>', 'é']) {
      const response = await live.app.inject({ method: 'GET', url: '/nowhere', headers: { 'x-request-id': id } });
      expectClientError(response, 404, 'not_found', []);
      expect(response.headers['x-request-id']).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    }
  });

  test('X-Request-ID with CR/LF: a CRLF ends the header (no injected header comes back); a bare CR or LF is a 400', async () => {
    const split = await rawExchange(live.port, 'GET /nowhere HTTP/1.1\r\nHost: x\r\nX-Request-ID: abc\r\nSet-Cookie: injected=1\r\nConnection: close\r\n\r\n');
    expectClientError(fromRaw(split), 404, 'not_found', []);
    expect(split.headers['x-request-id']).toBe('abc');
    expect(split.headers['set-cookie']).toBeUndefined();
    for (const separator of ['\r', '\n ']) {
      const exchange = await rawExchange(live.port, `GET /health HTTP/1.1\r\nHost: x\r\nX-Request-ID: abc${separator}Set-Cookie: injected=1\r\n\r\n`);
      expect(exchange.headers['set-cookie']).toBeUndefined();
      if (exchange.status !== 200) expectClientError(fromRaw(exchange), 400, 'bad_request', []);
      expect(exchange.headers['x-request-id']).not.toContain('Set-Cookie');
    }
  });
});
