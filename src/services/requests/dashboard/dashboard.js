// @ts-check
// The dashboard page (GET /dashboard; docs/requests.md, "Dashboard page"). Plain browser JavaScript,
// no build step. It reads this service's public API with the key the user types, kept in
// sessionStorage only (never in localStorage, a cookie or a URL). Chart.js is loaded before this
// module by dashboard.html, from this service.
//
// It uses the dashboard API (docs/requests.md): the chosen filters on /v1/stats/daily (whose `complete`
// flag marks the incomplete days), /v1/facets?field=complaint_type, /v1/service-requests/count for
// the match count, and /v1/exports/service-requests?format=csv for the CSV download (fetched with
// the key, since the key is a header, and saved from a Blob).

// Types: `// @ts-check` with JSDoc, checked by `tsc --noEmit` under the project's strict options
// (tsconfig.json: allowJs), so the page stays a plain served file. The API types below are the
// page's view of the answers, only the fields it reads (the API's schemas are in ../schemas.ts).

/**
 * @typedef {'bronx' | 'brooklyn' | 'manhattan' | 'queens' | 'staten_island'} Borough
 * @typedef {{ borough: string, from: string, to: string }} Filters The chosen filters ('' borough: all).
 * @typedef {{
 *   id: number, created_at: string, closed_at: string | null, status: string, complaint_type: string | null,
 *   descriptor: string | null, borough: Borough | null, incident_zip: string | null, channel: string | null,
 *   latitude: number | null, longitude: number | null, days_to_close: number | null,
 * }} ServiceRequest
 * @typedef {ServiceRequest & { latitude: number, longitude: number }} LocatedRequest
 * @typedef {{ items: ServiceRequest[], next_cursor: string | null }} ServiceRequestPage
 * @typedef {{
 *   date: string, opened: number, closed_within_14_days: number, share_closed_within_14_days: number | null,
 *   median_days_to_close: number | null, complete: boolean,
 * }} DailyStat
 * @typedef {{ value: string | number | null, count: number }} FacetCount
 * @typedef {{ rows: FacetCount[], scope: string }} ComplaintTypes
 * @typedef {{ located: LocatedRequest[], sampled: number, slices: number }} SampledPoints
 * @typedef {{
 *   snapshot_id: string, snapshot_date: string, row_count: number, period: { start: string, end: string },
 *   source: { kind: string, dataset: string, seed: number | null, generator_version: string | null },
 * }} Dataset
 * @typedef {{ x: number, y: number }} PlotPoint
 * @typedef {PlotPoint & { id: number, type: string | null }} RequestPoint
 */

/**
 * The elements of dashboard.html the script uses as more than an HTMLElement; every id it asks for is in the page.
 * @typedef {{
 *   'api-key': HTMLInputElement, borough: HTMLSelectElement, 'date-from': HTMLInputElement, 'date-to': HTMLInputElement,
 *   'download-csv': HTMLButtonElement, 'first-page': HTMLButtonElement, 'next-page': HTMLButtonElement,
 *   'daily-chart': HTMLCanvasElement, 'types-chart': HTMLCanvasElement, 'points-chart': HTMLCanvasElement,
 * }} PageElements
 */
/**
 * @template {string} Id
 * @typedef {Id extends keyof PageElements ? PageElements[Id] : HTMLElement} PageElement
 */

const KEY_STORAGE = 'requests-dashboard-api-key';
const TABLE_PAGE_SIZE = 25;
/** The plot of points: up to POINTS_PER_SLICE requests from each of POINT_SLICES equal parts of the period. */
const POINT_SLICES = 8;
const POINTS_PER_SLICE = 125;
const TOP_COMPLAINT_TYPES = 12;
const DAY_MS = 86_400_000;

/** @type {Record<Borough, { name: string, color: string }>} */
const BOROUGHS = {
  bronx: { name: 'Bronx', color: '#d1495b' },
  brooklyn: { name: 'Brooklyn', color: '#1d5fa8' },
  manhattan: { name: 'Manhattan', color: '#edae49' },
  queens: { name: 'Queens', color: '#2a9d8f' },
  staten_island: { name: 'Staten Island', color: '#7b5ea7' },
};
const NO_BOROUGH = { name: 'No borough', color: '#8a94a3' };
const OPENED_COLOR = '#1d5fa8';
const CLOSED_COLOR = '#2a9d8f';
const INCOMPLETE_SHADE = 'rgba(224, 182, 74, 0.18)';

