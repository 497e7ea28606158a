import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/http.js';
import { createSqliteFixture, inApiOrder, type FixtureDatabase } from './support/fixture-database.js';
import { TEST_API_KEY, startTestApp, type TestApp } from './support/requests-app.js';

/**
 * GET /dashboard in a real browser: Debian's chromium (scripts/install-chromium.sh installs it;
 * CHROMIUM_PATH names another binary) driven by playwright-core, against the service on the SQLite
 * fixture (38 requests of January 2025), listening on an ephemeral port.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const SCREENSHOT = resolve(REPO_ROOT, '.test-results/dashboard-page.png');
const READY_TIMEOUT_MS = 20_000;

interface BrowserProblems {
  console: string[];
  violations: string[];
}

/** Collects console errors, page errors and CSP violations (the event and Chrome's console report). */
async function watchProblems(page: Page): Promise<BrowserProblems> {
  const problems: BrowserProblems = { console: [], violations: [] };
  page.on('console', (message) => {
    if (message.type() === 'error' || /Content Security Policy/i.test(message.text())) problems.console.push(`${message.type()}: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.console.push(`pageerror: ${error.message}`));
  await page.exposeFunction('reportViolation', (text: string) => problems.violations.push(text));
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (event) => {
      (window as unknown as { reportViolation(text: string): void }).reportViolation(`${event.violatedDirective} ${event.blockedURI}`);
    });
  });
  return problems;
}

function expectNoBrowserProblems(problems: BrowserProblems): void {
  expect(problems.console).toEqual([]);
  expect(problems.violations).toEqual([]);
}

/** Rewrites the service's JSON answers matching `pattern` in the browser: they stand for a later API version. */
async function rewriteAnswers(page: Page, pattern: string, rewrite: (body: never) => unknown): Promise<void> {
  await page.route(pattern, async (route) => {
    const response = await route.fetch();
    await route.fulfill({ response, json: rewrite((await response.json()) as never) });
  });
}

/** Waits until the page has finished its last load (body[data-state=ready]). */
async function untilReady(page: Page): Promise<void> {
  await page.waitForFunction(() => document.body.dataset.state === 'ready', undefined, { timeout: READY_TIMEOUT_MS });
}

interface DrawnCharts {
  days: string[];
  opened: number[];
  closed: number[];
  firstIncomplete: number | null;
  typeCounts: number[];
  pointsByBorough: Record<string, number>;
  /** Canvas pixels that are not transparent, per chart: the charts really drew. */
  inkedPixels: Record<string, number>;
}

async function drawnCharts(page: Page): Promise<DrawnCharts> {
  return page.evaluate(() => {
    interface ChartLike {
      data: { labels: string[]; datasets: { label: string; data: unknown[] }[] };
      options: { plugins: { incompleteDaysShading?: { firstIncomplete: number | null } } };
    }
    const Chart = (window as unknown as { Chart: { getChart(id: string): ChartLike } }).Chart;
    const inked = (id: string) => {
      const canvas = document.getElementById(id) as HTMLCanvasElement;
      const pixels = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height).data;
      let count = 0;
      for (let i = 3; i < pixels.length; i += 4) if (pixels[i]! > 0) count += 1;
      return count;
    };
    const daily = Chart.getChart('daily-chart');
    const types = Chart.getChart('types-chart');
    const points = Chart.getChart('points-chart');
    return {
      days: daily.data.labels,
      opened: daily.data.datasets[0]!.data as number[],
      closed: daily.data.datasets[1]!.data as number[],
      firstIncomplete: daily.options.plugins.incompleteDaysShading?.firstIncomplete ?? null,
      typeCounts: types.data.datasets[0]!.data as number[],
      pointsByBorough: Object.fromEntries(points.data.datasets.map((set) => [set.label, set.data.length])),
      inkedPixels: { daily: inked('daily-chart'), types: inked('types-chart'), points: inked('points-chart') },
    };
  });
}

const sum = (values: number[]): number => values.reduce((total, value) => total + value, 0);

async function tableIds(page: Page): Promise<number[]> {
  return page.$$eval('#requests-table tbody tr', (rows) => rows.map((row) => Number(row.querySelector('td')?.textContent)));
}

describe('dashboard page in headless Chromium', () => {
  let fixture: FixtureDatabase | undefined;
  let service: TestApp | undefined;
  let baseUrl: string;
  let browser: Browser | undefined;

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: run bash scripts/install-chromium.sh (or set CHROMIUM_PATH)`);
    fixture = createSqliteFixture();
    service = await startTestApp(fixture.databaseUrl);
    baseUrl = await service.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
  });

  afterAll(async () => {
    await browser?.close();
    await service?.app.close();
    await fixture?.drop();
  });

  /** Runs `use` in a page of a fresh browser context (its own session storage), closed afterwards. */
  async function inNewPage(use: (page: Page, problems: BrowserProblems) => Promise<void>): Promise<void> {
    const context = await browser!.newContext({ viewport: { width: 1280, height: 900 } });
    try {
      const page = await context.newPage();
      await use(page, await watchProblems(page));
    } finally {
      await context.close();
    }
  }

  async function enterKey(page: Page, key: string): Promise<void> {
    await page.goto(`${baseUrl}/dashboard`);
    await page.fill('#api-key', key);
    await page.click('#use-key');
  }

  it('with a key: charts drawn from the data, filters change them, the table pages, no console error and no CSP violation', { timeout: 120_000 }, async () => {
    await inNewPage(async (page, problems) => {
      await enterKey(page, TEST_API_KEY);
      await untilReady(page);
      const rows = inApiOrder(fixture!.rows);

      // Says that the data is synthetic (the fixture's source kind).
      await expect(page.isVisible('#synthetic-notice')).resolves.toBe(true);
      expect(await page.textContent('#synthetic-notice')).toMatch(/^Synthetic data:/);

      // Whole period: every day of January, every request.
      let charts = await drawnCharts(page);
      expect(charts.days).toHaveLength(31);
      expect(sum(charts.opened)).toBe(rows.length);
      expect(sum(charts.closed)).toBeGreaterThan(0);
      expect(charts.firstIncomplete).toBeNull();
      // /v1/facets counts the requests without a type too (drawn as "(no type)").
      expect(sum(charts.typeCounts)).toBe(rows.length);
      expect(sum(Object.values(charts.pointsByBorough))).toBe(rows.filter((row) => row.latitude !== null && row.longitude !== null).length);
      for (const [chart, inked] of Object.entries(charts.inkedPixels)) expect(inked, `${chart} chart drew`).toBeGreaterThan(1000);
      expect(await page.textContent('#match-count')).toBe(`${rows.length} requests match`);

      // The table: pages of 25, the next page continues in API order, the last page has no next.
      expect(await tableIds(page)).toEqual(rows.slice(0, 25).map((row) => row.id));
      expect(await page.isDisabled('#next-page')).toBe(false);
      await page.click('#next-page');
      await untilReady(page);
      expect(await tableIds(page)).toEqual(rows.slice(25, 50).map((row) => row.id));
      expect(await page.isDisabled('#next-page')).toBe(true);
      expect(await page.textContent('#page-label')).toBe(`Page 2: rows 26 to ${rows.length} of ${rows.length}`);
      await page.click('#first-page');
      await untilReady(page);
      expect(await tableIds(page)).toEqual(rows.slice(0, 25).map((row) => row.id));

      // Borough filter: only Queens in every chart and in the table.
      await page.selectOption('#borough', 'queens');
      await untilReady(page);
      const queens = rows.filter((row) => row.borough === 'queens');
      charts = await drawnCharts(page);
      expect(sum(charts.opened)).toBe(queens.length);
      expect(Object.keys(charts.pointsByBorough)).toEqual(['Queens']);
      expect(await tableIds(page)).toEqual(queens.map((row) => row.id));

      // Date range (the "to" day included): the days and the numbers follow.
      await page.fill('#date-from', '2025-01-10');
      await page.fill('#date-to', '2025-01-20');
      await page.click('#apply-filters');
      await untilReady(page);
      const inRange = queens.filter((row) => row.created_at >= '2025-01-10' && row.created_at < '2025-01-21');
      charts = await drawnCharts(page);
      expect(charts.days[0]).toBe('2025-01-10');
      expect(charts.days).toHaveLength(11);
      expect(sum(charts.opened)).toBe(inRange.length);
      expect(await tableIds(page)).toEqual(inRange.map((row) => row.id));

      await page.click('#reset-filters');
      await untilReady(page);
      expect(sum((await drawnCharts(page)).opened)).toBe(rows.length);

      mkdirSync(resolve(REPO_ROOT, '.test-results'), { recursive: true });
      await page.screenshot({ path: SCREENSHOT, fullPage: true });

      // The key lives in this tab's session storage only.
      const stored = await page.evaluate(() => ({ session: Object.values(sessionStorage), local: localStorage.length, cookie: document.cookie, url: location.href }));
      expect(stored).toEqual({ session: [TEST_API_KEY], local: 0, cookie: '', url: `${baseUrl}/dashboard` });

      expectNoBrowserProblems(problems);
    });
  });

  it('marks the days the API reports incomplete (`complete` false)', async () => {
    await inNewPage(async (page, problems) => {
      // Every January day of the fixture is complete (its snapshot date is 2025-07-01): the rewritten
      // answer stands for a snapshot taken on 2025-02-09, whose last 7 days have an open 14-day window.
      await rewriteAnswers(page, '**/v1/stats/daily*', ({ items }: { items: { date: string }[] }) => ({
        items: items.map((day) => ({ ...day, complete: day.date < '2025-01-25' })),
      }));
      await enterKey(page, TEST_API_KEY);
      await untilReady(page);
      const charts = await drawnCharts(page);
      expect(charts.days[charts.firstIncomplete!]).toBe('2025-01-25');
      expect(await page.textContent('#daily-note')).toMatch(/the last 7 days are incomplete/);
      expectNoBrowserProblems(problems);
    });
  });

  it('complaint types from /v1/facets and the match count from /v1/service-requests/count, under the chosen filters', async () => {
    await inNewPage(async (page, problems) => {
      const queries: Record<string, URLSearchParams[]> = {};
      page.on('request', (request) => {
        const url = new URL(request.url());
        (queries[url.pathname] ??= []).push(url.searchParams);
      });
      await enterKey(page, TEST_API_KEY);
      await untilReady(page);
      await page.selectOption('#borough', 'bronx');
      await untilReady(page);
      const filters = { borough: 'bronx', created_from: '2025-01-01', created_to: '2025-02-01' };
      expect(Object.fromEntries(queries['/v1/facets']!.at(-1)!)).toEqual({ ...filters, field: 'complaint_type' });
      expect(Object.fromEntries(queries['/v1/service-requests/count']!.at(-1)!)).toEqual(filters);
      expect(Object.fromEntries(queries['/v1/stats/daily']!.at(-1)!)).toEqual(filters);

      // The chart shows the API's facets in its order, the requests without a type as "(no type)".
      const facets = JSON.parse((await service!.get(`/v1/facets?field=complaint_type&${new URLSearchParams(filters)}`)).body) as { items: { value: string | null; count: number }[] };
      const labels = await page.evaluate(() => (window as unknown as { Chart: { getChart(id: string): { data: { labels: string[] } } } }).Chart.getChart('types-chart').data.labels);
      expect(labels).toEqual(facets.items.slice(0, 12).map((item) => item.value ?? '(no type)'));
      const bronx = fixture!.rows.filter((row) => row.borough === 'bronx');
      expect(sum((await drawnCharts(page)).typeCounts)).toBe(bronx.length);
      expect(await page.textContent('#types-note')).toMatch(/Borough and days as chosen\.$/);
      expect(await page.textContent('#match-count')).toBe(`${bronx.length} requests match`);
      expectNoBrowserProblems(problems);
    });
  });

  it('downloads the CSV export of the chosen filters (fetched with the key, saved from a Blob)', async () => {
    await inNewPage(async (page, problems) => {
      await enterKey(page, TEST_API_KEY);
      await untilReady(page);
      await page.selectOption('#borough', 'queens');
      await untilReady(page);
      const exportRequest = page.waitForRequest('**/v1/exports/service-requests?*');
      const [download] = await Promise.all([page.waitForEvent('download'), page.click('#download-csv')]);
      const request = await exportRequest;
      expect(request.headers()['x-api-key']).toBe(TEST_API_KEY);
      expect(Object.fromEntries(new URL(request.url()).searchParams)).toEqual({ borough: 'queens', created_from: '2025-01-01', created_to: '2025-02-01', format: 'csv' });
      expect(download.suggestedFilename()).toBe('service-requests-queens-2025-01-01-to-2025-01-31.csv');
      const text = readFileSync(await download.path(), 'utf8');
      const expected = (await service!.get('/v1/exports/service-requests?format=csv&borough=queens&created_from=2025-01-01&created_to=2025-02-01')).body;
      expect(text).toBe(expected);
      expect(text.split('\r\n')[0]).toMatch(/^id,created_at,/);
      await page.waitForFunction(() => document.getElementById('status')?.textContent.startsWith('Downloaded the CSV'), undefined, { timeout: READY_TIMEOUT_MS });
      expectNoBrowserProblems(problems);
    });
  });

  it('a wrong key: the page says the key was refused and keeps nothing', async () => {
    await inNewPage(async (page) => {
      await enterKey(page, 'not-the-key');
      await page.waitForFunction(() => document.body.dataset.state === 'error', undefined, { timeout: READY_TIMEOUT_MS });
      expect(await page.textContent('#status')).toMatch(/refused this API key/);
      expect(await page.isVisible('#dashboard')).toBe(false);
      expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    });
  });
});
