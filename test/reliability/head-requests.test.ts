import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { PlatformApp } from '../../src/platform/platform-app.js';
import { buildRequestsApp } from '../../src/services/requests/app.js';
import { readRequestSettings } from '../../src/services/requests/settings.js';
import type { ServiceRequestStore } from '../../src/services/requests/store/service-request-store.js';
import { SqliteServiceRequestStore } from '../../src/services/requests/store/sqlite-store.js';
import { createSqliteFixture, readFixtureRows, type FixtureDatabase } from '../requests/support/fixture-database.js';
import { HOUSES, TICKETS, type ServiceUnderTest } from './services.js';

/**
 * HEAD does no work (the hostile-input decisions; src/platform/long-answers.ts): Fastify answers HEAD
 * with each GET route's handler. A streamed answer (the export) is destroyed before it reads a row,
 * a docs asset is never opened, and every GET route of every service answers HEAD with the GET's
 * status and content type and no body. The GET paths of the OpenAPI descriptions are all covered.
 */
const KEY = 'head-requests-key-0123456789';

/** The store's reads of rows, counted (a streamed export reads them step by step). */
class CountingStore {
  rowReads = 0;
  readonly store: ServiceRequestStore;

  constructor(inner: ServiceRequestStore) {
    this.store = new Proxy(inner, {
      get: (target, name, receiver) => {
        const value = Reflect.get(target, name, receiver) as unknown;
        if (typeof value !== 'function') return value;
        if (name === 'listIds' || name === 'rowsById') {
          return (...parameters: unknown[]) => {
            this.rowReads += 1;
            return (value as (...a: unknown[]) => unknown).apply(target, parameters);
          };
        }
        return (value as (...a: unknown[]) => unknown).bind(target);
      },
    });
  }
}

/** The platform's pages of every service (docs on). */
const DOCS_PAGES = ['/health', '/openapi.json', '/docs', '/docs/json', '/docs/static/swagger-ui-bundle.js', '/docs/static/swagger-ui.css', '/docs/static/oauth2-redirect.html', '/redoc', '/redoc/redoc.standalone.js'];

const EXPORTS = ['/v1/exports/service-requests', '/v1/exports/service-requests?format=csv', '/v1/exports/service-requests?format=geojson', '/v1/exports/service-requests?borough=queens&format=geojson'];

function requestsPaths(id: number): string[] {
  return [
    ...DOCS_PAGES,
    '/ready',
    '/',
    '/dashboard',
    '/dashboard/dashboard.js',
    '/dashboard/dashboard.css',
    '/dashboard/chart.umd.min.js',
    '/v1/service-requests?limit=2',
    '/v1/service-requests?limit=2&format=csv',
    '/v1/service-requests?limit=2&format=geojson',
    '/v1/service-requests/count',
    `/v1/service-requests/${id}`,
    '/v1/complaint-types',
    '/v1/facets?field=borough',
    '/v1/stats/daily',
    '/v1/stats/weekly',
    '/v1/stats/monthly',
    '/v1/stats/groups?by=borough,complaint_type&period=month',
    '/v1/stats/cells?bbox=-74.26,40.49,-73.69,40.92&cell=0.1',
    '/v1/dataset',
    ...EXPORTS,
  ];
}

const SERVICE_PATHS: Record<'tickets' | 'houses', string[]> = {
  tickets: [...DOCS_PAGES, '/ready', '/v1/categories'],
  houses: [...DOCS_PAGES, '/ready', '/v1/model'],
};

/** The GET paths of the app's OpenAPI description, as patterns over concrete paths. */
function documentedGetPaths(app: PlatformApp): RegExp[] {
  const spec = app.swagger() as unknown as { paths: Record<string, Record<string, unknown>> };
  return Object.entries(spec.paths)
    .filter(([, operations]) => 'get' in operations)
    .map(([path]) => new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/?]+')}(\\?|$)`));
}

