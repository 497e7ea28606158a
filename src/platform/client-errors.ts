import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type ErrorCode, errorDefinition } from './error-registry.js';
import { errorBody } from './errors.js';

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
export function writeRawErrorAndClose(socket: Socket, code: ErrorCode, requestId: string): void {
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
