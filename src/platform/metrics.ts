import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { createRequire } from 'node:module';
import type { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type * as PromClient from 'prom-client';
import { ApiKeyChecker, keyOfRequest } from './api-key.js';
import { ApiError } from './error-registry.js';
import { platformPlugin } from './platform-app.js';
import { PRINTABLE_TOKEN, SettingsError, readText, type Env } from './setting-readers.js';

/**
 * GET /metrics in the Prometheus text format (prom-client), for operators, not for API clients:
 *
 * - off unless `METRICS_KEY` is set (then /metrics answers 404 like any unknown path, and nothing
 *   is counted: no cost per request);
 * - with `METRICS_KEY` set, /metrics answers only `Authorization: Bearer <METRICS_KEY>` (the scheme in any case; what
 *   Prometheus sends with `authorization: {credentials: ...}` in a scrape config), 401 otherwise;
 * - never in the OpenAPI description, never rate limited.
 *
 * Every series carries `service`. Per request: `http_requests_total{route, method, status}` (route is
 * the route template, `/v1/service-requests/:id`, never the raw path; unknown paths are `unmatched`),
 * `http_request_duration_seconds{route, method}` and `http_requests_in_flight`; per API key (when keys
 * are checked), `api_key_requests_total{key_id}` and `api_key_refusals_total{key_id, reason}`, whose
 * `key_id` is an id of the key file, `anonymous` (a key of API_KEY) or `refused` (no key, or one not
 * known): never a key, never a label a client chooses; the process metrics of prom-client; and what
 * each service adds (model, snapshot, pool, classifier).
 */
export const METRICS_PATH = '/metrics';

/** A METRICS_KEY shorter than this is refused: the metrics endpoint must not be guessable. */
export const METRICS_KEY_MIN_LENGTH = 16;

const METRICS_KEY_SHAPE = {
  expected: `a key of at least ${METRICS_KEY_MIN_LENGTH} printable ASCII characters without spaces`,
  secret: true,
};

/** METRICS_KEY through the shared reader (settings.ts): unset means no /metrics; set but unusable stops the start. */
export function readMetricsKey(env: Env): string | null {
  const key = readText(env, 'METRICS_KEY', METRICS_KEY_SHAPE);
  if (key === undefined) return null;
  if (!PRINTABLE_TOKEN.test(key) || key.length < METRICS_KEY_MIN_LENGTH) {
    throw new SettingsError('METRICS_KEY', `the value is not ${METRICS_KEY_SHAPE.expected}`);
  }
  return key;
}

const require = createRequire(import.meta.url);

/** prom-client, loaded when METRICS_KEY is set, not at every start (its loading is a visible part of a start). */
function promClient(): typeof PromClient {
  return require('prom-client') as typeof PromClient;
}

/** What a service adds to its registry (gauges read when scraped). */
export type ServiceMetricsRegistration = (registry: Registry) => void;

/** Latency buckets in seconds: the services answer in well under a millisecond to a few hundred. */
const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10];

interface RouteSeries {
  requests: { inc(): void };
}

/** The id a request is counted under per key: the file's id, `anonymous`, or `refused` when no key was known. */
const REFUSED_KEY_ID = 'refused';

/**
 * The per-key series: every request whose key was looked at, and each refusal with its reason (401:
 * missing, mistyped, unknown, revoked, expired, not_for_service; 429: rate_limited). The ids are those
 * of the key file, so the series stay as few as the keys.
 */
class KeyMetrics {
  private readonly requests: Counter<'key_id'>;
  private readonly refusals: Counter<'key_id' | 'reason'>;
  private readonly requestsById = new Map<string, { inc(): void }>();
  private readonly refusalsById = new Map<string, { inc(): void }>();

  constructor(registry: Registry) {
    const { Counter } = promClient();
    this.requests = new Counter({
      name: 'api_key_requests_total',
      help: 'Requests whose API key was looked at, by key id (anonymous: a key of API_KEY; refused: no key, or an unknown one)',
      labelNames: ['key_id'],
      registers: [registry],
    });
    this.refusals = new Counter({
      name: 'api_key_refusals_total',
      help: 'Requests refused, by key id and reason (401 with why the key was refused, or 429 rate_limited)',
      labelNames: ['key_id', 'reason'],
      registers: [registry],
    });
  }

  count(request: FastifyRequest, status: number): void {
    // A 429 is a refusal whatever the route; otherwise as the log line (an open route's missing key is none).
    const identity = status === 429 ? request.apiKeyIdentity : keyOfRequest(request);
    if (identity === null || identity.kind === 'open') return;
    const id = identity.kind === 'accepted' ? identity.id : (identity.id ?? REFUSED_KEY_ID);
    let requests = this.requestsById.get(id);
    if (requests === undefined) this.requestsById.set(id, (requests = this.requests.labels(id)));
    requests.inc();
    const reason = status === 429 ? 'rate_limited' : status === 401 && identity.kind === 'refused' ? identity.reason : undefined;
    if (reason === undefined) return;
    const series = `${id} ${reason}`;
    let refusals = this.refusalsById.get(series);
    if (refusals === undefined) this.refusalsById.set(series, (refusals = this.refusals.labels(id, reason)));
    refusals.inc();
  }
}