async function expectHeadLikeGet(app: PlatformApp, path: string): Promise<void> {
  const headers = { 'x-api-key': KEY };
  const get = await app.inject({ method: 'GET', url: path, headers });
  const head = await app.inject({ method: 'HEAD', url: path, headers });
  expect({ path, status: head.statusCode, body: head.body }).toEqual({ path, status: get.statusCode, body: '' });
  expect({ path, type: head.headers['content-type'] }).toEqual({ path, type: get.headers['content-type'] });
  expect({ path, disposition: head.headers['content-disposition'] }).toEqual({ path, disposition: get.headers['content-disposition'] });
}

describe('requests: HEAD does no work', () => {
  let fixture: FixtureDatabase;
  let counting: CountingStore;
  let app: PlatformApp;
  beforeAll(async () => {
    fixture = createSqliteFixture();
    counting = new CountingStore(new SqliteServiceRequestStore(fixture.databaseUrl));
    const settings = readRequestSettings({ API_KEY: KEY, CURSOR_SECRET: 'head-requests-cursor-secret-0123456789', DATABASE_URL: fixture.databaseUrl });
    app = await buildRequestsApp(settings, { logger: false, store: counting.store });
    await app.ready();
  });
  afterAll(async () => {
    await app.close();
    await fixture.drop();
  });

  for (const path of EXPORTS) {
    it(`HEAD ${path}: the export's headers, and not one row read`, async () => {
      const get = await app.inject({ method: 'GET', url: path, headers: { 'x-api-key': KEY } });
      expect(get.statusCode).toBe(200);
      counting.rowReads = 0;
      for (let i = 0; i < 30; i += 1) {
        const head = await app.inject({ method: 'HEAD', url: path, headers: { 'x-api-key': KEY } });
        expect(head.statusCode).toBe(200);
        expect(head.body).toBe('');
        expect(head.headers['content-type']).toBe(get.headers['content-type']);
        expect(head.headers['content-disposition']).toBe(get.headers['content-disposition']);
        expect(head.headers['content-length']).toBeUndefined();
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(counting.rowReads).toBe(0);
    });
  }

  it('HEAD of a docs asset never opens its file (a GET does)', async () => {
    const opened = vi.spyOn(fs, 'createReadStream');
    try {
      const head = await app.inject({ method: 'HEAD', url: '/docs/static/swagger-ui-bundle.js' });
      expect(head.statusCode).toBe(200);
      expect(Number(head.headers['content-length'])).toBeGreaterThan(100_000);
      expect(opened).not.toHaveBeenCalled();
      const get = await app.inject({ method: 'GET', url: '/docs/static/swagger-ui-bundle.js' });
      expect(get.statusCode).toBe(200);
      expect(opened).toHaveBeenCalled();
    } finally {
      opened.mockRestore();
    }
  });

  it('every GET route: HEAD answers the GET\'s status and content type with no body; the list covers every documented GET path', async () => {
    const paths = requestsPaths(readFixtureRows()[0]?.id ?? 1);
    for (const pattern of documentedGetPaths(app)) expect({ pattern: pattern.source, covered: paths.some((path) => pattern.test(path)) }).toEqual({ pattern: pattern.source, covered: true });
    for (const path of paths) await expectHeadLikeGet(app, path);
  });
});

describe.each([TICKETS, HOUSES].filter((service) => service.available))('$name: HEAD of every GET route', (service: ServiceUnderTest) => {
  let app: PlatformApp;
  let cleanup: () => Promise<void>;
  beforeAll(async () => {
    ({ app, cleanup } = await service.build(KEY));
    await app.ready();
  });
  afterAll(async () => {
    await app.close();
    await cleanup();
  });

  it('HEAD answers the GET\'s status and content type with no body; the list covers every documented GET path', async () => {
    const paths = SERVICE_PATHS[service.name as 'tickets' | 'houses'];
    for (const pattern of documentedGetPaths(app)) expect({ pattern: pattern.source, covered: paths.some((path) => pattern.test(path)) }).toEqual({ pattern: pattern.source, covered: true });
    for (const path of paths) await expectHeadLikeGet(app, path);
  });
});
