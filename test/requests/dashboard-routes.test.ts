import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PAGE_CSP } from '../../src/platform/docs.js';
import { SettingsError } from '../../src/platform/setting-readers.js';
import { defaultOutlinesPath } from '../../src/services/requests/borough-outlines.js';
import { readRequestSettings } from '../../src/services/requests/settings.js';
import { REPO_ROOT, expectError } from '../support/http.js';
import { fixtureDuringSuite } from './support/fixture-database.js';
import { startTestApp, type TestApp } from './support/requests-app.js';

/** Five squares standing for the boroughs' outlines (the real ones are data from outside the repository). */
const OUTLINES_FIXTURE = resolve(REPO_ROOT, 'test/fixtures/requests/borough-outlines.geojson');

/** GET /dashboard and GET / as HTTP answers (the page in a browser: dashboard-page.test.ts). */
describe('dashboard and index pages of the service-request API', () => {
  const fixture = fixtureDuringSuite();
  const apps: TestApp[] = [];
  const start = async (env: Record<string, string> = {}) => {
    const app = await startTestApp(fixture.databaseUrl, env);
    apps.push(app);
    return app;
  };
  /** GET without any key: the pages are public, only the /v1 calls they make need one. */
  const getWithoutKey = (service: TestApp, url: string) => service.app.inject({ method: 'GET', url });

  afterAll(async () => {
    for (const app of apps) await app.app.close();
  });

  it('GET /dashboard: the page, without a key, under a same-origin policy with no inline script or style', async () => {
    const service = await start();
    const page = await getWithoutKey(service, '/dashboard');
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['content-security-policy']).toBe(PAGE_CSP);
    expect(PAGE_CSP).not.toMatch(/unsafe-inline|unsafe-eval|blob:/);
    expect(PAGE_CSP).toMatch(/script-src 'self';/);
    expect(PAGE_CSP).toMatch(/connect-src 'self';/);
    // No inline script, style element or style attribute: everything is a file of this origin.
    expect(page.body).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(page.body).not.toMatch(/<style|\sstyle=/);
    const references = [...page.body.matchAll(/<(?:script|link)\b[^>]*\b(?:src|href)="([^"]+)"/g)].map((match) => match[1]!);
    expect(references).toEqual(['data:,', '/dashboard/dashboard.css', '/dashboard/chart.umd.min.js', '/dashboard/dashboard.js']);
    const types: Record<string, string> = {
      '/dashboard/dashboard.css': 'text/css; charset=utf-8',
      '/dashboard/chart.umd.min.js': 'text/javascript; charset=utf-8',
      '/dashboard/dashboard.js': 'text/javascript; charset=utf-8',
    };
    for (const [url, type] of Object.entries(types)) {
      const file = await getWithoutKey(service, url);
      expect(file.statusCode, url).toBe(200);
      expect(file.headers['content-type'], url).toBe(type);
      expect(file.headers['x-content-type-options'], url).toBe('nosniff');
      expect(file.body, `${url} loads nothing from elsewhere`).not.toMatch(/(?:src|href|url)\s*[=(]\s*["']?https?:\/\//);
    }
  });

  it('serves the Chart.js bundle of the version pinned in package.json', async () => {
    const service = await start();
    const pinned = (JSON.parse(readFileSync(resolve(REPO_ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> }).dependencies['chart.js'];
    expect(pinned).toMatch(/^\d+\.\d+\.\d+$/);
    const bundle = await getWithoutKey(service, '/dashboard/chart.umd.min.js');
    expect(bundle.body.slice(0, 200)).toContain(`Chart.js v${pinned}`);
    expect(bundle.headers['cache-control']).toBe('public, max-age=86400');
  });

  it('serves the borough outlines of BOROUGH_OUTLINES_FILE as they are, revalidated', async () => {
    const service = await start({ BOROUGH_OUTLINES_FILE: OUTLINES_FIXTURE });
    const outlines = await getWithoutKey(service, '/dashboard/boroughs.geojson');
    expect(outlines.statusCode).toBe(200);
    expect(outlines.headers['content-type']).toBe('application/geo+json');
    expect(outlines.headers['cache-control']).toBe('no-cache');
    expect(outlines.rawPayload.equals(readFileSync(OUTLINES_FIXTURE))).toBe(true);
  });

  it('BOROUGH_OUTLINES_FILE unset: the shared data folder beside the checkout when it holds them, else no outlines (404)', async () => {
    const service = await start();
    const outlines = await getWithoutKey(service, '/dashboard/boroughs.geojson');
    if (existsSync(defaultOutlinesPath())) {
      expect(outlines.statusCode).toBe(200);
      const collection = JSON.parse(outlines.body) as { type: string; features: { properties: { borough: string } }[] };
      expect(collection.features.map((feature) => feature.properties.borough).sort()).toEqual(['bronx', 'brooklyn', 'manhattan', 'queens', 'staten_island']);
    } else {
      console.warn(`The shared data's borough outlines are absent (${defaultOutlinesPath()}): only the answer without them is checked`);
      expectError(outlines, 404, 'not_found', [], 'Not Found');
    }
  });

  it('BOROUGH_OUTLINES_FILE naming no file, or a file that is not a FeatureCollection, stops the start', () => {
    expect(() => readRequestSettings({ BOROUGH_OUTLINES_FILE: '/nonexistent/outlines.geojson' })).toThrow(
      new SettingsError('BOROUGH_OUTLINES_FILE', 'no readable file at /nonexistent/outlines.geojson'),
    );
    expect(() => readRequestSettings({ BOROUGH_OUTLINES_FILE: resolve(REPO_ROOT, 'package.json') })).toThrow(
      new SettingsError('BOROUGH_OUTLINES_FILE', 'the file is not a GeoJSON FeatureCollection'),
    );
    expect(() => readRequestSettings({ BOROUGH_OUTLINES_FILE: resolve(REPO_ROOT, 'README.md') })).toThrow(new SettingsError('BOROUGH_OUTLINES_FILE', 'the file is not JSON'));
  });

  it('GET /: links the dashboard and the docs pages; with SHOW_DOCS=false only the dashboard and health', async () => {
    const service = await start();
    const index = await getWithoutKey(service, '/');
    expect(index.statusCode).toBe(200);
    expect(index.headers['content-security-policy']).toBe(PAGE_CSP);
    const links = (body: string) => [...body.matchAll(/<a href="([^"]+)"/g)].map((match) => match[1]);
    expect(links(index.body)).toEqual(['/dashboard', '/docs', '/redoc', '/openapi.json', '/health', '/ready']);

    const withoutDocs = await start({ SHOW_DOCS: 'false' });
    expect(links((await getWithoutKey(withoutDocs, '/')).body)).toEqual(['/dashboard', '/health', '/ready']);
    // The page does not depend on the docs: it uses the dashboard API whether or not they are served.
    expect((await getWithoutKey(withoutDocs, '/dashboard')).statusCode).toBe(200);
  });

  it('SHOW_DASHBOARD=false: /dashboard and its files answer 404, the index does not link them', async () => {
    const service = await start({ SHOW_DASHBOARD: 'false' });
    for (const url of ['/dashboard', '/dashboard/dashboard.js', '/dashboard/chart.umd.min.js', '/dashboard/boroughs.geojson']) {
      expectError(await getWithoutKey(service, url), 404, 'not_found', [], 'Not Found');
    }
    const index = await getWithoutKey(service, '/');
    expect(index.statusCode).toBe(200);
    expect(index.body).not.toContain('/dashboard');
  });

  it('SHOW_DASHBOARD: true or false; another value stops the start naming the variable', () => {
    expect(readRequestSettings({}).showDashboard).toBe(true);
    expect(readRequestSettings({ SHOW_DASHBOARD: 'FALSE' }).showDashboard).toBe(false);
    expect(() => readRequestSettings({ SHOW_DASHBOARD: 'off' })).toThrow(SettingsError);
    expect(() => readRequestSettings({ SHOW_DASHBOARD: 'off' })).toThrow('Invalid setting SHOW_DASHBOARD: "off" is not one of true, false');
  });

  it('the pages are not in the OpenAPI description; other methods answer 405', async () => {
    const service = await start();
    const paths = Object.keys((service.app.swagger() as { paths: Record<string, unknown> }).paths);
    expect(paths.filter((path) => !path.startsWith('/v1/') && path !== '/health' && path !== '/ready')).toEqual([]);
    const post = await service.app.inject({ method: 'POST', url: '/dashboard' });
    expectError({ statusCode: post.statusCode, headers: post.headers, body: post.body }, 405, 'method_not_allowed', []);
    expect(post.headers.allow).toBe('GET, HEAD');
  });
});