/** Chart.js's UMD bundle (loaded by dashboard.html before this module) sets the global `Chart`. */
const Chart = /** @type {{ Chart: typeof import('chart.js').Chart }} */ (/** @type {unknown} */ (globalThis)).Chart;
Chart.defaults.animation = false;
Chart.defaults.font.family = 'system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif';
Chart.defaults.color = '#5f6b7a';

/**
 * @template {string} Id
 * @param {Id} id
 * @returns {PageElement<Id>}
 */
const element = (id) => /** @type {PageElement<Id>} */ (document.getElementById(id));
/** @param {number} n */
const formatCount = (n) => n.toLocaleString('en-US');

/**
 * @typedef {{
 *   key: string | null, dataset: Dataset | null, filters: Filters | null, cursors: (string | null)[], pageIndex: number,
 *   matchCount: number | null, generation: number, charts: Record<string, import('chart.js').Chart<any, any, any>>,
 * }} DashboardState
 */
/** @type {DashboardState} */
const state = {
  key: null,
  dataset: null,
  filters: null,
  /** cursors[i]: the cursor of table page i (null for the first). */
  cursors: [null],
  pageIndex: 0,
  matchCount: null,
  /** Increases with each refresh: answers of an older one are dropped. */
  generation: 0,
  charts: {},
};

class KeyRefused extends Error {}

class ApiFailure extends Error {
  /**
   * @param {number} status
   * @param {string | null} code
   * @param {string} message
   */
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/**
 * The answer of a GET with the key, once it is known to be a success (else KeyRefused or ApiFailure).
 * @param {string} path
 * @param {string} accept
 * @returns {Promise<Response>}
 */
async function keyedFetch(path, accept) {
  const response = await fetch(path, { headers: { 'X-API-Key': /** @type {string} */ (state.key), Accept: accept } });
  if (response.status === 401) throw new KeyRefused('The service refused this API key.');
  if (!response.ok) {
    // eslint-disable-next-line @typescript-eslint/no-unsafe-assignment -- the API's error object, named by the JSDoc cast
    const body = /** @type {{ error?: { code?: string, message?: string } } | null} */ (await response.json().catch(() => null));
    throw new ApiFailure(response.status, body?.error?.code ?? null, body?.error?.message ?? `HTTP ${response.status}`);
  }
  return response;
}

/**
 * The JSON answer of a GET with the key; `T`: the shape the API documents for that path.
 * @template T
 * @param {string} path
 * @returns {Promise<T>}
 */
async function api(path) {
  // eslint-disable-next-line @typescript-eslint/no-unsafe-return -- the API's JSON answer, of the caller's type T
  return (await keyedFetch(path, 'application/json')).json();
}

/**
 * @param {string} text
 * @param {{ error?: boolean }} [options]
 */
function setStatus(text, { error = false } = {}) {
  const status = element('status');
  status.textContent = text;
  status.classList.toggle('error', error);
}

/** @param {'idle' | 'loading' | 'ready' | 'error'} value */
function setPageState(value) {
  document.body.dataset.state = value;
}

// ---- dates ----

/**
 * @param {string} date
 * @param {number} days
 */
function addDays(date, days) {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);
}

/**
 * @param {string} from
 * @param {string} to
 */
function daysBetween(from, to) {
  return Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS);
}

/**
 * The list filters of the API: borough, and the chosen days (the "to" day included, created_to is exclusive).
 * @param {Filters} filters
 */
function listParameters(filters, from = filters.from, toExclusive = addDays(filters.to, 1)) {
  const parameters = new URLSearchParams();
  if (filters.borough) parameters.set('borough', filters.borough);
  parameters.set('created_from', from);
  parameters.set('created_to', toExclusive);
  return parameters;
}

/** @param {Filters} filters */
function describeFilters(filters) {
  const where = filters.borough ? BOROUGHS[/** @type {Borough} */ (filters.borough)].name : 'all boroughs';
  return `${where}, ${filters.from} to ${filters.to}`;
}

// ---- loading ----

