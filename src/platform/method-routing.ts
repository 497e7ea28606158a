import { METHODS } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { ApiError } from './error-registry.js';
import { CorsPolicy } from './cors.js';
import { platformPlugin } from './platform-app.js';

/**
 * 404 and 405 (conventions.md, "Every response"). Fastify answers 404 for a known path with another
 * method; the contracts need 405 `method_not_allowed` with an `Allow` header. Every route a service
 * registers is recorded, and once all are known, each path gets a route for the methods it lacks
 * that answers 405 (or, for OPTIONS with CORS enabled, the preflight).
 */
// TRACE and QUERY too: a known path answers 405 for any method it lacks (found by Schemathesis, ST204).
const STANDARD_METHODS = ['DELETE', 'GET', 'HEAD', 'PATCH', 'POST', 'PUT', 'OPTIONS', 'TRACE', 'QUERY'];

/**
 * Every method Node's parser accepts (PROPFIND, PURGE, SEARCH, LOCK, ...: the hostile-input decisions), the
 * standard ones first (the order of `Allow`). CONNECT is not routed: Node hands it to a `connect`
 * listener or closes the connection.
 */
export const ROUTABLE_METHODS: readonly string[] = [
  ...STANDARD_METHODS.filter((method) => METHODS.includes(method)),
  ...METHODS.filter((method) => !STANDARD_METHODS.includes(method) && method !== 'CONNECT'),
];

export class RouteTable {
  private readonly methodsByUrl = new Map<string, Set<string>>();

  record(route: RouteOptions): void {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    let known = this.methodsByUrl.get(route.url);
    if (!known) {
      known = new Set();
      this.methodsByUrl.set(route.url, known);
    }
    for (const method of methods) known.add(String(method).toUpperCase());
  }

  entries(): [string, ReadonlySet<string>][] {
    return [...this.methodsByUrl.entries()];
  }
}

function allowHeader(methods: ReadonlySet<string>): string {
  return ROUTABLE_METHODS.filter((method) => methods.has(method)).join(', ');
}

/** Adds the 405 routes; call after every route of the service has been registered. */
export function addMethodNotAllowedRoutes(app: FastifyInstance, table: RouteTable, cors: CorsPolicy): void {
  for (const [url] of table.entries()) {
    // Ask the router rather than the record: a prefixed '/docs' route also exists as '/docs/'.
    const present = new Set(ROUTABLE_METHODS.filter((method) => app.hasRoute({ url, method })));
    const missing = ROUTABLE_METHODS.filter((method) => !present.has(method));
    if (missing.length === 0) continue;
    const allow = allowHeader(present);
    app.route({
      method: missing,
      url,
      schema: { hide: true },
      config: { platformRoute: true },
      // Answered in onRequest, before any body is read or parsed: a wrong method is the first problem
      // of the request, whatever its body (a QUERY without Content-Type, invalid JSON, a large body).
      onRequest: async (request: FastifyRequest, reply: FastifyReply) => {
        if (request.method === 'OPTIONS' && cors.enabled && CorsPolicy.isPreflight(request)) {
          return cors.answerPreflight(request, reply);
        }
        throw new ApiError('method_not_allowed', { headers: { Allow: allow } });
      },
      // Fastify requires a handler; the onRequest hook above always answers first.
      handler: answeredInOnRequest,
    });
  }
}

/** The 405 routes' handler, which never runs: their onRequest hook answers every request. */
function answeredInOnRequest(): never {
  throw new Error('method routing: a 405 route reached its handler; onRequest answers these requests');
}

/** Unknown paths: 404 `not_found` with message `Not Found`. */
export function notFoundHandler(): never {
  throw new ApiError('not_found');
}

/** onRoute: records each route's methods, from which addMethodNotAllowedRoutes adds the 405 answers. */
export const routeTablePlugin = platformPlugin<{ routes: RouteTable }>('route-table', (app, { routes }) => {
  app.addHook('onRoute', (route) => routes.record(route));
});

/** onRequest: routing before the body, so an unknown path is 404 whatever its body, which is never read. */
export const unknownPathPlugin = platformPlugin('unknown-path', (app) => {
  app.addHook('onRequest', (request, _reply, done) => {
    done(request.is404 ? new ApiError('not_found') : undefined);
  });
});
