import { request } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { Type } from 'typebox';
import { afterEach, describe, expect, it } from 'vitest';
import { createServiceApp } from '../../src/platform/app.js';
import { cutAnswerAfter } from '../../src/platform/long-answers.js';
import type { PlatformApp } from '../../src/platform/platform-app.js';
import { errorResponses } from '../../src/platform/error-registry.js';
import { readPlatformSettings } from '../../src/platform/settings.js';
import { WorkBudget } from '../../src/platform/work-budget.js';
import { LogCapture } from '../support/http.js';

/**
 * Long answers (src/platform/long-answers.ts; docs/reliability.md): an answer without a body (HEAD,
 * 204) never reads its stream, the budget place and the time bound of a streamed answer last as long
 * as its stream works (whatever ends the response: the client gone, HEAD, the time bound), and every
 * answer is sent within its bound.
 */
const info = { title: 'Test API', version: '1', description: 'A test service', tags: [], usesApiKey: true };
const KEY = 'long-answers-key-0123';
const CHUNK = Buffer.alloc(64 * 1024, 'x');

/** A stream of `chunks` chunks whose every step waits `stepMs` (a database read), counting its steps. */
class CountedStream {
  steps = 0;
  /** Steps started and not yet ended. */
  running = 0;
  closed = false;
  readonly stream: Readable;

  constructor(chunks: number, stepMs: number) {
    const generator = async function* (this: CountedStream) {
      for (let i = 0; i < chunks; i += 1) {
        this.steps += 1;
        this.running += 1;
        await new Promise((resolve) => setTimeout(resolve, stepMs));
        this.running -= 1;
        yield CHUNK;
      }
    }.call(this);
    this.stream = Readable.from(generator, { objectMode: false });
    this.stream.once('close', () => (this.closed = true));
  }
}

interface Harness {
  app: PlatformApp;
  budget: WorkBudget;
  streams: CountedStream[];
  logs: LogCapture;
  port: number;
}

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.app.close();
  harness = undefined;
});

/** A service with a budgeted streamed route, a 204 route with a stream, a large answer, and one with its own bound. */
async function service(options: { chunks?: number; stepMs?: number; answerSendMaxMs?: number; ownBoundMs?: number } = {}): Promise<Harness> {
  const budget = new WorkBudget('test streams', { concurrency: 2, queue: 4, maxWaitMs: 5_000 });
  const streams: CountedStream[] = [];
  const logs = new LogCapture();
  const answers = { 200: Type.String({ description: 'Streamed' }), ...errorResponses('unauthorized') };
  const app = await createServiceApp(
    {
      name: 'test',
      openapi: info,
      registerRoutes(app) {
        app.get('/v1/stream', { config: { requiresApiKey: true, workBudget: budget }, schema: { operationId: 'stream', response: answers } }, async (_request, reply) => {
          const counted = new CountedStream(options.chunks ?? 100, options.stepMs ?? 5);
          streams.push(counted);
          if (options.ownBoundMs !== undefined) cutAnswerAfter(reply, options.ownBoundMs);
          return reply.type('text/csv').header('Content-Disposition', 'attachment; filename="x.csv"').send(counted.stream);
        });
        app.get('/v1/nothing', { config: { requiresApiKey: true, workBudget: budget }, schema: { operationId: 'nothing', response: { 204: Type.Unknown({ description: 'Nothing' }), ...errorResponses('unauthorized') } } }, async (_request, reply) => {
          const counted = new CountedStream(100, 5);
          streams.push(counted);
          return reply.code(204).send(counted.stream);
        });
        app.get('/v1/small', { config: { requiresApiKey: true }, schema: { operationId: 'small', response: answers } }, () => 'small');
        app.get('/v1/large', { config: { requiresApiKey: true, workBudget: budget }, schema: { operationId: 'large', response: answers } }, async (_request, reply) =>
          reply.type('application/octet-stream').send(Buffer.alloc(32 * 1024 * 1024, 'y')),
        );
      },
    },
    readPlatformSettings({ API_KEY: KEY }, 0),
    { logStream: logs, ...(options.answerSendMaxMs === undefined ? {} : { answerSendMaxMs: options.answerSendMaxMs }) },
  );
  await app.listen({ host: '127.0.0.1', port: 0 });
  harness = { app, budget, streams, logs, port: (app.server.address() as AddressInfo).port };
  return harness;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(condition: () => boolean, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await pause(10);
  }
}

/** The answer's header fields, without those that differ between any two answers. */
function headers(response: Response): Record<string, string> {
  const varying = new Set(['date', 'x-request-id', 'connection', 'keep-alive']);
  return Object.fromEntries([...response.headers.entries()].filter(([name]) => !varying.has(name)));
}

