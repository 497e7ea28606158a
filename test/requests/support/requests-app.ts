import type { PlatformApp } from '../../../src/platform/platform-app.js';
import type { ServiceRequestRecord } from '../../../src/services/requests/store/service-request-store.js';
import { fixtureDuringSuite, type Backend, type FixtureDatabase } from './fixture-database.js';
import { buildRequestsApp, type RequestsAppOptions } from '../../../src/services/requests/app.js';
import { readRequestSettings, type RequestSettings } from '../../../src/services/requests/settings.js';
import { duringSuite } from '../../support/during-suite.js';
import type { AnyResponse } from '../../support/http.js';

export const TEST_API_KEY = 'test-key-requests';
export const TEST_CURSOR_SECRET = 'test-cursor-secret-0123456789abcdef';

export interface TestApp {
  app: PlatformApp;
  settings: RequestSettings;
  /** GET with the key; `path` includes the query string. */
  get: (path: string, headers?: Record<string, string>) => Promise<AnyResponse>;
}

export async function startTestApp(databaseUrl: string, env: Record<string, string> = {}, options: RequestsAppOptions = {}): Promise<TestApp> {
  const settings = readRequestSettings({
    API_KEY: TEST_API_KEY,
    CURSOR_SECRET: TEST_CURSOR_SECRET,
    DATABASE_URL: databaseUrl,
    ...env,
  });
  const app = await buildRequestsApp(settings, { logger: false, ...options });
  await app.ready();
  return {
    app,
    settings,
    async get(path, headers = {}) {
      const response = await app.inject({ method: 'GET', url: path, headers: { 'x-api-key': TEST_API_KEY, ...headers } });
      return { statusCode: response.statusCode, headers: response.headers, body: response.body };
    },
  };
}

/** The service on `fixture` (made earlier in the suite), started before the suite's first test and closed after its last. */
export function testAppDuringSuite(fixture: Pick<FixtureDatabase, 'databaseUrl'>, env: Record<string, string> = {}): TestApp {
  return duringSuite(() => startTestApp(fixture.databaseUrl, env), (service) => service.app.close());
}

/** The JSON body of a response. */
// eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- the caller names the answer's shape, as light-my-request's json<T>() does
export function json<T = Record<string, unknown>>(response: AnyResponse): T {
  return JSON.parse(response.body) as T;
}

export interface FixtureService {
  fixture: FixtureDatabase;
  service: TestApp;
  rows: ServiceRequestRecord[];
}

/**
 * The fixture snapshot on a backend and the service over it, for the tests of a describe block:
 * made before the block's first test, closed and dropped after its last. Read the fields inside the tests.
 */
export function serveFixture(backend: Backend): FixtureService {
  const fixture = fixtureDuringSuite(backend);
  const service = testAppDuringSuite(fixture);
  return {
    fixture,
    service,
    get rows() {
      return fixture.rows;
    },
  };
}