/**
 * The days that hold any instant of the chosen days, each with `complete` (false: its 14-day window runs past the snapshot date).
 * @param {Filters} filters
 * @returns {Promise<DailyStat[]>}
 */
async function loadDaily(filters) {
  /** @type {{ items: DailyStat[] }} */
  const { items } = await api(`/v1/stats/daily?${listParameters(filters)}`);
  return items;
}

/**
 * `{field, items: [{value, count}]}`: every complaint type of the matching requests, null for those without one.
 * @param {Filters} filters
 * @returns {Promise<ComplaintTypes>}
 */
async function loadComplaintTypes(filters) {
  const parameters = listParameters(filters);
  parameters.set('field', 'complaint_type');
  /** @type {{ items: FacetCount[] }} */
  const { items } = await api(`/v1/facets?${parameters}`);
  return { rows: items, scope: 'Borough and days as chosen.' };
}

/**
 * @param {Filters} filters
 * @returns {Promise<number>}
 */
async function loadMatchCount(filters) {
  /** @type {{ count: number }} */
  const { count } = await api(`/v1/service-requests/count?${listParameters(filters)}`);
  return count;
}

/**
 * @param {Filters} filters
 * @returns {Promise<SampledPoints>}
 */
async function loadPoints(filters) {
  const days = daysBetween(filters.from, filters.to) + 1;
  const slices = Math.min(POINT_SLICES, days);
  const bounds = Array.from({ length: slices + 1 }, (_, i) => addDays(filters.from, Math.round((i * days) / slices)));
  /** @type {ServiceRequestPage[]} */
  const pages = await Promise.all(
    bounds.slice(0, -1).map((from, i) => {
      const parameters = listParameters(filters, from, /** @type {string} */ (bounds[i + 1]));
      parameters.set('limit', String(POINTS_PER_SLICE));
      return api(`/v1/service-requests?${parameters}`);
    }),
  );
  const requests = pages.flatMap((page) => page.items);
  const located = requests.filter(
    /** @returns {request is LocatedRequest} */ (request) => request.latitude !== null && request.longitude !== null,
  );
  return { located, sampled: requests.length, slices };
}

/**
 * @param {Filters} filters
 * @param {number} pageIndex
 * @returns {Promise<ServiceRequestPage>}
 */
async function loadTablePage(filters, pageIndex) {
  const parameters = listParameters(filters);
  parameters.set('limit', String(TABLE_PAGE_SIZE));
  const cursor = state.cursors[pageIndex];
  if (cursor) parameters.set('cursor', cursor);
  return api(`/v1/service-requests?${parameters}`);
}

// ---- drawing ----

/**
 * @param {string} name
 * @param {'daily-chart' | 'types-chart' | 'points-chart'} canvasId
 * @param {import('chart.js').ChartConfiguration<any, any, any>} configuration Any chart type: Chart.js's option types
 *   are wider than the callbacks here need (a linear axis's tick is a number, a point is a RequestPoint).
 */
function replaceChart(name, canvasId, configuration) {
  state.charts[name]?.destroy();
  state.charts[name] = new Chart(element(canvasId), configuration);
}

/**
 * Shades the incomplete days of the daily chart (their 14-day window runs past the snapshot date).
 * @type {import('chart.js').Plugin<'line', { firstIncomplete?: number | null }>}
 */
const incompleteDaysShading = {
  id: 'incompleteDaysShading',
  beforeDatasetsDraw(chart, _arguments, options) {
    const first = options.firstIncomplete;
    if (first === null || first === undefined) return;
    // The daily chart has its category axis `x`.
    const { ctx, chartArea, scales } = /** @type {typeof chart & { scales: { x: import('chart.js').Scale } }} */ (chart);
    const step = /** @type {unknown[]} */ (chart.data.labels).length > 1 ? scales.x.getPixelForValue(1) - scales.x.getPixelForValue(0) : 0;
    const left = Math.max(chartArea.left, scales.x.getPixelForValue(first) - step / 2);
    ctx.save();
    ctx.fillStyle = INCOMPLETE_SHADE;
    ctx.fillRect(left, chartArea.top, chartArea.right - left, chartArea.bottom - chartArea.top);
    ctx.fillStyle = '#8a6d1f';
    ctx.font = `12px ${Chart.defaults.font.family}`;
    ctx.textAlign = 'right';
    ctx.fillText('incomplete', chartArea.right - 4, chartArea.top + 14);
    ctx.restore();
  },
};

