import { describe, expect, it } from 'vitest';
import { LogCapture } from '../support/http.js';
import { fixtureDuringSuite } from './support/fixture-database.js';
import { startTestApp, TEST_API_KEY } from './support/requests-app.js';

/** The platform's shared behaviour as this service gets it: logs, CORS, docs pages. */
describe('service-request API on the platform', () => {
  const fixture = fixtureDuringSuite();

  it('one log line per request, without the key, the query string or the cursor', async () => {
    const logs = new LogCapture();
    const service = await startTestApp(fixture.databaseUrl, {}, { logger: true, logStream: logs });
    try {
      const first = JSON.parse((await service.get('/v1/service-requests?limit=2&borough=brooklyn')).body) as { next_cursor: string };
      await service.get(`/v1/service-requests?limit=2&borough=brooklyn&cursor=${first.next_cursor}`, { 'x-request-id': 'trace-1' });
      const lines = logs.lines().filter((line) => line.msg === 'request');
      expect(lines).toHaveLength(2);
      expect(lines[1]).toMatchObject({ method: 'GET', path: '/v1/service-requests', status: 200, request_id: 'trace-1' });
      expect(logs.text()).not.toContain(TEST_API_KEY);
      expect(logs.text()).not.toContain(first.next_cursor);
      expect(logs.text()).not.toContain('brooklyn');
    } finally {
      await service.app.close();
    }
  });

  it('CORS preflight from a listed origin 200, from another 400; docs pages on, or off with SHOW_DOCS=false', async () => {
    const service = await startTestApp(fixture.databaseUrl, { ALLOWED_ORIGINS: 'https://dashboard.example.org' });
    try {
      const preflight = (origin: string) =>
        service.app.inject({ method: 'OPTIONS', url: '/v1/service-requests', headers: { origin, 'access-control-request-method': 'GET' } });
      const allowed = await preflight('https://dashboard.example.org');
      expect(allowed.statusCode).toBe(200);
      expect(allowed.headers['access-control-allow-origin']).toBe('https://dashboard.example.org');
      expect((await preflight('https://elsewhere.example.org')).statusCode).toBe(400);
      const real = await service.get('/v1/dataset', { origin: 'https://dashboard.example.org' });
      expect(real.headers['access-control-allow-origin']).toBe('https://dashboard.example.org');
      expect((await service.app.inject({ method: 'GET', url: '/openapi.json' })).statusCode).toBe(200);
      expect((await service.app.inject({ method: 'GET', url: '/redoc' })).statusCode).toBe(200);
    } finally {
      await service.app.close();
    }
    const hidden = await startTestApp(fixture.databaseUrl, { SHOW_DOCS: 'false' });
    try {
      for (const url of ['/openapi.json', '/docs', '/redoc']) expect((await hidden.app.inject({ method: 'GET', url })).statusCode).toBe(404);
    } finally {
      await hidden.app.close();
    }
  });
});
