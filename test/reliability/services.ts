import { existsSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import type { Writable } from 'node:stream';
import { afterEach, expect } from 'vitest';
import type { AppOptions } from '../../src/platform/app.js';
import type { PlatformApp } from '../../src/platform/platform-app.js';
import { SAMPLE_HOUSE } from '../../src/services/houses/house.js';
import { duringSuite } from '../support/during-suite.js';
import { REPO_ROOT } from '../support/http.js';

/**
 * The services under the reliability tests, table-driven: each entry builds its service in-process
 * (Fastify inject, or app.listen on a free loopback port for raw sockets). A service whose app.ts is
 * not in the repository yet is listed with `available: false` and its tests are skipped.
 */
export interface JsonEndpoint {
  path: string;
  /** A body that the service accepts (200). */
  validBody: Record<string, unknown>;
  /** A string field of validBody, and a number field (the same for tickets, which has none). */
  stringField: string;
  numberField: string;
}

export interface BuildOptions {
  dataCopies?: number;
  /** More settings (API_KEYS_FILE, RATE_LIMIT, METRICS_KEY...). */
  env?: Record<string, string>;
  appOptions?: Pick<AppOptions, 'backpressure' | 'bodyTimeoutMs'>;
}

/** The app options of a service under test: its log lines to `logs` (or none), and shortened limits. */
function appOptionsFor(logs: Writable | undefined, extra: BuildOptions | undefined): AppOptions {
  return { ...(logs ? { logStream: logs } : { logger: false }), ...extra?.appOptions };
}

export interface ServiceUnderTest {
  name: 'tickets' | 'houses' | 'requests';
  available: boolean;
  /**
   * Builds the service with these keys (API_KEY) and its log lines written to `logs`. `dataCopies`
   * (requests only) serves that many copies of the fixture rows, for answers of realistic size;
   * `appOptions` shortens the platform's limits.
   */
  build(apiKey: string, logs?: Writable, extra?: BuildOptions): Promise<{ app: PlatformApp; cleanup: () => Promise<void> }>;
  /** A POST with a JSON body, or undefined when the service has none (requests: GET only). */
  json?: JsonEndpoint;
  /** A GET that needs the key and answers 200 with it. */
  keyedGet: string;
  /** A path with an id, for path traversal. */
  traversalPath: string;
  /** A path that needs a key (for the 401 checks). */
  protectedRequest: { method: 'GET' | 'POST'; url: string; payload?: unknown };
}

const exists = (relative: string) => existsSync(resolve(REPO_ROOT, relative));

export const TICKETS: ServiceUnderTest = {
  name: 'tickets',
  available: exists('src/services/tickets/app.ts'),
  async build(apiKey, logs, extra) {
    const { buildTicketsApp } = await import('../../src/services/tickets/app.js');
    const { readTicketSettings } = await import('../../src/services/tickets/settings.js');
    const app = await buildTicketsApp(readTicketSettings({ API_KEY: apiKey, ...extra?.env }), appOptionsFor(logs, extra));
    return { app, cleanup: async () => {} };
  },
  json: { path: '/v1/classify', validBody: { subject: 'I was charged twice', body: 'refund please' }, stringField: 'subject', numberField: 'subject' },
  keyedGet: '/v1/categories',
  traversalPath: '/v1/categories/..%2F..%2Fetc%2Fpasswd',
  protectedRequest: { method: 'POST', url: '/v1/classify', payload: { subject: 'refund' } },
};

export const HOUSES: ServiceUnderTest = {
  name: 'houses',
  available: exists('src/services/houses/app.ts'),
  async build(apiKey, logs, extra) {
    const support = await import('../houses/support.js');
    const app = await support.buildFixtureApp({ API_KEY: apiKey, ...extra?.env }, appOptionsFor(logs, extra));
    return { app, cleanup: async () => {} };
  },
  json: {
    path: '/v1/estimates',
    validBody: SAMPLE_HOUSE,
    stringField: 'waterfront',
    numberField: 'sqft_lot',
  },
  keyedGet: '/v1/model',
  traversalPath: '/v1/model/..%2F..%2Fetc%2Fpasswd',
  protectedRequest: { method: 'POST', url: '/v1/estimates' },
};

export const REQUESTS: ServiceUnderTest = {
  name: 'requests',
  available: exists('src/services/requests/app.ts'),
  async build(apiKey, logs, extra) {
    const dataCopies = extra?.dataCopies ?? 1;
    const { createSqliteFixture, readFixtureRows } = await import('../requests/support/fixture-database.js');
    const { buildRequestsApp } = await import('../../src/services/requests/app.js');
    const { readRequestSettings } = await import('../../src/services/requests/settings.js');
    const rows = readFixtureRows();
    const copies = Array.from({ length: dataCopies }, (_, copy) => rows.map((row) => ({ ...row, id: row.id + copy * 1_000_000_000 }))).flat();
    const fixture = createSqliteFixture({ rows: copies });
    const settings = readRequestSettings({ API_KEY: apiKey, CURSOR_SECRET: 'reliability-cursor-secret-0123456789', DATABASE_URL: fixture.databaseUrl, ...extra?.env });
    const app = await buildRequestsApp(settings, appOptionsFor(logs, extra));
    return { app, cleanup: () => fixture.drop() };
  },
  keyedGet: '/v1/service-requests?limit=2',
  traversalPath: '/v1/service-requests/..%2F..%2Fetc%2Fpasswd',
  protectedRequest: { method: 'GET', url: '/v1/service-requests' },
};

export const SERVICES: readonly ServiceUnderTest[] = [TICKETS, HOUSES, REQUESTS];
HOUSES.protectedRequest.payload = HOUSES.json!.validBody;

/** A service listening on a free loopback port for the whole of a describe block. */
export interface LiveService {
  readonly app: PlatformApp;
  readonly port: number;
}

/**
 * Registers the hooks of a describe block that builds `service`, listens on a free loopback port
 * (raw sockets need a real server) and closes it at the end; with `checkHealthAfterEach`, every test
 * is followed by a /health on a fresh connection (the process keeps serving). Nothing is registered
 * for a service that is not available.
 */
export function serveDuringSuite(service: ServiceUnderTest, apiKey: string, options: BuildOptions & { checkHealthAfterEach?: boolean } = {}): LiveService {
  if (!service.available) return {} as LiveService;
  const live = duringSuite(
    async () => {
      const { app, cleanup } = await service.build(apiKey, undefined, options);
      await app.listen({ host: '127.0.0.1', port: 0 });
      return { app, port: (app.server.address() as AddressInfo).port, cleanup };
    },
    async ({ app, cleanup }) => {
      await app.close();
      await cleanup();
    },
  );
  if (options.checkHealthAfterEach) {
    afterEach(async () => {
      expect((await fetch(`http://127.0.0.1:${live.port}/health`)).status).toBe(200);
    });
  }
  return live;
}
