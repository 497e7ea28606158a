import Fastify, { LogController, type FastifyServerOptions } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { createRequire } from 'node:module';
import type { Writable } from 'node:stream';
import { ApiKeyChecker, apiKeyPlugin } from './api-key.js';
import { bodyDeadlinesPlugin } from './body-deadlines.js';
import { compressionPlugin } from './compression.js';
import { handleClientError, handleFrameworkError } from './client-errors.js';
import { BACKPRESSURE_LIMITS, ConnectionBackpressure, type BackpressureLimits } from './connection-backpressure.js';
import { CorsPolicy, corsPlugin } from './cors.js';
import { htmlPolicyPlugin, registerDocsPages, registerOpenApi, type OpenApiInfo } from './docs.js';
import { errorDefinition } from './error-registry.js';
import { ErrorResponse } from './errors.js';
import { makeErrorHandler } from './error-handler.js';
import { httpProtocolPlugin, routeExpectations } from './http-protocol.js';
import { RouteTable, ROUTABLE_METHODS, addMethodNotAllowedRoutes, notFoundHandler, routeTablePlugin, unknownPathPlugin } from './method-routing.js';
import { jsonBodyPlugin } from './json-body.js';
import { metricsPlugin, type ServiceMetricsRegistration } from './metrics.js';
import type { PlatformApp } from './platform-app.js';
import { rateLimitPlugin } from './rate-limit.js';
import { loggerOptions, requestLogPlugin } from './request-log.js';
import { requestIdFor } from './request-id.js';
import { responseHeadersPlugin } from './response-headers.js';
import { SHUTDOWN_GRACE_DEFAULT_MS, type PlatformSettings } from './settings.js';
import { rememberStartLine } from './start-line.js';
import { buildValidatorCompiler } from './validation.js';
import { DeferredCompilation } from './deferred-compilation.js';
import { DocumentedOperations, documentedOperationsPlugin, type ComponentSchema } from './openapi-components.js';
import { workBudgetPlugin } from './work-budget.js';

type SerializerFactory = NonNullable<NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>['buildSerializer']>;

/**
 * Fastify's own serializer factory (fast-json-stringify), taken from where Fastify itself requires it,
 * so that each route's serializer can be compiled later (deferred-compilation.ts) by the same code.
 */
const fastifyRequire = createRequire(createRequire(import.meta.url).resolve('fastify'));
const defaultSerializerFactory = fastifyRequire('@fastify/fast-json-stringify-compiler') as () => SerializerFactory;

/** The serializer factory of an app whose serializers are compiled on first use or after it listens. */
function deferredSerializerFactory(deferred: DeferredCompilation): SerializerFactory {
  const build = defaultSerializerFactory();
  return (externalSchemas, options) => {
    const compilerOf = build(externalSchemas, options);
    return (route) => deferred.serializer(() => compilerOf(route));
  };
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The schema compilation left for after the service listens (deferred-compilation.ts). */
    deferredCompilation: DeferredCompilation;
  }
  interface FastifyContextConfig {
    /** A route of the platform itself (docs, 405 answers), not of the service. */
    platformRoute?: boolean;
  }
}

/** The whole request (headers and body) must arrive within this time (408 request_timeout). */
export const REQUEST_TIMEOUT_MS = 10_000;

/** Maximum request body: 64 KiB, checked before validation (413 body_too_large). */
export const BODY_LIMIT_BYTES = 64 * 1024;

/** What a service gives the platform. */
export interface ServiceDefinition {
  /** `tickets`, `houses`, `requests`: the `service` field of every log line and metric. */
  name: string;
  openapi: OpenApiInfo;
  /**
   * The service's named schemas (each with a `$id`): OpenAPI components, referenced from routes with
   * componentRef. Listed once here, they are known to validation, serialization and the description.
   */
  components?: readonly ComponentSchema[];
  /** The methods a CORS preflight allows (default `GET, POST`; `GET` for a read-only service). */
  corsMethods?: string;
  /** Adds the service's own gauges to its metrics registry (only when METRICS_KEY is set). */
  registerMetrics?: ServiceMetricsRegistration;
  /**
   * Adds the service's routes. Routes that need a key set `config: { requiresApiKey: true }`. Every
   * route in the description needs `schema.operationId` and a description of each response.
   */
  registerRoutes(app: PlatformApp): void | Promise<void>;
}

