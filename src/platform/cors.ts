import type { FastifyReply, FastifyRequest } from 'fastify';
import { platformPlugin } from './platform-app.js';
import { addVary } from './vary.js';

/**
 * Browser access (ticket-classifier.md, "Browser access (CORS)"; the same in all three services).
 * Written by hand rather than with @fastify/cors, whose answers differ from the contract
 * (it answers a foreign preflight with 204).
 *
 * | situation                                   | answer                                                 |
 * | no origins configured, preflight           | 405 method_not_allowed (browsers then block the page)  |
 * | preflight from a listed origin              | 200, Access-Control-Allow-Origin = that origin         |
 * | preflight from another origin               | 400 text/plain "Disallowed CORS origin", no allow-origin |
 * | real request with any Origin                | processed normally; allow-origin only for a listed one |
 *
 * The methods a preflight allows are the service's own: GET and POST for tickets and houses (as the
 * contract says), GET only for the read-only requests service. Answers to a listed origin expose the
 * headers a page may want to read (request id, ETag, rate-limit headers, and Link: the next page of
 * the requests service's CSV pages). With CORS on, every answer
 * depends on the Origin, so every answer carries `Vary: Origin`.
 */
export const ALLOWED_METHODS = 'GET, POST';
export const EXPOSED_HEADERS = 'X-Request-ID, ETag, Link, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, Retry-After';
export const ALLOWED_HEADERS = 'Content-Type, X-API-Key';
export const DISALLOWED_ORIGIN_TEXT = 'Disallowed CORS origin';
const PREFLIGHT_MAX_AGE_SECONDS = '600';

export class CorsPolicy {
  private readonly origins: ReadonlySet<string>;

  /** `allowedMethods`: the methods a preflight allows, e.g. `GET, POST` or `GET`. */
  constructor(
    allowedOrigins: readonly string[],
    private readonly allowedMethods: string = ALLOWED_METHODS,
  ) {
    this.origins = new Set(allowedOrigins.map((origin) => origin.trim()));
  }

  get enabled(): boolean {
    return this.origins.size > 0;
  }

  allows(origin: unknown): origin is string {
    return typeof origin === 'string' && this.origins.has(origin);
  }

  /** A CORS preflight: OPTIONS with Origin and Access-Control-Request-Method. */
  static isPreflight(request: FastifyRequest): boolean {
    return (
      request.method === 'OPTIONS' &&
      request.headers.origin !== undefined &&
      request.headers['access-control-request-method'] !== undefined
    );
  }

  /** Headers for a real (non-preflight) request; called for every response. */
  decorate(request: FastifyRequest, reply: FastifyReply): void {
    if (!this.enabled) return;
    addVary(reply, 'Origin');
    const origin = request.headers.origin;
    if (this.allows(origin)) {
      reply.header('Access-Control-Allow-Origin', origin);
      reply.header('Access-Control-Expose-Headers', EXPOSED_HEADERS);
    }
  }

  /** Answers a preflight; only called when CORS is enabled and the path exists. */
  answerPreflight(request: FastifyRequest, reply: FastifyReply): FastifyReply {
    const origin = request.headers.origin;
    addVary(reply, 'Origin');
    if (!this.allows(origin)) {
      reply.removeHeader('Access-Control-Allow-Origin');
      return reply.code(400).type('text/plain; charset=utf-8').send(DISALLOWED_ORIGIN_TEXT);
    }
    return reply
      .code(200)
      .header('Access-Control-Allow-Origin', origin)
      .header('Access-Control-Allow-Methods', this.allowedMethods)
      .header('Access-Control-Allow-Headers', ALLOWED_HEADERS)
      .header('Access-Control-Max-Age', PREFLIGHT_MAX_AGE_SECONDS)
      .header('Content-Length', '0')
      .send();
  }
}

/** onRequest: every answer gets the CORS headers of its Origin (the preflights are answered by method-routing.ts). */
export const corsPlugin = platformPlugin<{ cors: CorsPolicy }>('cors', (app, { cors }) => {
  app.addHook('onRequest', (request, reply, done) => {
    cors.decorate(request, reply);
    done();
  });
});
