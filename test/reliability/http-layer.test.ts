import { METHODS } from 'node:http';
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { DOCS_CSP } from '../../src/platform/docs.js';
import { expectError } from '../support/http.js';
import { rawExchange, repeatedChunks, type RawExchange } from './raw-http.js';
import { SERVICES, serveDuringSuite, type ServiceUnderTest } from './services.js';

/**
 * Hostile clients at the HTTP layer (the hostile-input decisions), raw node:net sockets against a
 * real server, for every service: bodies on any method are bounded in time, routing comes before the
 * body, protocol corners answer with the error object, every HTML page carries the CSP. Each exchange
 * is bounded in time (rawExchange's timeout); pipelining (item 2) is in pipelining.test.ts.
 */
const KEY = 'http-layer-key-0123';
/** The body deadline of these servers (10 s in production), so that the trickle tests stay short. */
const BODY_TIMEOUT_MS = 600;

function expectRawError(exchange: RawExchange, status: number, code: string, fields: string[] = []): void {
  expectError({ statusCode: exchange.status, headers: exchange.headers, body: exchange.body }, status, code, fields);
}

/** Opens a connection, writes `head`, then one byte of body every 100 ms until the server closes it. */
function trickle(port: number, head: string, framing: 'length' | 'chunked'): Promise<{ answer: string; ms: number }> {
  const started = Date.now();
  return new Promise((resolveTrickle) => {
    let answer = '';
    const byte = framing === 'chunked' ? '1\r\na\r\n' : 'a';
    // The trickle starts once the head is written: a socket still connecting takes writes too, and
    // on a busy machine a byte written before the head made the request line invalid (400).
    let timer: NodeJS.Timeout | undefined;
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(head);
      timer = setInterval(() => socket.writable && socket.write(byte), 100);
    });
    const stop = () => {
      clearInterval(timer);
      clearTimeout(limit);
      socket.destroy();
      resolveTrickle({ answer, ms: Date.now() - started });
    };
    const limit = setTimeout(stop, 8000);
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString('utf8')));
    socket.on('close', stop);
    socket.on('error', stop);
  });
}