export interface AppOptions {
  /** Where log lines go (tests capture them); default stdout. */
  logStream?: Writable;
  /** false silences the logger entirely. */
  logger?: boolean;
  /** Time a request body has to arrive completely (default REQUEST_TIMEOUT_MS); tests shorten it. */
  bodyTimeoutMs?: number;
  /** Limits of the pipelining backpressure (default BACKPRESSURE_LIMITS); tests shorten them. */
  backpressure?: Partial<BackpressureLimits>;
}

/**
 * Builds a service on the shared platform: request ids, the log line per request, errors as the error
 * object, API keys, CORS, 404/405, the body limit, the docs pages. The service adds only its routes.
 */
export async function createServiceApp(
  service: ServiceDefinition,
  settings: PlatformSettings,
  options: AppOptions = {},
): Promise<PlatformApp> {
  const deferred = new DeferredCompilation();
  const app = newFastify(service, settings, options, deferred);
  guardConnections(app, options);
  routeEveryParsedMethod(app);
  app.setErrorHandler(makeErrorHandler(BODY_LIMIT_BYTES));
  app.setNotFoundHandler(notFoundHandler);
  addSharedSchemas(app, service, deferred);
  app.decorate('deferredCompilation', deferred);
  app.decorate('shutdownGraceMs', settings.shutdownGraceMs ?? SHUTDOWN_GRACE_DEFAULT_MS);

  const concerns: PlatformConcerns = {
    apiKeys: new ApiKeyChecker(settings.apiKeys),
    cors: new CorsPolicy(settings.allowedOrigins, service.corsMethods),
    routes: new RouteTable(),
    operations: new DocumentedOperations(service.openapi.usesApiKey),
  };
  await registerPlatformConcerns(app, service, settings, options, concerns);
  await registerServiceRoutes(app, service, settings, concerns);

  if (!concerns.apiKeys.enforced && service.openapi.usesApiKey) {
    app.log.warn('API_KEY is not set: no API key is enforced');
  }
  return app;
}

/** The Fastify instance with the platform's server options: limits, timeouts, error answers, logging. */
function newFastify(service: ServiceDefinition, settings: PlatformSettings, options: AppOptions, deferred: DeferredCompilation): PlatformApp {
  return Fastify({
    // Validators and serializers are compiled on first use or after the service listens, not before.
    schemaController: { compilersFactory: { buildSerializer: deferredSerializerFactory(deferred) } },
    logger: options.logger === false ? false : loggerOptions(service.name, settings.logLevel, options.logStream),
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'request_id' }),
    genReqId: requestIdFor,
    bodyLimit: BODY_LIMIT_BYTES,
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    // Slow clients are cut off instead of holding sockets: the whole request within 10 s,
    // an idle socket after 30 s, idle keep-alive sockets after 5 s.
    requestTimeout: REQUEST_TIMEOUT_MS,
    // Node checks those timeouts every 30 s by default: a slow client then holds a socket up to 40 s.
    // A missing Host is refused by the platform (http-protocol.ts), with the error object.
    http: { connectionsCheckingInterval: 1_000, requireHostHeader: false },
    connectionTimeout: 30_000,
    keepAliveTimeout: 5_000,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    // Requests refused by Node's HTTP parser (headers over 16 KiB, malformed) get the error object.
    clientErrorHandler: handleClientError,
    // A path parameter over 200 characters, a broken percent-encoding: the error object too.
    frameworkErrors: handleFrameworkError,
    // The answer is worded from the ajv errors themselves (error-handler.ts); Fastify's own text of
    // every error would only cost time on a body with thousands of them.
    schemaErrorFormatter: () => new Error(errorDefinition('invalid_request').message),
    routerOptions: { ignoreTrailingSlash: false, ignoreDuplicateSlashes: false, maxParamLength: 200 },
  }).withTypeProvider<TypeBoxTypeProvider>();
}

/**
 * Expect headers reach Fastify's handler; pipelined requests are handed to it one at a time per
 * connection, as its answers are read.
 */
