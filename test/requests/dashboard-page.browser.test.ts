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
/** Five squares standing for the boroughs' outlines (the real ones are data from outside the repository). */
const OUTLINES_FIXTURE = resolve(REPO_ROOT, 'test/fixtures/requests/borough-outlines.geojson');
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
/** The query of every request the page sends, by path, as it sends them (filled while the test runs). */
function sentQueries(page: Page): Record<string, URLSearchParams[]> {
  const queries: Record<string, URLSearchParams[]> = {};
  page.on('request', (request) => {
    const url = new URL(request.url());
    (queries[url.pathname] ??= []).push(url.searchParams);
  });
  return queries;
}

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

/** What the map says it drew (its canvas's data attributes), and the pixels of its outline colour and of its cells' hue. */
async function drawnMap(page: Page): Promise<{ mode: string; outlines: number; cells: number; outlinePixels: number; cellPixels: number }> {
  return page.evaluate(() => {
    const canvas = document.getElementById('points-chart') as HTMLCanvasElement;
    const pixels = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height).data;
    let outlinePixels = 0;
    let cellPixels = 0;
    for (let i = 0; i < pixels.length; i += 4) {
      const [r, g, b, a] = [pixels[i]!, pixels[i + 1]!, pixels[i + 2]!, pixels[i + 3]!];
      // The outline's line: rgb(62, 110, 80), opaque; a cell: rgba(230, 110, 20, 0.15 to 0.9).
      if (a > 200 && Math.abs(r - 62) < 12 && Math.abs(g - 110) < 12 && Math.abs(b - 80) < 12) outlinePixels += 1;
      if (a > 30 && Math.abs(r - 230) < 12 && Math.abs(g - 110) < 12 && Math.abs(b - 20) < 12) cellPixels += 1;
    }
    const data = canvas.dataset;
    return { mode: data.mode ?? '', outlines: Number(data.outlines), cells: Number(data.cells), outlinePixels, cellPixels };
  });
}

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
    service = await startTestApp(fixture.databaseUrl, { BOROUGH_OUTLINES_FILE: OUTLINES_FIXTURE });
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

  it('the map: the borough outlines under the points of every matching request in view, from the service itself', async () => {
    await inNewPage(async (page, problems) => {
      const outlines = page.waitForResponse('**/dashboard/boroughs.geojson');
      await enterKey(page, TEST_API_KEY);
      expect((await outlines).status()).toBe(200);
      await untilReady(page);
      const map = await drawnMap(page);
      expect(map).toMatchObject({ mode: 'points', outlines: 5, cells: 0 });
      // The outlines' line is drawn (the fixture's five squares: hundreds of pixels of its colour), and no cell.
      expect(map.outlinePixels).toBeGreaterThan(300);
      expect(map.cellPixels).toBe(0);
      const located = fixture!.rows.filter((row) => row.latitude !== null && row.longitude !== null);
      expect(sum(Object.values((await drawnCharts(page)).pointsByBorough))).toBe(located.length);
      expect(await page.textContent('#points-note')).toBe(`${located.length} requests with a place, each drawn on the borough outlines.`);
      expectNoBrowserProblems(problems);
    });
  });

  it('the map past 5,000 requests in view: counts per cell from /v1/stats/cells, drawn over the outlines, no point', async () => {
    await inNewPage(async (page, problems) => {
      // The fixture has 38 requests: the count of the map's view is rewritten to stand for a larger snapshot.
      await page.route('**/v1/service-requests/count?*', async (route) => {
        if (!new URL(route.request().url()).searchParams.has('bbox')) return route.continue();
        return route.fulfill({ json: { count: 5_001 } });
      });
      const queries = sentQueries(page);
      await enterKey(page, TEST_API_KEY);
      await untilReady(page);
      await page.selectOption('#borough', 'brooklyn');
      await untilReady(page);
      const query = queries['/v1/stats/cells']!.at(-1)!;
      expect(Object.fromEntries(query)).toEqual({ borough: 'brooklyn', created_from: '2025-01-01', created_to: '2025-02-01', bbox: '-74.26,40.49,-73.69,40.92', cell: '0.01' });
      const answer = JSON.parse((await service!.get(`/v1/stats/cells?${query}`)).body) as { cells: unknown[]; total: number };
      const brooklyn = fixture!.rows.filter((row) => row.borough === 'brooklyn' && row.latitude !== null);
      expect(answer.total).toBe(brooklyn.length);
      const map = await drawnMap(page);
      expect(map).toMatchObject({ mode: 'cells', outlines: 5, cells: answer.cells.length });
      expect(map.cellPixels).toBeGreaterThan(20);
      expect(map.outlinePixels).toBeGreaterThan(300);
      expect(sum(Object.values((await drawnCharts(page)).pointsByBorough))).toBe(0);
      expect(await page.textContent('#points-note')).toBe(
        `${brooklyn.length} requests with a place: more than 5,000, so counted per cell of 0.01 degree (${answer.cells.length} cells, darker for more) on the borough outlines.`,
      );
      mkdirSync(resolve(REPO_ROOT, '.test-results'), { recursive: true });
      await page.locator('#points-chart').screenshot({ path: resolve(REPO_ROOT, '.test-results/dashboard-map-cells.png') });
      expectNoBrowserProblems(problems);
    });
  });

  it('the group-by view: a table and a chart of /v1/stats/groups under the filters, two columns, any period', async () => {
    await inNewPage(async (page, problems) => {
      const queries = sentQueries(page);
      const groupQueries = (): URLSearchParams[] => queries['/v1/stats/groups'] ?? [];
      await enterKey(page, TEST_API_KEY);
      await untilReady(page);
      const tableRows = () => page.$$eval('#groups-table tbody tr', (rows) => rows.map((row) => [...row.querySelectorAll('td')].map((cell) => cell.textContent)));
      const groupChart = () =>
        page.evaluate(() => {
          const chart = (window as unknown as { Chart: { getChart(id: string): { config: { type: string }; data: { labels: string[]; datasets: { label: string; data: number[] }[] } } } }).Chart.getChart('groups-chart');
          return { type: chart.config.type, labels: chart.data.labels, datasets: chart.data.datasets.map((set) => ({ label: set.label, data: set.data })) };
        });
      const rows = fixture!.rows;

      // By borough over the whole range: one row per borough (and the requests without one), adding up to every request.
      let query = groupQueries().at(-1)!;
      expect(Object.fromEntries(query)).toEqual({ created_from: '2025-01-01', created_to: '2025-02-01', by: 'borough', order: '-opened', limit: '20' });
      let answer = JSON.parse((await service!.get(`/v1/stats/groups?${query}`)).body) as { items: { key: Record<string, string | null>; opened: number; p90_days_to_close: number | null }[]; others: { opened: number }[] };
      // The six numbers end each row (opened first); an others row spans the key columns with one cell.
      let table = await tableRows();
      expect(table).toHaveLength(answer.items.length + answer.others.length);
      expect(table.map((row) => Number(row.at(-6)))).toEqual([...answer.items, ...answer.others].map((group) => group.opened));
      expect(sum(table.map((row) => Number(row.at(-6))))).toBe(rows.length);
      expect(table.map((row) => row[0])).toEqual(answer.items.map((group) => ({ bronx: 'Bronx', brooklyn: 'Brooklyn', manhattan: 'Manhattan', queens: 'Queens', staten_island: 'Staten Island' })[group.key.borough ?? ''] ?? '(none)'));
      // The p90, last column, as the API gave it.
      expect(table.map((row) => row.at(-1))).toEqual(answer.items.map((group) => (group.p90_days_to_close === null ? '—' : String(group.p90_days_to_close))));
      let chart = await groupChart();
      expect(chart.type).toBe('bar');
      expect(chart.datasets[0]!.data).toEqual(answer.items.map((group) => group.opened));
      const queens = rows.filter((row) => row.borough === 'queens').length;
      expect(chart.datasets[0]!.data[chart.labels.indexOf('Queens')]).toBe(queens);

      // Two columns, per week, 5 keys: the line chart has one line per key, the others have a row per week.
      await page.selectOption('#group-second', 'status');
      await untilReady(page);
      await page.selectOption('#group-period', 'week');
      await untilReady(page);
      await page.selectOption('#group-limit', '10');
      await untilReady(page);
      query = groupQueries().at(-1)!;
      expect(Object.fromEntries(query)).toEqual({ created_from: '2025-01-01', created_to: '2025-02-01', by: 'borough,status', period: 'week', order: '-opened', limit: '10' });
      answer = JSON.parse((await service!.get(`/v1/stats/groups?${query}`)).body) as typeof answer;
      table = await tableRows();
      expect(table).toHaveLength(answer.items.length + answer.others.length);
      // Columns: borough, status, week, then the six numbers (opened first); every request counted once.
      expect(sum(table.map((row) => Number(row.at(-6))))).toBe(rows.length);
      expect(await page.$$eval('#groups-table thead th', (cells) => cells.map((cell) => cell.textContent))).toEqual([
        'borough', 'status', 'week', 'opened', 'closed', 'closed within 14 days', 'share within 14 days', 'median days to close', 'p90 days to close',
      ]);
      chart = await groupChart();
      expect(chart.type).toBe('line');
      expect(chart.labels.every((label) => /^2025-W0[1-5]$/.test(label))).toBe(true);
      expect(chart.datasets.length).toBeGreaterThan(1);
      expect(chart.datasets.length).toBeLessThanOrEqual(8);
      expect(await page.textContent('#groups-note')).toMatch(/^Requests grouped by borough and status, per week: the \d+ largest groups/);

      // The filters apply: Bronx only.
      await page.selectOption('#borough', 'bronx');
      await untilReady(page);
      expect(groupQueries().at(-1)!.get('borough')).toBe('bronx');
      expect(sum((await tableRows()).map((row) => Number(row.at(-6))))).toBe(rows.filter((row) => row.borough === 'bronx').length);
      mkdirSync(resolve(REPO_ROOT, '.test-results'), { recursive: true });
      await page.locator('#groups-card').screenshot({ path: resolve(REPO_ROOT, '.test-results/dashboard-groups.png') });
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
      const queries = sentQueries(page);
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
