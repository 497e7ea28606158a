import { describe, expect, it } from 'vitest';
import { startLineText } from '../../src/platform/start-line.js';
import { buildTicketsApp } from '../../src/services/tickets/app.js';
import { readTicketSettings } from '../../src/services/tickets/settings.js';
import { LogCapture } from '../support/http.js';
import { buildFixtureApp } from '../houses/support.js';
import { createSqliteFixture } from '../requests/support/fixture-database.js';
import { startTestApp } from '../requests/support/requests-app.js';

/** Every log line names its service, so that the lines of `npm start` (three services, one process) can be read. */
describe('log lines name their service', () => {
  it('tickets, houses and requests: "service" on every line, the start-up lines included', async () => {
    const fixture = createSqliteFixture();
    const logs = { tickets: new LogCapture(), houses: new LogCapture(), requests: new LogCapture() };
    const apps = [
      await buildTicketsApp(readTicketSettings({}), { logStream: logs.tickets }),
      await buildFixtureApp({}, { logStream: logs.houses }),
      (await startTestApp(fixture.databaseUrl, {}, { logStream: logs.requests, logger: true })).app,
    ];
    for (const app of apps) {
      await app.inject({ method: 'GET', url: '/health' });
      await app.inject({ method: 'GET', url: '/no/such/path' });
      await app.close();
    }
    await fixture.drop();
    for (const [service, capture] of Object.entries(logs)) {
      const lines = capture.lines();
      expect(lines.length, service).toBeGreaterThanOrEqual(2);
      for (const line of lines) expect(line.service, JSON.stringify(line)).toBe(service);
    }
    // The start-up lines of tickets (no key) and houses (model loaded) are among them.
    expect(logs.tickets.text()).toContain('API_KEY is not set');
    expect(logs.houses.text()).toContain('"model_status":"loaded"');
  });

  it('the start line: the URL, the docs URLs (or that they are off), the metrics URL when on', () => {
    const url = 'http://127.0.0.1:8001';
    expect(startLineText(url, { showDocs: true, metrics: false })).toBe(
      'Server listening at http://127.0.0.1:8001; docs http://127.0.0.1:8001/docs and http://127.0.0.1:8001/redoc, OpenAPI http://127.0.0.1:8001/openapi.json',
    );
    expect(startLineText(url, { showDocs: false, metrics: true })).toBe(
      'Server listening at http://127.0.0.1:8001; docs off (SHOW_DOCS=false); metrics http://127.0.0.1:8001/metrics (METRICS_KEY)',
    );
  });
});