function guardConnections(app: PlatformApp, options: AppOptions): void {
  routeExpectations(app.server);
  new ConnectionBackpressure({ ...BACKPRESSURE_LIMITS, ...options.backpressure }).install(app.server);
}

/**
 * Every method Node parses is routed, so that a known path answers 405 to any other (CONNECT is
 * never routed: Node closes such a connection itself).
 */
function routeEveryParsedMethod(app: PlatformApp): void {
  for (const method of ROUTABLE_METHODS) {
    if (!app.supportedMethods.includes(method)) app.addHttpMethod(method, { hasBody: true });
  }
}

/** The shared schemas (the OpenAPI components), known to validation so that routes may use $ref. */
function addSharedSchemas(app: PlatformApp, service: ServiceDefinition, deferred: DeferredCompilation): void {
  const components = [ErrorResponse, ...(service.components ?? [])];
  for (const component of components) app.addSchema(component);
  app.setValidatorCompiler(buildValidatorCompiler(components, deferred));
}

/** What several concerns share: the keys, the CORS policy, the routes' methods, the documented operations. */
interface PlatformConcerns {
  apiKeys: ApiKeyChecker;
  cors: CorsPolicy;
  routes: RouteTable;
  operations: DocumentedOperations;
}

/** The platform's concerns, in the order their hooks run (within each kind of hook). */
async function registerPlatformConcerns(
  app: PlatformApp,
  service: ServiceDefinition,
  settings: PlatformSettings,
  options: AppOptions,
  { apiKeys, cors, routes, operations }: PlatformConcerns,
): Promise<void> {
  const bodyLimit = BODY_LIMIT_BYTES;
  // onRoute: each route's methods are recorded, for the 405 answers added after the service's routes.
  await app.register(routeTablePlugin, { routes });
  // onRoute: each documented route is checked (operationId, answers) as it is added.
  await app.register(documentedOperationsPlugin, { operations });
  // First onRequest: what HTTP forbids (no Host, an unknown Expect); the body's admission; unread bodies close.
  await app.register(httpProtocolPlugin, { bodyLimit });
  // A body must arrive within the request's time limit (408 request_timeout).
  await app.register(bodyDeadlinesPlugin, { timeoutMs: options.bodyTimeoutMs ?? REQUEST_TIMEOUT_MS });
  // Every request counted, and GET /metrics, when METRICS_KEY is set.
  await app.register(metricsPlugin, { service: service.name, metricsKey: settings.metricsKey, addServiceMetrics: service.registerMetrics });
  // X-Request-ID and nosniff on every answer, errors included.
  await app.register(responseHeadersPlugin);
  // CORS headers for the request's Origin.
  await app.register(corsPlugin, { cors });
  // An unknown path is 404 before its body is read.
  await app.register(unknownPathPlugin);
  // The rate limit, before the key check so that 401 answers count too.
  await app.register(rateLimitPlugin, { service: service.name, settings: settings.rateLimit, apiKeys });
  // 401 for a route that requires a key, before its body is read.
  await app.register(apiKeyPlugin, { apiKeys });
  // A route's work budget: 503 overloaded when full, otherwise the handler waits for its place.
  await app.register(workBudgetPlugin);
  // JSON bodies only, parsed strictly; unusable query and path parameters are 422.
  await app.register(jsonBodyPlugin, { bodyLimit });
  // The content security policy of every HTML page.
  await app.register(htmlPolicyPlugin);
  // The one log line of each request.
  await app.register(requestLogPlugin);
  // gzip and brotli answers, Vary: Accept-Encoding and ETags per encoding.
  await app.register(compressionPlugin);
}

/** The service's routes between the OpenAPI description and the docs pages, then the 405 answers of its paths. */
async function registerServiceRoutes(app: PlatformApp, service: ServiceDefinition, settings: PlatformSettings, { routes, cors, operations }: PlatformConcerns): Promise<void> {
  if (settings.showDocs) await registerOpenApi(app, service.openapi, operations);
  await service.registerRoutes(app);
  if (settings.showDocs) await registerDocsPages(app, service.openapi);
  await app.after();
  addMethodNotAllowedRoutes(app, routes, cors);
  rememberStartLine(app, { showDocs: settings.showDocs, metrics: Boolean(settings.metricsKey) });
}