/** @param {DailyStat[]} days */
function drawDaily(days) {
  const incomplete = days.filter((day) => !day.complete);
  const firstIncomplete = days.findIndex((day) => !day.complete);
  const dashedWhenIncomplete = { borderDash: /** @param {{ p1DataIndex: number }} context */ (context) => (days[context.p1DataIndex]?.complete === false ? [5, 4] : undefined) };
  /**
   * @param {string} label
   * @param {'opened' | 'closed_within_14_days'} key
   * @param {string} color
   */
  const series = (label, key, color) => ({
    label,
    data: days.map((day) => day[key]),
    borderColor: color,
    backgroundColor: color,
    borderWidth: 1.6,
    pointRadius: days.length > 62 ? 0 : 2,
    pointHoverRadius: 4,
    tension: 0.15,
    segment: dashedWhenIncomplete,
  });
  replaceChart('daily', 'daily-chart', {
    type: 'line',
    data: {
      labels: days.map((day) => day.date),
      datasets: [series('Opened', 'opened', OPENED_COLOR), series('Closed within 14 days', 'closed_within_14_days', CLOSED_COLOR)],
    },
    plugins: [incompleteDaysShading],
    options: {
      maintainAspectRatio: false,
      interaction: { mode: 'index', intersect: false },
      scales: {
        x: { ticks: { maxTicksLimit: 12, maxRotation: 0 }, grid: { display: false } },
        y: { beginAtZero: true, ticks: { precision: 0 }, title: { display: true, text: 'requests' } },
      },
      plugins: {
        incompleteDaysShading: { firstIncomplete: firstIncomplete === -1 ? null : firstIncomplete },
        legend: { position: 'top', align: 'end' },
        tooltip: {
          callbacks: {
            footer: /** @param {import('chart.js').TooltipItem<'line'>[]} items */ (items) => {
              const day = days[/** @type {number} */ (items[0]?.dataIndex)];
              if (!day) return '';
              const share = day.share_closed_within_14_days === null ? 'no request' : `${Math.round(day.share_closed_within_14_days * 100)}% closed within 14 days`;
              const median = day.median_days_to_close === null ? '' : `, median ${day.median_days_to_close} days to close`;
              return `${share}${median}${day.complete ? '' : ' (incomplete day)'}`;
            },
          },
        },
      },
    },
  });
  const snapshotDate = state.dataset?.snapshot_date;
  element('daily-note').textContent =
    incomplete.length === 0
      ? 'Opened each day, and how many of them were closed within 14 days.'
      : `Opened each day, and how many of them were closed within 14 days. Shaded and dashed: the last ${incomplete.length} days are incomplete (their 14-day window runs past the snapshot date ${snapshotDate}), so their closed line is not final.`;
}

/** @param {ComplaintTypes} complaintTypes */
function drawComplaintTypes({ rows, scope }) {
  const top = [...rows].sort((a, b) => b.count - a.count).slice(0, TOP_COMPLAINT_TYPES);
  replaceChart('types', 'types-chart', {
    type: 'bar',
    data: {
      labels: top.map((row) => row.value ?? '(no type)'),
      datasets: [{ label: 'Requests', data: top.map((row) => row.count), backgroundColor: OPENED_COLOR, borderRadius: 2, maxBarThickness: 22 }],
    },
    options: {
      indexAxis: 'y',
      maintainAspectRatio: false,
      scales: { x: { beginAtZero: true, ticks: { precision: 0 } }, y: { grid: { display: false } } },
      plugins: { legend: { display: false } },
    },
  });
  const shown = rows.length > TOP_COMPLAINT_TYPES ? `The ${TOP_COMPLAINT_TYPES} largest of ${rows.length} types. ` : '';
  element('types-note').textContent = `${shown}${scope}`;
}

/**
 * Axis bounds that keep one kilometre the same length across and up (longitude degrees shrink by cos(latitude)).
 * @param {PlotPoint[]} points
 * @param {HTMLCanvasElement} canvas
 */
