import type { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { pipelineWithoutReading, rawExchange } from './raw-http.js';
import { REQUESTS, SERVICES, TICKETS, serveDuringSuite, type ServiceUnderTest } from './services.js';

/**
 * The hostile-input decisions: clients that pipeline hundreds of requests on one connection and never read
 * the answers. The service must stop reading such a connection (backpressure), so its memory stays
 * bounded, and a normal client's /health is answered promptly meanwhile. Figures in bench/README.md
 * ("Pipelining clients that never read"); the bounds here are generous because the machine is shared.
 */
const KEY = 'pipelining-key-0123';
const CLIENTS = 6;
const REQUESTS_PER_CLIENT = 500;
const WATCH_MS = 5000;
/**
 * Generous: the growth measured with and without the backpressure is in bench/README.md ("Figures
 * behind source comments"); without it the memory grows without bound.
 */
const RSS_GROWTH_BOUND_MB = 100;
const HEALTH_BOUND_MS = 1000;

/** The most expensive request each service answers with a key: a full page, a classification, an estimate. */
function costlyRequest(service: ServiceUnderTest): string {
  if (!service.json) return `GET /v1/service-requests?limit=1000 HTTP/1.1\r\nHost: x\r\nX-API-Key: ${KEY}\r\n\r\n`;
  const body = JSON.stringify(service.json.validBody);
  return `POST ${service.json.path} HTTP/1.1\r\nHost: x\r\nX-API-Key: ${KEY}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

const rssMb = () => process.memoryUsage.rss() / 1024 / 1024;

describe.each(SERVICES.map((service) => [service.name, service] as const))('%s: pipelining clients that never read', (_name, service: ServiceUnderTest) => {
  // requests: 40 copies of the fixture, so that a page of 1000 is a real page (about 500 KB).
  const live = serveDuringSuite(service, KEY, { dataCopies: 40 });

  it.skipIf(!service.available)(
    `${CLIENTS} clients x ${REQUESTS_PER_CLIENT} pipelined requests: RSS growth under ${RSS_GROWTH_BOUND_MB} MB, /health under ${HEALTH_BOUND_MS} ms`,
    () => expectBoundedWhileNotRead(service.name, live.port, costlyRequest(service), REQUESTS_PER_CLIENT),
    30_000,
  );
});

describe('requests: pipelining clients that never read compressed answers', () => {
  const live = serveDuringSuite(REQUESTS, KEY, { dataCopies: 40 });
  // 50 different pages of about 1000 rows (50 ETags, so 50 compressions and kept copies), gzip.
  const pages = Array.from({ length: 50 }, (_, i) => costlyRequest(REQUESTS).replace('limit=1000', `limit=${1000 - i}`).replace('\r\n\r\n', '\r\nAccept-Encoding: gzip\r\n\r\n')).join('');

  it.skipIf(!REQUESTS.available)(
    `${CLIENTS} clients x ${REQUESTS_PER_CLIENT} pipelined gzip pages: RSS growth under ${RSS_GROWTH_BOUND_MB} MB, /health under ${HEALTH_BOUND_MS} ms`,
    async () => {
      const answer = await rawExchange(live.port, pages.slice(0, pages.indexOf('\r\n\r\n') + 4));
      expect(answer.status).toBe(200);
      expect(answer.text).toMatch(/content-encoding: gzip/i);
      await expectBoundedWhileNotRead('requests (gzip)', live.port, pages, REQUESTS_PER_CLIENT / 50);
    },
    30_000,
  );
});

/**
 * CLIENTS connections each write `request` `times` times and never read, while /health is probed for
 * WATCH_MS: the process's RSS growth and /health's latency stay under their bounds.
 */
async function expectBoundedWhileNotRead(name: string, port: number, request: string, times: number): Promise<void> {
  // Warm-up: the first answers compile schemas and serializers.
  for (let i = 0; i < 3; i += 1) {
    await fetch(`http://127.0.0.1:${port}/health`);
    expect((await rawExchange(port, request.slice(0, request.indexOf('\r\n\r\n') + 4 + bodyLength(request)))).status).toBe(200);
  }
  const before = rssMb();
  const sockets: Socket[] = [];
  let peak = before;
  const healthMs: number[] = [];
  try {
    for (let i = 0; i < CLIENTS; i += 1) sockets.push(await pipelineWithoutReading(port, request, times));
    const until = Date.now() + WATCH_MS;
    while (Date.now() < until) {
      const started = Date.now();
      const health = await fetch(`http://127.0.0.1:${port}/health`);
      expect(health.status).toBe(200);
      healthMs.push(Date.now() - started);
      peak = Math.max(peak, rssMb());
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    for (const socket of sockets) socket.destroy();
  }
  const growth = peak - before;
  console.log(`${name}: RSS ${before.toFixed(0)} MB -> peak ${peak.toFixed(0)} MB (+${growth.toFixed(0)}), /health max ${Math.max(...healthMs)} ms over ${healthMs.length} probes`);
  expect(growth).toBeLessThan(RSS_GROWTH_BOUND_MB);
  expect(Math.max(...healthMs)).toBeLessThan(HEALTH_BOUND_MS);
}

/** The Content-Length of the first request of a raw request text (0 without a body). */
function bodyLength(request: string): number {
  const head = request.slice(0, request.indexOf('\r\n\r\n'));
  return Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
}

describe('a pipelining client that stops reading', () => {
  const live = serveDuringSuite(REQUESTS, KEY, { dataCopies: 40, appOptions: { backpressure: { stallTimeoutMs: 500 } } });

  it.skipIf(!REQUESTS.available)('is cut off after the stall timeout; the others are served meanwhile', async () => {
    const started = Date.now();
    const socket = await pipelineWithoutReading(live.port, costlyRequest(REQUESTS), 200);
    // The client does not read, so it cannot see the close: the server's side is watched.
    const connections = () => new Promise<number>((r) => live.app.server.getConnections((_error, count) => r(count)));
    let closedAfter = -1;
    while (Date.now() - started < 8000) {
      if ((await connections()) === 0) {
        closedAfter = Date.now() - started;
        break;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    socket.destroy();
    expect(closedAfter).toBeGreaterThan(0);
    console.log(`requests: the non-reading connection was closed after ${closedAfter} ms (stall timeout 500 ms)`);
    expect((await fetch(`http://127.0.0.1:${live.port}/health`)).status).toBe(200);
  }, 20_000);
});

describe('a pipelining client that reads', () => {
  const live = serveDuringSuite(TICKETS, KEY);

  it.skipIf(!TICKETS.available)('gets every answer, in order, on the same connection', async () => {
    const count = 300;
    const head = Array.from({ length: count }, (_, i) => `GET /health HTTP/1.1\r\nHost: x\r\nX-Request-ID: pipelined-${i}\r\n\r\n`).join('');
    const exchange = await rawExchange(live.port, head, { idleMs: 1000 });
    const ids = [...exchange.text.matchAll(/X-Request-ID: (pipelined-\d+)/gi)].map((match) => match[1]);
    expect(ids).toEqual(Array.from({ length: count }, (_, i) => `pipelined-${i}`));
    expect(exchange.text.match(/HTTP\/1\.1 200 /g)).toHaveLength(count);
  }, 20_000);
});

describe('a pipelining client that reads large answers', () => {
  const live = serveDuringSuite(REQUESTS, KEY, { dataCopies: 40 });

  it.skipIf(!REQUESTS.available)('gets every page, in order, though each answer fills the socket (the wait for drain)', async () => {
    const count = 20;
    const head = Array.from({ length: count }, (_, i) => `GET /v1/service-requests?limit=1000 HTTP/1.1\r\nHost: x\r\nX-API-Key: ${KEY}\r\nX-Request-ID: page-${i}\r\n\r\n`).join('');
    const exchange = await rawExchange(live.port, head, { idleMs: 2000, timeoutMs: 15_000 });
    const ids = [...exchange.text.matchAll(/X-Request-ID: (page-\d+)/gi)].map((match) => match[1]);
    expect(ids).toEqual(Array.from({ length: count }, (_, i) => `page-${i}`));
    // A new request on a new connection after them: nothing is left waiting.
    expect((await rawExchange(live.port, `GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`)).status).toBe(200);
  }, 30_000);
});
