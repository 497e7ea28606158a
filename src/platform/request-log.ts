import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { hostname } from 'node:os';
import type { Writable } from 'node:stream';
import pino from 'pino';
import { keyLogFields } from './api-key.js';
import { platformPlugin } from './platform-app.js';
import type { LogLevel } from './settings.js';

/**
 * Logs (conventions.md): pino, Fastify's own logger, one JSON line per request on stdout with method,
 * path, status, duration in milliseconds and the request id, the client's address (the connection's,
 * or what a proxy of TRUSTED_PROXIES says it is) and, when the request's API key was looked at, the
 * key's id (`key_id`: an id of the key file, or `anonymous` for a key of API_KEY) and why it was
 * refused (`key_refused`). Never an API key, never a request body:
 * Fastify's own request logging is off (it would log headers), the line is built from chosen fields
 * only, the path is logged without its query string, and any header that might slip into a log
 * object is redacted.
 */
/**
 * Where the lines go: stdout through an asynchronous pino destination. A line is written at once when
 * stdout is free; under load, the lines that arrive while a write is in flight go out together in the
 * next write instead of one system call each. pino flushes what is left when the process exits.
 * Tests pass their own stream.
 */
export function stdoutLogDestination() {
  return pino.destination({ dest: 1, sync: false });
}

/**
 * `service` names the service on every line (`"service": "tickets"`), so that the lines of `npm start`,
 * which runs the three services in one process, can be told apart. `level`: the LOG_LEVEL setting,
 * read and checked with the other settings (settings.ts).
 */
export function loggerOptions(service: string, level: LogLevel, stream?: Writable) {
  return {
    level,
    base: { pid: process.pid, hostname: hostname(), service },
    redact: {
      paths: ['req.headers["x-api-key"]', 'headers["x-api-key"]', 'req.headers.authorization', 'headers.authorization', 'body', 'req.body'],
      censor: '[redacted]',
    },
    stream: stream ?? stdoutLogDestination(),
  };
}

export function pathOf(url: string): string {
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

/** onResponse hook: the one line per request (the request id is bound to request.log as `request_id`). */
export function logRequest(request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void {
  request.log.info(
    {
      method: request.method,
      path: pathOf(request.url),
      status: reply.statusCode,
      duration_ms: Math.round(reply.elapsedTime * 1000) / 1000,
      client_address: request.ip,
      ...keyLogFields(request),
    },
    'request',
  );
  done();
}

/** onResponse: the log line of every request, after every other onResponse hook. */
export const requestLogPlugin = platformPlugin('request-log', (app) => {
  app.addHook('onResponse', logRequest);
});