describe('an answer without a body never reads its stream', () => {
  it('HEAD of a streamed GET: the GET\'s headers, no body, the stream destroyed before its first step; its budget place is free at once', async () => {
    const { port, streams, budget } = await service();
    const url = `http://127.0.0.1:${port}/v1/stream`;
    const identity = { 'x-api-key': KEY, 'accept-encoding': 'identity' };
    const head = await fetch(url, { method: 'HEAD', headers: identity });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
    await until(() => streams[0]?.closed === true);
    expect(streams[0]?.steps).toBe(0);
    await until(() => budget.load.running === 0);
    const get = await fetch(url, { headers: identity });
    expect((await get.arrayBuffer()).byteLength).toBe(100 * CHUNK.length);
    // Fastify sends a HEAD without Transfer-Encoding (RFC 9110 9.3.2 allows it) and, its own HEAD
    // handler running before the compression's hook, without Vary, whatever the route.
    const { 'transfer-encoding': chunked, vary, ...rest } = headers(get);
    expect([chunked, vary]).toEqual(['chunked', 'Accept-Encoding']);
    expect(headers(head)).toEqual(rest);
    expect(head.headers.get('content-length')).toBeNull();
  });

  it('HEAD with Accept-Encoding gzip: the stream never read', async () => {
    const { port, streams } = await service();
    const url = `http://127.0.0.1:${port}/v1/stream`;
    const head = await fetch(url, { method: 'HEAD', headers: { 'x-api-key': KEY, 'accept-encoding': 'gzip' } });
    expect(head.status).toBe(200);
    await until(() => streams[0]?.closed === true);
    expect(streams[0]?.steps).toBe(0);
  });

  it('HEADs at once: no stream steps, every budget place free when they are answered', async () => {
    const { port, streams, budget } = await service();
    const heads = await Promise.all(
      Array.from({ length: 6 }, () => fetch(`http://127.0.0.1:${port}/v1/stream`, { method: 'HEAD', headers: { 'x-api-key': KEY } })),
    );
    expect(heads.map((head) => head.status)).toEqual(Array(6).fill(200));
    await until(() => streams.length === 6 && streams.every((counted) => counted.closed));
    expect(streams.map((counted) => counted.steps)).toEqual(Array(6).fill(0));
    await until(() => budget.load.running === 0 && budget.load.waiting === 0);
  });

  it('204 with a stream: no body, the stream never read', async () => {
    const { port, streams } = await service();
    const answer = await fetch(`http://127.0.0.1:${port}/v1/nothing`, { headers: { 'x-api-key': KEY } });
    expect(answer.status).toBe(204);
    await until(() => streams[0]?.closed === true);
    expect(streams[0]?.steps).toBe(0);
  });
});

describe('the budget place and the time bound of a streamed answer last as long as its stream works', () => {
  it('a client gone in the middle of a step: the place is held until the step has ended, then given back', async () => {
    const { port, streams, budget } = await service({ chunks: 1_000, stepMs: 400 });
    const sent = request({ host: '127.0.0.1', port, path: '/v1/stream', headers: { 'x-api-key': KEY } });
    sent.on('error', () => undefined);
    sent.on('response', (response) => response.resume());
    sent.end();
    await until(() => (streams[0]?.steps ?? 0) >= 2);
    sent.destroy();
    // The response closes and Fastify destroys the stream; the step under way goes on, and holds the place.
    await until(() => streams[0]?.stream.destroyed === true);
    expect(streams[0]?.running).toBe(1);
    expect(streams[0]?.closed).toBe(false);
    expect(budget.load.running).toBe(1);
    await until(() => streams[0]?.closed === true);
    await until(() => budget.load.running === 0);
    expect(streams[0]?.running).toBe(0);
  });

  it('an answer past its own time bound is cut, and its stream stops', async () => {
    const { port, streams, budget, logs } = await service({ chunks: 1_000, stepMs: 20, ownBoundMs: 300 });
    const started = Date.now();
    // Cut at 300 ms: in the middle of the body, or (on a busy machine) before its first bytes.
    await expect(fetch(`http://127.0.0.1:${port}/v1/stream`, { headers: { 'x-api-key': KEY } }).then((answer) => answer.arrayBuffer())).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(3_000);
    await until(() => streams[0]?.closed === true);
    expect(streams[0]?.steps).toBeLessThan(1_000);
    await until(() => budget.load.running === 0);
    expect(logs.raw.some((line) => line.includes('answer cut: still running at its time bound'))).toBe(true);
  });
});

describe('every answer is sent within its bound', () => {
  it('a client that does not read a large answer is cut at the send bound, and its place given back', async () => {
    const { port, budget, logs } = await service({ answerSendMaxMs: 300 });
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => undefined);
    socket.pause();
    socket.write(`GET /v1/large HTTP/1.1\r\nHost: test\r\nX-API-Key: ${KEY}\r\n\r\n`);
    await until(() => budget.load.running === 1);
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.resume();
    socket.pause();
    await until(() => budget.load.running === 0, 5_000);
    expect(logs.raw.some((line) => line.includes('answer cut: still running at its time bound'))).toBe(true);
    socket.resume();
    await closed;
  });

  it('a route\'s own bound replaces the send bound: a streamed answer longer than the send bound is whole', async () => {
    const { port } = await service({ chunks: 40, stepMs: 20, answerSendMaxMs: 200, ownBoundMs: 10_000 });
    const answer = await fetch(`http://127.0.0.1:${port}/v1/stream`, { headers: { 'x-api-key': KEY } });
    expect((await answer.arrayBuffer()).byteLength).toBe(40 * CHUNK.length);
  });

  it('a reader that takes a small answer at once is never cut', async () => {
    const { port, logs } = await service({ answerSendMaxMs: 100 });
    const answer = await fetch(`http://127.0.0.1:${port}/v1/small`, { headers: { 'x-api-key': KEY } });
    expect(answer.status).toBe(200);
    await pause(200);
    expect(logs.raw.some((line) => line.includes('answer cut'))).toBe(false);
  });
});