/** The per-request series; the label children are looked up once per (route, method, status). */
class RequestMetrics {
  private readonly requests: Counter<'route' | 'method' | 'status'>;
  private readonly durations: Histogram<'route' | 'method'>;
  private readonly byKey = new Map<string, RouteSeries>();
  private readonly durationByKey = new Map<string, { observe(value: number): void }>();
  private readonly keys: KeyMetrics;
  private inFlight = 0;

  constructor(registry: Registry) {
    this.keys = new KeyMetrics(registry);
    const { Counter, Gauge, Histogram } = promClient();
    this.requests = new Counter({
      name: 'http_requests_total',
      help: 'Requests answered, by route template, method and status',
      labelNames: ['route', 'method', 'status'],
      registers: [registry],
    });
    this.durations = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'Time from the first byte of the request to the answer, by route template and method',
      labelNames: ['route', 'method'],
      buckets: DURATION_BUCKETS,
      registers: [registry],
    });
    const inFlight = (): number => this.inFlight;
    new Gauge({
      name: 'http_requests_in_flight',
      help: 'Requests received and not answered yet',
      registers: [registry],
      collect() {
        this.set(inFlight());
      },
    });
  }

  readonly started = (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void => {
    this.inFlight += 1;
    request.metricsInFlight = true;
    done();
  };

  /** onRequestAbort: the client went away before the answer; onResponse will not come. */
  readonly aborted = (request: FastifyRequest, done: HookHandlerDoneFunction): void => {
    this.finish(request);
    done();
  };

  readonly answered = (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void => {
    this.finish(request);
    const route = request.routeOptions.url ?? 'unmatched';
    const method = request.method;
    const status = reply.statusCode;
    const key = `${method} ${status} ${route}`;
    let series = this.byKey.get(key);
    if (series === undefined) {
      series = { requests: this.requests.labels(route, method, String(status)) };
      this.byKey.set(key, series);
    }
    series.requests.inc();
    const durationKey = `${method} ${route}`;
    let duration = this.durationByKey.get(durationKey);
    if (duration === undefined) {
      duration = this.durations.labels(route, method);
      this.durationByKey.set(durationKey, duration);
    }
    duration.observe(reply.elapsedTime / 1000);
    this.keys.count(request, status);
    done();
  };

  private finish(request: FastifyRequest): void {
    if (!request.metricsInFlight) return;
    request.metricsInFlight = false;
    this.inFlight -= 1;
  }
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Counted in http_requests_in_flight and not yet answered. */
    metricsInFlight: boolean;
  }
}

/**
 * `Authorization: Bearer <key>`: the scheme in any case (`bearer`, `BEARER`: auth schemes are
 * case-insensitive, RFC 9110 11.1), then one or more spaces and the credentials (11.4).
 */
const BEARER_CREDENTIALS = /^bearer +(\S+)$/i;

/** The bearer key of an Authorization header, compared in constant time like the API keys. */
function bearerMatches(header: unknown, expected: ApiKeyChecker): boolean {
  const key = typeof header === 'string' ? BEARER_CREDENTIALS.exec(header)?.[1] : undefined;
  return key !== undefined && expected.accepts(key);
}

interface MetricsOptions {
  service: string;
  /** METRICS_KEY; null or unset: no /metrics and nothing counted. */
  metricsKey: string | null | undefined;
  addServiceMetrics: ServiceMetricsRegistration | undefined;
}

/**
 * Counts every request of the app (onRequest, onRequestAbort, onResponse) and adds GET /metrics, when
 * METRICS_KEY is set. Registered before the service's routes, so that the hooks apply to them all.
 */
export const metricsPlugin = platformPlugin<MetricsOptions>('metrics', (app, { service, metricsKey, addServiceMetrics }) => {
  if (!metricsKey) return;
  const { Registry, collectDefaultMetrics } = promClient();
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  addServiceMetrics?.(registry);

  const requests = new RequestMetrics(registry);
  app.decorateRequest('metricsInFlight', false);
  app.addHook('onRequest', requests.started);
  app.addHook('onRequestAbort', requests.aborted);
  app.addHook('onResponse', requests.answered);

  const expected = new ApiKeyChecker([metricsKey]);
  app.get(METRICS_PATH, { schema: { hide: true }, config: { platformRoute: true } }, async (request, reply) => {
    if (!bearerMatches(request.headers.authorization, expected)) {
      throw new ApiError('unauthorized', { message: 'Missing or invalid metrics key', headers: { 'WWW-Authenticate': 'Bearer' } });
    }
    return reply.type(registry.contentType).header('Cache-Control', 'no-store').send(await registry.metrics());
  });
});

/** A gauge whose value is read when scraped (model loaded, snapshot rows, pool use...). */
export function gaugeReadOnScrape<Label extends string>(
  registry: Registry,
  definition: { name: string; help: string; labelNames?: readonly Label[] },
  read: (gauge: Gauge<Label>) => void | Promise<void>,
): void {
  const { Gauge } = promClient();
  new Gauge<Label>({
    name: definition.name,
    help: definition.help,
    labelNames: definition.labelNames ?? [],
    registers: [registry],
    async collect() {
      this.reset();
      await read(this);
    },
  });
}
