import { describe, expect, it } from 'vitest';
import { SettingsError } from '../../src/platform/setting-readers.js';
import { readTicketSettings } from '../../src/services/tickets/settings.js';
import { buildTicketsApp } from '../../src/services/tickets/app.js';
import { expectError } from '../support/http.js';
import { buildFixtureApp, VALID_HOUSE, postJson } from '../houses/support.js';
import { FIXTURE_SNAPSHOT_ID, fixtureDuringSuite } from '../requests/support/fixture-database.js';
import { TEST_API_KEY, startTestApp } from '../requests/support/requests-app.js';
import { appDuringSuite } from '../support/during-suite.js';
import { METRICS_KEY, scrape, scrapeHeaders, valueOf } from './metrics-scrape.js';

describe('GET /metrics (METRICS_KEY)', () => {
  it('off by default: /metrics answers 404 like any unknown path', async () => {
    const app = await buildTicketsApp(readTicketSettings({}), { logger: false });
    expectError(await app.inject({ method: 'GET', url: '/metrics', headers: scrapeHeaders }), 404, 'not_found', []);
    await app.close();
  });

  it('a METRICS_KEY that is short or has spaces refuses the start, naming the variable', () => {
    expect(() => readTicketSettings({ METRICS_KEY: 'short' })).toThrow(SettingsError);
    expect(() => readTicketSettings({ METRICS_KEY: 'short' })).toThrow(/^Invalid setting METRICS_KEY: /);
    expect(() => readTicketSettings({ METRICS_KEY: 'has a space in the middle' })).toThrow(/^Invalid setting METRICS_KEY: /);
  });

  describe('tickets', () => {
    const app = appDuringSuite(() => buildTicketsApp(readTicketSettings({ METRICS_KEY, API_KEY: 'metrics-test-api-key' }), { logger: false }));

    it('answers 401 without the bearer key, and is not in the OpenAPI description', async () => {
      const missing = await app.inject({ method: 'GET', url: '/metrics' });
      expectError(missing, 401, 'unauthorized', []);
      expect(missing.headers['www-authenticate']).toBe('Bearer');
      expectError(await app.inject({ method: 'GET', url: '/metrics', headers: { authorization: 'Bearer wrong' } }), 401, 'unauthorized', []);
      expectError(await app.inject({ method: 'GET', url: '/metrics', headers: { 'x-api-key': 'metrics-test-api-key' } }), 401, 'unauthorized', []);
      const spec = (await app.inject({ method: 'GET', url: '/openapi.json' })).json<{ paths: Record<string, unknown> }>();
      expect(Object.keys(spec.paths)).not.toContain('/metrics');
    });

    it('counts requests by route template, method and status; latency histogram; in flight; process metrics; classifier', async () => {
      const before = await scrape(app);
      const classify = { method: 'POST' as const, url: '/v1/classify', headers: { 'content-type': 'application/json', 'x-api-key': 'metrics-test-api-key' }, payload: '{"subject":"My parcel is lost"}' };
      for (let i = 0; i < 3; i++) expect((await app.inject(classify)).statusCode).toBe(200);
      expect((await app.inject({ ...classify, headers: { 'content-type': 'application/json' } })).statusCode).toBe(401);
      expect((await app.inject({ method: 'GET', url: '/no/such/path' })).statusCode).toBe(404);
      const after = await scrape(app);

      const ok = 'route="/v1/classify",method="POST",status="200"';
      expect(valueOf(after, 'http_requests_total', ok) - valueOf(before, 'http_requests_total', ok)).toBe(3);
      const denied = 'route="/v1/classify",method="POST",status="401"';
      expect(valueOf(after, 'http_requests_total', denied) - valueOf(before, 'http_requests_total', denied)).toBe(1);
      expect(valueOf(after, 'http_requests_total', 'route="unmatched",method="GET",status="404"')).toBeGreaterThanOrEqual(1);
      expect(after).not.toContain('/no/such/path');
      expect(valueOf(after, 'http_request_duration_seconds_count', 'route="/v1/classify",method="POST"')).toBeGreaterThanOrEqual(4);
      expect(after).toMatch(/^http_request_duration_seconds_bucket\{le="0.005",service="tickets",route="\/v1\/classify",method="POST"\} \d+$/m);
      // The scrape itself is in flight while the registry is read.
      expect(after).toMatch(/^http_requests_in_flight\{service="tickets"\} 1$/m);
      expect(after).toMatch(/^process_cpu_seconds_total\{service="tickets"\} /m);
      expect(after).toMatch(/^nodejs_eventloop_lag_seconds\{service="tickets"\} /m);
      expect(after).toMatch(/^tickets_classifier_available\{model_version="keywords-1.0",service="tickets"\} 1$/m);
    });
  });

  it('houses: the model loaded and its version', async () => {
    const app = await buildFixtureApp({ METRICS_KEY, API_KEY: 'metrics-test-api-key' });
    expect((await postJson(app, '/v1/estimates', VALID_HOUSE, { 'x-api-key': 'metrics-test-api-key' })).statusCode).toBe(200);
    const text = await scrape(app);
    expect(text).toMatch(/^houses_model_loaded\{model_version="[^"]+",status="loaded",service="houses"\} 1$/m);
    expect(valueOf(text, 'http_requests_total', 'route="/v1/estimates",method="POST",status="200"')).toBe(1);
    await app.close();

    const broken = await buildFixtureApp({ METRICS_KEY, MODEL_PATH: '/nonexistent/model.json' });
    expect(await scrape(broken)).toMatch(/^houses_model_loaded\{model_version="",status="missing",service="houses"\} 0$/m);
    await broken.close();
  });

  describe('requests', () => {
    const sqlite = fixtureDuringSuite();

    it('SQLite: the snapshot row count and id; the route template of /v1/service-requests/{id}', async () => {
      const { app, get } = await startTestApp(sqlite.databaseUrl, { METRICS_KEY });
      const id = sqlite.rows[0]!.id;
      expect((await get(`/v1/service-requests/${id}`)).statusCode).toBe(200);
      const text = await scrape(app);
      expect(valueOf(text, 'requests_snapshot_rows', `snapshot_id="${FIXTURE_SNAPSHOT_ID}"`)).toBe(sqlite.rows.length);
      expect(valueOf(text, 'http_requests_total', 'route="/v1/service-requests/:id",method="GET",status="200"')).toBe(1);
      expect(text).not.toContain(`/v1/service-requests/${id}"`);
      expect(text).not.toContain('requests_database_pool_connections');
      expect(text).not.toContain(TEST_API_KEY);
      await app.close();
    });
  });
});