function equalScaleBounds(points, canvas) {
  const longitudes = points.map((point) => point.x);
  const latitudes = points.map((point) => point.y);
  let [west, east, south, north] = [Math.min(...longitudes), Math.max(...longitudes), Math.min(...latitudes), Math.max(...latitudes)];
  const middleLatitude = (south + north) / 2;
  const shrink = Math.cos((middleLatitude * Math.PI) / 180);
  // The canvas sits in its chart box in dashboard.html.
  const width = Math.max(/** @type {HTMLElement} */ (canvas.parentElement).clientWidth - 70, 100);
  const height = Math.max(/** @type {HTMLElement} */ (canvas.parentElement).clientHeight - 60, 100);
  let spanX = Math.max(east - west, 0.01) * shrink;
  let spanY = Math.max(north - south, 0.01);
  if (spanX / width > spanY / height) spanY = (spanX * height) / width;
  else spanX = (spanY * width) / height;
  const middleLongitude = (west + east) / 2;
  const padding = 1.06;
  west = middleLongitude - (spanX * padding) / shrink / 2;
  east = middleLongitude + (spanX * padding) / shrink / 2;
  south = middleLatitude - (spanY * padding) / 2;
  north = middleLatitude + (spanY * padding) / 2;
  return { west, east, south, north };
}

/** @param {SampledPoints} points */
function drawPoints({ located, sampled, slices }) {
  const canvas = element('points-chart');
  /** @type {Map<string, RequestPoint[]>} */
  const groups = new Map();
  for (const request of located) {
    const key = request.borough ?? 'none';
    if (!groups.has(key)) groups.set(key, []);
    /** @type {RequestPoint[]} */ (groups.get(key)).push({ x: request.longitude, y: request.latitude, id: request.id, type: request.complaint_type });
  }
  const order = [...Object.keys(BOROUGHS), 'none'].filter((key) => groups.has(key));
  const datasets = order.map((key) => {
    const style = /** @type {Record<string, { name: string, color: string } | undefined>} */ (BOROUGHS)[key] ?? NO_BOROUGH;
    return { label: style.name, data: groups.get(key), backgroundColor: `${style.color}b3`, borderWidth: 0, pointRadius: 2.4, pointHoverRadius: 4 };
  });
  const bounds = located.length > 0 ? equalScaleBounds(located.map((r) => ({ x: r.longitude, y: r.latitude })), canvas) : null;
  /** @param {number} value */
  const degrees = (value) => value.toFixed(2);
  replaceChart('points', 'points-chart', {
    type: 'scatter',
    data: { datasets },
    options: {
      maintainAspectRatio: false,
      scales: {
        x: { type: 'linear', min: bounds?.west, max: bounds?.east, title: { display: true, text: 'longitude' }, ticks: { callback: degrees, maxTicksLimit: 7 } },
        y: { type: 'linear', min: bounds?.south, max: bounds?.north, title: { display: true, text: 'latitude' }, ticks: { callback: degrees, maxTicksLimit: 8 } },
      },
      plugins: {
        legend: { position: 'top', align: 'end', labels: { boxWidth: 10 } },
        tooltip: { callbacks: { label: /** @param {{ raw: RequestPoint }} item */ (item) => `#${item.raw.id} ${item.raw.type ?? '(no type)'}` } },
      },
    },
  });
  const withoutPlace = sampled - located.length;
  element('points-note').textContent =
    sampled === 0
      ? 'No request in this selection.'
      : `${formatCount(located.length)} requests with a place, sampled over the chosen days (up to ${POINTS_PER_SLICE} from each of ${slices} equal parts)${withoutPlace > 0 ? `; ${formatCount(withoutPlace)} sampled without one` : ''}. Plain latitude and longitude, no map.`;
}

/**
 * @param {string | number | null | undefined} text
 * @param {string} [className]
 */
function cell(text, className) {
  const td = document.createElement('td');
  td.textContent = text === null || text === undefined ? '—' : String(text);
  if (className) td.className = className;
  if (text === null || text === undefined) td.classList.add('empty');
  return td;
}

