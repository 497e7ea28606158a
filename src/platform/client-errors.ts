import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { type ErrorCode, errorDefinition } from './error-registry.js';
import { errorBody } from './errors.js';
import { announcesBody } from './http-protocol.js';

/**
 * Requests that Node's HTTP parser refuses before Fastify sees them (docs/reliability.md): headers
 * (the URL included) over Node's 16 KiB limit, malformed request lines or headers (a bare CR in a
 * header value), a request not complete within the request timeout. Fastify's default answer has
 * its own body shape; here they get the error object, with a new request id (the request was never
 * parsed, so the client's X-Request-ID cannot be trusted) and `Connection: close`, and one log line.
 *
 * | Node's error                 | status | code                      |
 * | HPE_HEADER_OVERFLOW          | 431    | request_header_too_large  |
 * | ERR_HTTP_REQUEST_TIMEOUT     | 408    | request_timeout           |
 * | anything else                | 400    | bad_request               |
 */
function clientErrorCode(error: NodeJS.ErrnoException): ErrorCode {
  if (error.code === 'HPE_HEADER_OVERFLOW') return 'request_header_too_large';
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') return 'request_timeout';
  return 'bad_request';
}

export function handleClientError(this: FastifyInstance, error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const code = clientErrorCode(error);
  const requestId = randomUUID();
  this.log.info({ request_id: requestId, status: errorDefinition(code).status, reason: error.code ?? 'unknown' }, 'client error');
  writeRawErrorAndClose(socket, code, requestId);
}

/** Writes the error object straight on the socket (no response was started) and closes it. */
function writeRawErrorAndClose(socket: Socket, code: ErrorCode, requestId: string): void {
  const { status, message } = errorDefinition(code);
  const body = JSON.stringify(errorBody(code, message, requestId));
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-ID: ${requestId}\r\n` +
        'X-Content-Type-Options: nosniff\r\n' +
        'Connection: close\r\n\r\n' +
        body,
    );
  }
  socket.destroy();
}

/**
 * Fastify's own refusals before routing (its option `frameworkErrors`): a path parameter longer than
 * the router's limit (200 characters) is 414 `uri_too_long`, a URL whose percent-encoding is broken
 * is 400 `bad_request`. Fastify's default answers have another body shape and echo the whole URL.
 * No hook runs for these requests, so the headers and the log line are written here.
 */
export function handleFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const code: ErrorCode = error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 'uri_too_long' : 'bad_request';
  const status = errorDefinition(code).status;
  const body = errorBody(code, code === 'uri_too_long' ? errorDefinition(code).message : 'The URL is not valid', request.id);
  request.log.info({ method: request.method, path: '(refused URL)', status, request_id: request.id }, 'request');
  void reply
    .code(status)
    .header('X-Request-ID', request.id)
    .header('X-Content-Type-Options', 'nosniff')
    .type('application/json; charset=utf-8')
    .send(body);
}

/**
 * A request body must arrive completely within the time limit of the request's start, whatever the
 * method (the hostile-input decisions: a GET announcing 1 GB and trickling it was not cut off). Node's
 * requestTimeout cuts off slow headers, but a body trickled in a byte a second was not cut off (found
 * by bench/reliability.ts); after the limit the client gets 408 `request_timeout` and the connection
 * is closed (only closed when an answer was already sent: a GET is answered without its body). Every
 * request that announces a body is watched from onRequest until its body is complete, or its
 * connection closed; one sweep every 250 ms looks for the late ones, so a request costs a map entry,
 * not a timer and listeners of its own.
 */
export class BodyDeadlines {
  private readonly pending = new Map<FastifyRequest, { deadline: number; reply: FastifyReply }>();
  private sweeper: NodeJS.Timeout | undefined;

  constructor(private readonly timeoutMs: number) {}

  /** onRequest hook. */
  readonly watch = (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void => {
    const raw = request.raw;
    // Fastify's inject (light-my-request) has no real socket to cut off.
    if (announcesBody(raw) && !raw.complete && typeof raw.socket.destroy === 'function') {
      this.pending.set(request, { deadline: Date.now() + this.timeoutMs, reply });
      this.sweeper ??= setInterval(() => this.cutOffLateBodies(), 250).unref();
    }
    done();
  };

  /** preValidation and onResponse hook: the watch ends once the body is in (not when the answer is). */
  readonly release = (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void => {
    if (request.raw.complete) this.pending.delete(request);
    done();
  };

  /** onRequestAbort hook: the client went away. */
  readonly forget = (request: FastifyRequest, done: HookHandlerDoneFunction): void => {
    this.pending.delete(request);
    done();
  };

  /** onClose hook. */
  stop(): void {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = undefined;
    this.pending.clear();
  }

  private cutOffLateBodies(): void {
    const now = Date.now();
    for (const [request, { deadline, reply }] of this.pending) {
      const raw = request.raw;
      if (raw.complete || raw.socket.destroyed) {
        this.pending.delete(request);
      } else if (now >= deadline) {
        this.pending.delete(request);
        if (reply.raw.headersSent) {
          raw.socket.destroy();
          continue;
        }
        request.log.info({ method: request.method, path: request.url.split('?')[0], status: 408 }, 'request');
        writeRawErrorAndClose(raw.socket, 'request_timeout', request.id);
      }
    }
  }
}