describe.each(SERVICES.map((service) => [service.name, service] as const))('%s: HTTP layer', (_name, service: ServiceUnderTest) => {
  const live = serveDuringSuite(service, KEY, { appOptions: { bodyTimeoutMs: BODY_TIMEOUT_MS }, checkHealthAfterEach: true });

  const test = it.skipIf(!service.available);
  /** The service's body-taking request: its JSON POST, or (requests, GET only) a keyed GET. */
  const bodyRequest = () => (service.json ? { method: 'POST', path: service.json.path } : { method: 'GET', path: service.keyedGet });
  const validBody = () => JSON.stringify(service.json?.validBody ?? {});

  // Item 4: bodies on any method are bounded.
  for (const framing of ['length', 'chunked'] as const) {
    for (const method of ['GET', 'DELETE', 'PROPFIND']) {
      test(`${method} /health announcing a body (${framing === 'length' ? 'Content-Length: 1000000000' : 'chunked'}) trickled a byte at a time: the connection is closed within the body deadline`, async () => {
        const framingHeader = framing === 'length' ? 'Content-Length: 1000000000' : 'Transfer-Encoding: chunked';
        const { answer, ms } = await trickle(live.port, `${method} /health HTTP/1.1\r\nHost: x\r\n${framingHeader}\r\n\r\n`, framing);
        // GET is answered without its body (with Connection: close); the others are 405 before it.
        expect(answer).toMatch(method === 'GET' ? /^HTTP\/1\.1 200 / : /^HTTP\/1\.1 405 /);
        expect(ms).toBeLessThan(BODY_TIMEOUT_MS + 2000);
      });
    }
  }

  test('a body trickled to the service itself (any method that reads it) answers 408 request_timeout at the deadline', async () => {
    const { method, path } = bodyRequest();
    const { answer, ms } = await trickle(live.port, `${method} ${path} HTTP/1.1\r\nHost: x\r\nX-API-Key: ${KEY}\r\nContent-Type: application/json\r\nContent-Length: 40000\r\n\r\n`, 'length');
    if (service.json) {
      expect(answer).toMatch(/^HTTP\/1\.1 408 /);
      expect(ms).toBeGreaterThanOrEqual(BODY_TIMEOUT_MS - 50);
    } else {
      // A GET is answered without reading its body, and the connection closed.
      expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    }
    expect(ms).toBeLessThan(BODY_TIMEOUT_MS + 2000);
  });

  // Item 5: routing before the body.
  test('an unknown path answers 404 not_found whatever its body: invalid JSON, 10 MB, text/plain, any method', async () => {
    const invalid = await rawExchange(live.port, 'POST /nowhere HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5\r\n\r\n{bad}');
    expectRawError(invalid, 404, 'not_found');
    expect(invalid.headers.connection).not.toBe('close');
    const size = 10 * 1024 * 1024;
    const large = await rawExchange(live.port, `PUT /nowhere HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${size}\r\n\r\n`, {
      bodyChunks: () => repeatedChunks(size / 65_536, 65_536),
      timeoutMs: 5000,
    });
    expectRawError(large, 404, 'not_found');
    expect(large.closedByServer).toBe(true);
    expect(large.bodyBytesWritten).toBeLessThan(size);
    expectRawError(await rawExchange(live.port, 'POST /nowhere HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi'), 404, 'not_found');
    expectRawError(await rawExchange(live.port, 'PROPFIND /nowhere HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'), 404, 'not_found');
  });

  test('every method Node parses (PROPFIND, PURGE, SEARCH, LOCK, ...) on a known path it lacks answers 405 with Allow', async () => {
    const methods = METHODS.filter((method) => !['GET', 'HEAD', 'CONNECT'].includes(method));
    for (const method of methods) {
      const exchange = await rawExchange(live.port, `${method} /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      expectRawError(exchange, 405, 'method_not_allowed');
      expect(exchange.headers.allow, method).toBe('GET, HEAD');
    }
    const { method, path } = bodyRequest();
    const other = method === 'POST' ? 'PURGE' : 'SEARCH';
    const onService = await rawExchange(live.port, `${other} ${path} HTTP/1.1\r\nHost: x\r\nX-API-Key: ${KEY}\r\nConnection: close\r\n\r\n`);
    expectRawError(onService, 405, 'method_not_allowed');
    expect(onService.headers.allow).toContain(method);
  });

  // Item 6: protocol corners carry the error object.
  test('a body with a Content-Encoding the service does not decode (gzip, deflate, br, x-custom) answers 415; identity is read', async () => {
    const { method, path } = bodyRequest();
    const body = validBody();
    for (const encoding of ['gzip', 'deflate', 'br', 'x-custom', 'gzip, identity']) {
      const exchange = await rawExchange(live.port, `${method} ${path} HTTP/1.1\r\nHost: x\r\nX-API-Key: ${KEY}\r\nContent-Type: application/json\r\nContent-Encoding: ${encoding}\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`);
      expectRawError(exchange, 415, 'unsupported_media_type', ['Content-Encoding']);
    }
    const identity = await rawExchange(live.port, `${method} ${path} HTTP/1.1\r\nHost: x\r\nX-API-Key: ${KEY}\r\nContent-Type: application/json\r\nContent-Encoding: identity\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`);
    expect(identity.status, identity.body).toBe(200);
  });

  test('HTTP/1.1 without Host: 400 bad_request with the error object and X-Request-ID; HTTP/1.0 without Host is served', async () => {
    const exchange = await rawExchange(live.port, 'GET /health HTTP/1.1\r\nX-Request-ID: no-host-1\r\n\r\n');
    expectRawError(exchange, 400, 'bad_request', ['Host']);
    expect(exchange.headers['x-request-id']).toBe('no-host-1');
    const old = await rawExchange(live.port, 'GET /health HTTP/1.0\r\n\r\n');
    expect(old.text).toMatch(/^HTTP\/1\.1 200 /);
  });

  test('an Expect other than 100-continue: 417 expectation_failed with the error object and X-Request-ID', async () => {
    const exchange = await rawExchange(live.port, 'GET /health HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\nX-Request-ID: expect-1\r\nConnection: close\r\n\r\n');
    expectRawError(exchange, 417, 'expectation_failed', ['Expect']);
    expect(exchange.headers['x-request-id']).toBe('expect-1');
  });

  test('Expect: 100-continue: no 100 Continue without the key, for a size over the limit, or on an unknown path; 100 then the answer otherwise', async () => {
    const { method, path } = bodyRequest();
    const head = (key: string, length: number, target = path) =>
      `${method} ${target} HTTP/1.1\r\nHost: x\r\n${key ? `X-API-Key: ${key}\r\n` : ''}Content-Type: application/json\r\nContent-Length: ${length}\r\nExpect: 100-continue\r\n\r\n`;
    const noKey = await rawExchange(live.port, head('', 20));
    expect(noKey.text).not.toContain('100 Continue');
    expectRawError(noKey, 401, 'unauthorized');
    const tooLarge = await rawExchange(live.port, head(KEY, 10 * 1024 * 1024));
    expect(tooLarge.text).not.toContain('100 Continue');
    expectRawError(tooLarge, 413, 'body_too_large');
    const nowhere = await rawExchange(live.port, head(KEY, 20, '/nowhere'));
    expect(nowhere.text).not.toContain('100 Continue');
    expectRawError(nowhere, 404, 'not_found');

    const body = validBody();
    const exchange = await new Promise<string>((resolveExchange) => {
      const socket = connect(live.port, '127.0.0.1', () => socket.write(head(KEY, Buffer.byteLength(body))));
      let text = '';
      socket.on('data', (chunk: Buffer) => {
        if (text === '' && chunk.toString().startsWith('HTTP/1.1 100 Continue')) socket.write(body);
        text += chunk.toString();
        if (/\r\n\r\n[\s\S]*\r\n\r\n[\s\S]*\}$/.test(text)) socket.end();
      });
      socket.on('close', () => resolveExchange(text));
      setTimeout(() => socket.destroy(), 3000).unref();
    });
    expect(exchange).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 /);
  });

  test('each status has its own code: 403 forbidden, 412 precondition_failed and 416 range_not_satisfiable from the docs assets', async () => {
    const forbidden = await rawExchange(live.port, 'GET /docs/static/%2e%2e/x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expectRawError(forbidden, 403, 'forbidden');
    const range = await rawExchange(live.port, 'GET /docs/static/swagger-ui.css HTTP/1.1\r\nHost: x\r\nRange: bytes=99999999-\r\nConnection: close\r\n\r\n');
    expectRawError(range, 416, 'range_not_satisfiable');
    const precondition = await rawExchange(live.port, 'GET /docs/static/swagger-ui.css HTTP/1.1\r\nHost: x\r\nIf-Match: "other"\r\nConnection: close\r\n\r\n');
    expectRawError(precondition, 412, 'precondition_failed');
  });

  test('answers sent after the body was fully read keep the connection alive (422, 401); before it, Connection: close', async () => {
    const { method, path } = bodyRequest();
    const second = 'GET /health HTTP/1.1\r\nHost: x\r\nX-Request-ID: second-on-connection\r\n\r\n';
    const invalid = service.json
      ? `${method} ${path} HTTP/1.1\r\nHost: x\r\nX-API-Key: ${KEY}\r\nContent-Type: application/json\r\nContent-Length: 5\r\n\r\n{bad}`
      : `GET ${service.keyedGet.split('?')[0]}?limit=0 HTTP/1.1\r\nHost: x\r\nX-API-Key: ${KEY}\r\n\r\n`;
    const unauthorized = `${method} ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`;
    for (const first of [invalid, unauthorized]) {
      const exchange = await rawExchange(live.port, first + second, { idleMs: 500, until: (text) => /x-request-id: second-on-connection/i.test(text) });
      expect(exchange.status).toBeGreaterThanOrEqual(400);
      expect(exchange.headers.connection, exchange.text).not.toBe('close');
      expect(exchange.text).toMatch(/x-request-id: second-on-connection/i);
    }
    const unread = await rawExchange(live.port, `${method} ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{`);
    expectRawError(unread, 401, 'unauthorized');
    expect(unread.headers.connection).toBe('close');
  });

  // Item 10.
  test('every HTML page carries the Content-Security-Policy: /docs, /docs/, the Swagger UI static pages (oauth2-redirect.html), /redoc', async () => {
    // (/docs/static/index.html redirects to /docs/.)
    for (const path of ['/docs', '/docs/', '/docs/static/oauth2-redirect.html', '/redoc']) {
      const exchange = await rawExchange(live.port, `GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      expect(exchange.status, path).toBe(200);
      expect(exchange.headers['content-type'], path).toMatch(/^text\/html/);
      expect(exchange.headers['content-security-policy'], path).toBe(DOCS_CSP);
    }
  });
});