/** @param {ServiceRequestPage} page */
function drawTable(page) {
  // dashboard.html's table has its tbody.
  const body = /** @type {HTMLTableSectionElement} */ (element('requests-table').querySelector('tbody'));
  /** @param {string | null} value */
  const time = (value) => (value === null ? null : value.replace('T', ' '));
  body.replaceChildren(
    ...page.items.map((request) => {
      const row = document.createElement('tr');
      row.append(
        cell(request.id, 'number'),
        cell(time(request.created_at)),
        cell(time(request.closed_at)),
        cell(request.status),
        cell(request.complaint_type),
        cell(request.descriptor),
        // A borough this page does not know yet (a later API version) is shown as sent.
        cell(request.borough === null ? null : /** @type {Partial<typeof BOROUGHS>} */ (BOROUGHS)[request.borough]?.name ?? request.borough),
        cell(request.incident_zip),
        cell(request.channel),
        cell(request.days_to_close, 'number'),
      );
      return row;
    }),
  );
  if (page.items.length === 0) {
    const row = document.createElement('tr');
    const empty = cell('No request in this selection.');
    empty.colSpan = 10;
    row.append(empty);
    body.append(row);
  }
  state.cursors.length = state.pageIndex + 1;
  if (page.next_cursor) state.cursors.push(page.next_cursor);
  const first = state.pageIndex * TABLE_PAGE_SIZE;
  const total = state.matchCount === null ? '' : ` of ${formatCount(state.matchCount)}`;
  element('page-label').textContent = page.items.length === 0 ? '' : `Page ${state.pageIndex + 1}: rows ${formatCount(first + 1)} to ${formatCount(first + page.items.length)}${total}`;
  element('next-page').disabled = !page.next_cursor;
  element('first-page').disabled = state.pageIndex === 0;
}

// ---- flow ----

/** @param {unknown} error */
function handleFailure(error) {
  setPageState('error');
  if (error instanceof KeyRefused) {
    sessionStorage.removeItem(KEY_STORAGE);
    state.key = null;
    element('dashboard').hidden = true;
    element('forget-key').hidden = true;
    setStatus(`${error.message} Type the key again.`, { error: true });
    element('api-key').focus();
  } else if (error instanceof ApiFailure) {
    setStatus(`The API answered ${error.status}: ${error.message}`, { error: true });
  } else {
    setStatus('The service cannot be reached. Try again.', { error: true });
  }
}

/** @returns {Filters} */
function readFilters() {
  return { borough: element('borough').value, from: element('date-from').value, to: element('date-to').value };
}

async function refresh() {
  const filters = readFilters();
  // refresh() runs once the dataset is read (start) or from the dashboard it shows.
  const period = /** @type {Dataset} */ (state.dataset).period;
  if (!filters.from || !filters.to || filters.from > filters.to) {
    setStatus('Choose a "From" day on or before the "To" day.', { error: true });
    return;
  }
  if (filters.from < period.start || filters.to > period.end) {
    setStatus(`The data covers ${period.start} to ${period.end}: choose days in that period.`, { error: true });
    return;
  }
  const generation = ++state.generation;
  state.filters = filters;
  state.cursors = [null];
  state.pageIndex = 0;
  setPageState('loading');
  setStatus(`Loading ${describeFilters(filters)}…`);
  try {
    const [days, types, points, page, count] = await Promise.all([
      loadDaily(filters),
      loadComplaintTypes(filters),
      loadPoints(filters),
      loadTablePage(filters, 0),
      loadMatchCount(filters),
    ]);
    if (generation !== state.generation) return;
    state.matchCount = count;
    element('match-count').textContent = `${formatCount(state.matchCount)} requests match`;
    drawDaily(days);
    drawComplaintTypes(types);
    drawPoints(points);
    drawTable(page);
    setStatus(`Showing ${describeFilters(filters)}.`);
    setPageState('ready');
  } catch (error) {
    if (generation === state.generation) handleFailure(error);
  }
}

/**
 * Downloads the requests of the chosen filters as CSV: the export needs the key in a header, which a
 * plain link cannot send, so the answer is fetched and saved from a Blob (an object URL of this
 * origin: no change to the page's policy).
 */
async function downloadCsv() {
  const filters = state.filters;
  if (!filters) return;
  const button = element('download-csv');
  button.disabled = true;
  setStatus(`Preparing the CSV of ${describeFilters(filters)}…`);
  try {
    const parameters = listParameters(filters);
    parameters.set('format', 'csv');
    const blob = await (await keyedFetch(`/v1/exports/service-requests?${parameters}`, 'text/csv')).blob();
    const url = URL.createObjectURL(blob);
    const link = document.createElement('a');
    link.href = url;
    link.download = `service-requests-${filters.borough || 'all-boroughs'}-${filters.from}-to-${filters.to}.csv`;
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60_000);
    setStatus(`Downloaded the CSV of ${describeFilters(filters)}.`);
  } catch (error) {
    handleFailure(error);
  } finally {
    button.disabled = false;
  }
}

