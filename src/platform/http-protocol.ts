import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { setImmediate as nextTurn } from 'node:timers';
import { errorCodes, type FastifyReply, type FastifyRequest, type HookHandlerDoneFunction, type RequestPayload } from 'fastify';
import { ApiError } from './error-registry.js';
import { platformPlugin } from './platform-app.js';

/**
 * HTTP-layer refusals answered with the error object (the hostile-input decisions; docs/reliability.md).
 * Node's HTTP server answers some requests itself, with an empty body and no request id: an
 * HTTP/1.1 request without `Host` (400), an `Expect` other than `100-continue` (417). Here those
 * requests reach Fastify like any other (Node's `requireHostHeader` is off, see app.ts, and its
 * `checkExpectation` event is routed to Fastify's handler), and the platform's first `onRequest` hook
 * refuses them, so they get the error object, `X-Request-ID` and a log line.
 * `Expect: 100-continue` (Node's `checkContinue` event): `100 Continue` is sent only once the path,
 * the method, the key and the announced size are known to be acceptable (`preParsing`, after every
 * `onRequest` hook); otherwise the final answer goes out without it and the connection is closed.
 */
const expectsContinue = new WeakSet<IncomingMessage>();
const unsupportedExpectation = new WeakSet<IncomingMessage>();

type RequestListener = (request: IncomingMessage, response: ServerResponse) => void;

/** Hands `checkContinue` and `checkExpectation` requests to the server's `request` listeners, marked. */
export function routeExpectations(server: Server): void {
  const handlers = server.listeners('request') as RequestListener[];
  const handle = (marks: WeakSet<IncomingMessage>) => (request: IncomingMessage, response: ServerResponse) => {
    marks.add(request);
    for (const handler of handlers) handler(request, response);
  };
  server.on('checkContinue', handle(expectsContinue));
  server.on('checkExpectation', handle(unsupportedExpectation));
}

/** First onRequest hook: a request HTTP forbids, whatever its path. */
export function refuseMalformedRequests(request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void {
  const raw = request.raw;
  if (raw.httpVersion === '1.1' && raw.headers.host === undefined) {
    done(new ApiError('bad_request', { message: 'An HTTP/1.1 request must have a Host header', fields: ['Host'] }));
  } else if (unsupportedExpectation.has(raw)) {
    done(new ApiError('expectation_failed', { message: 'Expect must be 100-continue', fields: ['Expect'] }));
  } else {
    done();
  }
}

/** Whether the request announces a body (any method): a Content-Length other than 0, or chunked. */
export function announcesBody(request: IncomingMessage): boolean {
  const length = request.headers['content-length'];
  return (length !== undefined && length !== '0') || request.headers['transfer-encoding'] !== undefined;
}

/**
 * preParsing hook (after routing, 404, 405 and the key): a body in a `Content-Encoding` the service
 * does not decode is 415, never read as identity; then, for `Expect: 100-continue`, a body announced
 * over the limit is 413, and only otherwise is `100 Continue` sent.
 */
export function makeBodyAdmission(bodyLimit: number) {
  return function admitBody(request: FastifyRequest, reply: FastifyReply, payload: RequestPayload, done: (error: Error | null, payload?: RequestPayload) => void): void {
    const raw = request.raw;
    const encoding = raw.headers['content-encoding'];
    if (encoding !== undefined && announcesBody(raw) && encoding.trim().toLowerCase() !== 'identity') {
      done(new ApiError('unsupported_media_type', { message: 'Content-Encoding is not supported: send the body uncompressed', fields: ['Content-Encoding'] }));
      return;
    }
    if (expectsContinue.has(raw)) {
      if (Number(raw.headers['content-length'] ?? 0) > bodyLimit) {
        done(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE());
        return;
      }
      reply.raw.writeContinue();
    }
    done(null, payload);
  };
}

/**
 * onSend: an answer sent before the request's body arrived (405, 404, 401, 413 by Content-Length,
 * a GET's body) closes the connection, instead of reading a body nobody needs; an answer sent once
 * the body is in keeps it alive, also after a body that did not parse (Fastify's parser asks for
 * `Connection: close` on every parse error), unless the shutdown asked to close. Node emits a request as soon as its headers are parsed,
 * before the body bytes of the same packet: the check waits one turn of the event loop, so a body
 * that had already arrived counts as arrived.
 */
export function closeOnlyForUnreadBody(request: IncomingMessage, reply: FastifyReply, send: () => void): void {
  const settle = () => {
    if (request.complete) {
      // Only the parser's header (on the reply); a close asked on the raw response (the drain of a
      // shutdown, Fastify's 503 while closing) stays.
      if (!reply.raw.hasHeader('connection') && String(reply.getHeader('connection')).toLowerCase() === 'close') reply.removeHeader('connection');
    } else {
      reply.header('Connection', 'close');
    }
    send();
  };
  if (!announcesBody(request)) send();
  else if (request.complete) settle();
  else nextTurn(settle);
}

/**
 * The HTTP-layer rules as one concern: the first onRequest hook refuses what HTTP forbids, preParsing
 * admits the body, onSend closes a connection whose body was never read.
 */
export const httpProtocolPlugin = platformPlugin<{ bodyLimit: number }>('http-protocol', (app, { bodyLimit }) => {
  app.addHook('onRequest', refuseMalformedRequests);
  app.addHook('preParsing', makeBodyAdmission(bodyLimit));
  app.addHook('onSend', (request, reply, payload, done) => closeOnlyForUnreadBody(request.raw, reply, () => done(null, payload)));
});