/**
 * @param {number} pageIndex
 * @returns {Promise<void>}
 */
async function showTablePage(pageIndex) {
  const generation = state.generation;
  setPageState('loading');
  try {
    state.pageIndex = pageIndex;
    // The table's buttons are shown once a refresh has chosen the filters.
    const page = await loadTablePage(/** @type {Filters} */ (state.filters), pageIndex);
    if (generation !== state.generation) return;
    drawTable(page);
    setPageState('ready');
  } catch (error) {
    if (error instanceof ApiFailure && error.code === 'invalid_cursor') {
      // The service restarted with another cursor key, or the snapshot changed: start again.
      setStatus('The table started again from its first page (the service no longer accepts the saved page).');
      state.cursors = [null];
      return showTablePage(0);
    }
    handleFailure(error);
  }
}

/** @param {Dataset} dataset */
function describeDataset(dataset) {
  element('dataset-summary').textContent =
    `${formatCount(dataset.row_count)} requests created ${dataset.period.start} to ${dataset.period.end}; statuses as of ${dataset.snapshot_date} (snapshot ${dataset.snapshot_id}).`;
  const notice = element('synthetic-notice');
  const source = dataset.source;
  if (source.kind === 'synthetic') {
    const generator = source.generator_version === null ? '' : ` by generator ${source.generator_version}`;
    const seed = source.seed === null ? '' : ` with seed ${source.seed}`;
    notice.textContent = `Synthetic data: these requests were generated${generator}${seed} in the layout of NYC Open Data ${source.dataset}. They are not real 311 requests; use the page to try the API, not to draw conclusions about the city.`;
    notice.hidden = false;
  } else {
    notice.hidden = true;
  }
}

/** @param {string} key */
async function start(key) {
  state.key = key;
  setPageState('loading');
  setStatus('Reading the snapshot…');
  try {
    /** @type {Dataset} */
    const dataset = await api('/v1/dataset');
    sessionStorage.setItem(KEY_STORAGE, key);
    state.dataset = dataset;
    describeDataset(dataset);
    for (const id of /** @type {const} */ (['date-from', 'date-to'])) {
      element(id).min = dataset.period.start;
      element(id).max = dataset.period.end;
    }
    element('date-from').value = dataset.period.start;
    element('date-to').value = dataset.period.end;
    element('api-key').value = '';
    element('api-key').placeholder = 'key in use';
    element('forget-key').hidden = false;
    element('dashboard').hidden = false;
    await refresh();
  } catch (error) {
    handleFailure(error);
  }
}

element('key-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const key = element('api-key').value.trim();
  if (key) void start(key);
});

element('forget-key').addEventListener('click', () => {
  sessionStorage.removeItem(KEY_STORAGE);
  state.key = null;
  state.generation += 1;
  element('dashboard').hidden = true;
  element('forget-key').hidden = true;
  element('api-key').placeholder = 'X-API-Key';
  setPageState('idle');
  setStatus('The key is forgotten. Type a key to see the data again.');
});

element('filters').addEventListener('submit', (event) => {
  event.preventDefault();
  void refresh();
});
element('borough').addEventListener('change', () => void refresh());

element('reset-filters').addEventListener('click', () => {
  // The reset button is in the dashboard, shown once the dataset is read.
  element('borough').value = '';
  element('date-from').value = /** @type {Dataset} */ (state.dataset).period.start;
  element('date-to').value = /** @type {Dataset} */ (state.dataset).period.end;
  void refresh();
});

element('download-csv').addEventListener('click', () => void downloadCsv());
element('next-page').addEventListener('click', () => void showTablePage(state.pageIndex + 1));
element('first-page').addEventListener('click', () => void showTablePage(0));

const savedKey = sessionStorage.getItem(KEY_STORAGE);
if (savedKey) void start(savedKey);
else {
  setPageState('idle');
  element('api-key').focus();
}
