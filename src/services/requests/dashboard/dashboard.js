// @ts-check
// The dashboard page (GET /dashboard; docs/requests.md, "Dashboard page"). Plain browser JavaScript,
// no build step. It reads this service's public API with the key the user types, kept in
// sessionStorage only (never in localStorage, a cookie or a URL). Chart.js is loaded before this
// module by dashboard.html, from this service.
//
// It uses the dashboard API (docs/requests.md): the chosen filters on /v1/stats/daily (whose `complete`
// flag marks the incomplete days), /v1/facets?field=complaint_type, /v1/service-requests/count for
// the match count, the map (the requests in view as points up to POINT_LIMIT, else /v1/stats/cells,
// over the borough outlines of /dashboard/boroughs.geojson), /v1/stats/groups for the group-by view,
// and /v1/exports/service-requests?format=csv for the CSV download (fetched with the key, since the
// key is a header, and saved from a Blob).

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
 * @typedef {{ west: number, south: number, east: number, north: number }} Box
 * @typedef {{ bounds: [number, number, number, number], count: number }} CellCount
 * @typedef {{ mode: 'points', located: LocatedRequest[], inView: number }
 *   | { mode: 'cells', cells: CellCount[], size: string, inView: number }} MapLayer What the map shows: points or cells.
 * @typedef {{ features: { properties: { borough: string }, geometry: { coordinates: number[][][][] } }[] }} Outlines
 *   The borough outlines (GeoJSON MultiPolygons), only what the page reads.
 * @typedef {{
 *   opened: number, closed: number, closed_within_14_days: number, share_closed_within_14_days: number | null,
 *   median_days_to_close: number | null, p90_days_to_close: number | null,
 * }} GroupNumbers
 * @typedef {GroupNumbers & { key: Record<string, string | number | null>, period?: string }} Group
 * @typedef {{ items: Group[], others: (GroupNumbers & { period?: string })[] }} GroupAnswer The answer of /v1/stats/groups:
 *   the groups of the keys kept, and the keys left out summed (per period).
 * @typedef {{ by: string[], period: string, limit: string }} GroupChoice
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
 *   'groups-chart': HTMLCanvasElement, 'group-first': HTMLSelectElement, 'group-second': HTMLSelectElement,
 *   'group-period': HTMLSelectElement, 'group-limit': HTMLSelectElement,
 * }} PageElements
 */
/**
 * @template {string} Id
 * @typedef {Id extends keyof PageElements ? PageElements[Id] : HTMLElement} PageElement
 */

const KEY_STORAGE = 'requests-dashboard-api-key';
const TABLE_PAGE_SIZE = 25;
/** The map: the requests in view drawn one by one up to this many; past it, counted per cell by the API. */
const POINT_LIMIT = 5_000;
/** Rows per page read for the points. */
const POINTS_PAGE = 1_000;
/** The map's view: the five boroughs (the bounds of their outlines, rounded outwards). */
const VIEW = { west: -74.26, south: 40.49, east: -73.69, north: 40.92 };
/** The cell sizes of /v1/stats/cells, in degrees; the map takes the smallest that keeps the cells in view within MAP_CELLS. */
const CELL_SIZES = ['0.01', '0.02', '0.05', '0.1', '0.2', '0.5', '1'];
const MAP_CELLS = 4_000;
const OUTLINE_FILL = 'rgba(62, 110, 80, 0.06)';
const OUTLINE_LINE = 'rgb(62, 110, 80)';
/** The columns of the group-by view (the `by` values of /v1/stats/groups). */
const GROUP_COLUMNS = ['borough', 'complaint_type', 'descriptor', 'status', 'channel', 'council_district', 'incident_zip', 'location_type', 'community_board'];
/** Lines of the group-by chart per period: the first keys of the answer. */
const GROUP_LINES = 8;
const GROUP_COLORS = ['#1d5fa8', '#d1495b', '#2a9d8f', '#edae49', '#7b5ea7', '#00798c', '#8a94a3', '#66a182'];
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
 *   outlines: Outlines | null, map: MapLayer | null,
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
  /** The borough outlines, read once (null when they cannot be read: the map is drawn without them). */
  outlines: null,
  /** What the map shows now (its plugin draws the cells). */
  map: null,
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

/** @returns {Promise<Outlines | null>} */
async function loadOutlines() {
  try {
    const response = await fetch('/dashboard/boroughs.geojson');
    // eslint-disable-next-line @typescript-eslint/no-unsafe-return -- the service's own GeoJSON file, of the type named
    return response.ok ? await response.json() : null;
  } catch {
    return null;
  }
}

/**
 * The smallest cell size whose cells over the box stay within MAP_CELLS (the service counts them exactly).
 * @param {Box} box
 */
function cellSizeFor(box) {
  /** @param {number} size @param {number} low @param {number} high @param {number} origin */
  const across = (size, low, high, origin) => Math.floor((high + origin) / size) - Math.floor((low + origin) / size) + 1;
  return (
    CELL_SIZES.find((size) => across(Number(size), box.west, box.east, 180.0005) * across(Number(size), box.south, box.north, 90.0005) <= MAP_CELLS) ??
    /** @type {string} */ (CELL_SIZES.at(-1))
  );
}

/**
 * The map's layer: the matching requests in view, every one of them when they are POINT_LIMIT or fewer
 * (pages of the list), else their counts per cell (/v1/stats/cells).
 * @param {Filters} filters
 * @returns {Promise<MapLayer>}
 */
async function loadMap(filters) {
  const parameters = listParameters(filters);
  parameters.set('bbox', [VIEW.west, VIEW.south, VIEW.east, VIEW.north].join(','));
  /** @type {{ count: number }} */
  const { count } = await api(`/v1/service-requests/count?${parameters}`);
  if (count > POINT_LIMIT) {
    const size = cellSizeFor(VIEW);
    parameters.set('cell', size);
    /** @type {{ cells: CellCount[], total: number }} */
    const { cells, total } = await api(`/v1/stats/cells?${parameters}`);
    return { mode: 'cells', cells, size, inView: total };
  }
  parameters.set('limit', String(POINTS_PAGE));
  /** @type {LocatedRequest[]} */
  const located = [];
  for (let cursor = /** @type {string | null} */ (null), first = true; first || cursor !== null; first = false) {
    if (cursor !== null) parameters.set('cursor', cursor);
    /** @type {ServiceRequestPage} */
    const page = await api(`/v1/service-requests?${parameters}`);
    for (const request of page.items) if (request.latitude !== null && request.longitude !== null) located.push(/** @type {LocatedRequest} */ (request));
    cursor = located.length < POINT_LIMIT ? page.next_cursor : null;
  }
  return { mode: 'points', located, inView: count };
}

/** @returns {GroupChoice} */
function readGroupChoice() {
  const by = [element('group-first').value, element('group-second').value].filter((column, i, all) => column !== '' && all.indexOf(column) === i);
  return { by, period: element('group-period').value, limit: element('group-limit').value };
}

/**
 * @param {Filters} filters
 * @param {GroupChoice} choice
 * @returns {Promise<GroupAnswer>}
 */
async function loadGroups(filters, choice) {
  const parameters = listParameters(filters);
  parameters.set('by', choice.by.join(','));
  if (choice.period) parameters.set('period', choice.period);
  // The largest groups first.
  parameters.set('order', '-opened');
  parameters.set('limit', choice.limit);
  return api(`/v1/stats/groups?${parameters}`);
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
 * @param {'daily-chart' | 'types-chart' | 'points-chart' | 'groups-chart'} canvasId
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

/**
 * Draws under the map's datasets: the borough outlines, then the cells of a cell layer (darker for
 * more requests, on a logarithmic scale), clipped to the plot.
 * @type {import('chart.js').Plugin<'scatter'>}
 */
const mapLayers = {
  id: 'mapLayers',
  beforeDatasetsDraw(chart) {
    const { ctx, chartArea, scales } = /** @type {typeof chart & { scales: { x: import('chart.js').Scale, y: import('chart.js').Scale } }} */ (chart);
    /** @param {number} longitude */
    const px = (longitude) => scales.x.getPixelForValue(longitude);
    /** @param {number} latitude */
    const py = (latitude) => scales.y.getPixelForValue(latitude);
    ctx.save();
    ctx.beginPath();
    ctx.rect(chartArea.left, chartArea.top, chartArea.right - chartArea.left, chartArea.bottom - chartArea.top);
    ctx.clip();
    for (const feature of state.outlines?.features ?? []) {
      ctx.beginPath();
      for (const polygon of feature.geometry.coordinates) {
        for (const ring of polygon) {
          ring.forEach(([longitude, latitude], i) => (i === 0 ? ctx.moveTo(px(/** @type {number} */ (longitude)), py(/** @type {number} */ (latitude))) : ctx.lineTo(px(/** @type {number} */ (longitude)), py(/** @type {number} */ (latitude)))));
          ctx.closePath();
        }
      }
      ctx.fillStyle = OUTLINE_FILL;
      ctx.fill('evenodd');
      ctx.strokeStyle = OUTLINE_LINE;
      ctx.lineWidth = 1;
      ctx.stroke();
    }
    const layer = state.map;
    if (layer?.mode === 'cells') {
      const largest = Math.max(1, ...layer.cells.map((cell) => cell.count));
      for (const { bounds, count } of layer.cells) {
        const [west, south, east, north] = bounds;
        const shade = 0.15 + (0.75 * Math.log1p(count)) / Math.log1p(largest);
        ctx.fillStyle = `rgba(230, 110, 20, ${shade.toFixed(3)})`;
        ctx.fillRect(px(west), py(north), px(east) - px(west), py(south) - py(north));
      }
    }
    ctx.restore();
  },
};

/** @param {MapLayer} layer */
function drawMap(layer) {
  state.map = layer;
  const canvas = element('points-chart');
  /** @type {Map<string, RequestPoint[]>} */
  const groups = new Map();
  for (const request of layer.mode === 'points' ? layer.located : []) {
    const key = request.borough ?? 'none';
    if (!groups.has(key)) groups.set(key, []);
    /** @type {RequestPoint[]} */ (groups.get(key)).push({ x: request.longitude, y: request.latitude, id: request.id, type: request.complaint_type });
  }
  const order = [...Object.keys(BOROUGHS), 'none'].filter((key) => groups.has(key));
  const datasets = order.map((key) => {
    const style = /** @type {Record<string, { name: string, color: string } | undefined>} */ (BOROUGHS)[key] ?? NO_BOROUGH;
    return { label: style.name, data: groups.get(key), backgroundColor: `${style.color}b3`, borderWidth: 0, pointRadius: 2.4, pointHoverRadius: 4 };
  });
  const bounds = equalScaleBounds([{ x: VIEW.west, y: VIEW.south }, { x: VIEW.east, y: VIEW.north }], canvas);
  /** @param {number} value */
  const degrees = (value) => value.toFixed(2);
  replaceChart('points', 'points-chart', {
    type: 'scatter',
    data: { datasets },
    options: {
      maintainAspectRatio: false,
      scales: {
        x: { type: 'linear', min: bounds.west, max: bounds.east, title: { display: true, text: 'longitude' }, ticks: { callback: degrees, maxTicksLimit: 7 } },
        y: { type: 'linear', min: bounds.south, max: bounds.north, title: { display: true, text: 'latitude' }, ticks: { callback: degrees, maxTicksLimit: 8 } },
      },
      plugins: {
        legend: { display: layer.mode === 'points', position: 'top', align: 'end', labels: { boxWidth: 10 } },
        tooltip: { callbacks: { label: /** @param {{ raw: RequestPoint }} item */ (item) => `#${item.raw.id} ${item.raw.type ?? '(no type)'}` } },
      },
    },
    plugins: [mapLayers],
  });
  // What the map drew, for a reader of the page's DOM (and its browser test).
  canvas.dataset.mode = layer.mode;
  canvas.dataset.outlines = String(state.outlines?.features.length ?? 0);
  canvas.dataset.cells = String(layer.mode === 'cells' ? layer.cells.length : 0);
  const outlines = state.outlines === null ? ' (the borough outlines could not be read)' : ' on the borough outlines';
  element('points-note').textContent =
    layer.inView === 0
      ? 'No request with a place in this selection.'
      : layer.mode === 'points'
        ? `${formatCount(layer.located.length)} requests with a place, each drawn${outlines}.`
        : `${formatCount(layer.inView)} requests with a place: more than ${formatCount(POINT_LIMIT)}, so counted per cell of ${layer.size} degree (${formatCount(layer.cells.length)} cells, darker for more)${outlines}.`;
}

/**
 * A group's values of its columns, as words: a borough by its name, null as "(none)".
 * @param {Group} group
 * @param {string[]} by
 */
function groupLabel(group, by) {
  return by
    .map((column) => {
      const value = group.key[column];
      if (value === null || value === undefined) return '(none)';
      if (column === 'borough') return /** @type {Record<string, { name: string } | undefined>} */ (BOROUGHS)[String(value)]?.name ?? String(value);
      return String(value);
    })
    .join(' · ');
}

/** @param {number | null} share */
const percent = (share) => (share === null ? null : `${(share * 100).toFixed(1)}%`);

/**
 * The group-by table (one row per group, then the others) and its chart: without a period, bars of the
 * requests opened and closed within 14 days per group; per period, a line of the requests opened per
 * period for each of the first GROUP_LINES keys.
 * @param {GroupAnswer} answer
 * @param {GroupChoice} choice
 */
function drawGroups(answer, choice) {
  const table = element('groups-table');
  const head = /** @type {HTMLTableRowElement} */ (table.querySelector('thead tr'));
  const numbers = ['opened', 'closed', 'closed within 14 days', 'share within 14 days', 'median days to close', 'p90 days to close'];
  const headings = [...choice.by.map((column) => column.replace(/_/g, ' ')), ...(choice.period ? [choice.period] : []), ...numbers];
  head.replaceChildren(
    ...headings.map((text, i) => {
      const th = document.createElement('th');
      th.scope = 'col';
      th.textContent = text;
      if (i >= headings.length - numbers.length) th.className = 'number';
      return th;
    }),
  );
  /** @param {GroupNumbers} row */
  const numberCells = (row) => [
    cell(row.opened, 'number'),
    cell(row.closed, 'number'),
    cell(row.closed_within_14_days, 'number'),
    cell(percent(row.share_closed_within_14_days), 'number'),
    cell(row.median_days_to_close, 'number'),
    cell(row.p90_days_to_close, 'number'),
  ];
  const groups = answer.items;
  const rows = groups.map((group) => {
    const row = document.createElement('tr');
    row.append(...choice.by.map((column) => cell(groupLabel({ ...group, key: { [column]: group.key[column] ?? null } }, [column]))));
    if (choice.period) row.append(cell(group.period));
    row.append(...numberCells(group));
    return row;
  });
  for (const numbers of answer.others) {
    const others = document.createElement('tr');
    others.className = 'others';
    const label = cell('All other groups');
    label.colSpan = choice.by.length;
    others.append(label);
    if (choice.period) others.append(cell(numbers.period));
    others.append(...numberCells(numbers));
    rows.push(others);
  }
  /** @type {HTMLTableSectionElement} */ (table.querySelector('tbody')).replaceChildren(...rows);

  if (choice.period) {
    const periods = [...new Set(groups.map((group) => group.period ?? ''))].sort();
    /** @type {Map<string, Map<string, number>>} */
    const lines = new Map();
    for (const group of groups) {
      const label = groupLabel(group, choice.by);
      if (!lines.has(label)) {
        if (lines.size === GROUP_LINES) continue;
        lines.set(label, new Map());
      }
      /** @type {Map<string, number>} */ (lines.get(label)).set(group.period ?? '', group.opened);
    }
    replaceChart('groups', 'groups-chart', {
      type: 'line',
      data: {
        labels: periods,
        datasets: [...lines].map(([label, opened], i) => ({
          label,
          data: periods.map((period) => opened.get(period) ?? 0),
          borderColor: GROUP_COLORS[i % GROUP_COLORS.length],
          backgroundColor: GROUP_COLORS[i % GROUP_COLORS.length],
          pointRadius: periods.length > 60 ? 0 : 2,
          borderWidth: 1.6,
        })),
      },
      options: { maintainAspectRatio: false, scales: { y: { beginAtZero: true, ticks: { precision: 0 } } }, plugins: { legend: { position: 'top', align: 'end', labels: { boxWidth: 10 } } } },
    });
  } else {
    replaceChart('groups', 'groups-chart', {
      type: 'bar',
      data: {
        labels: groups.map((group) => groupLabel(group, choice.by)),
        datasets: [
          { label: 'Opened', data: groups.map((group) => group.opened), backgroundColor: OPENED_COLOR, borderRadius: 2, maxBarThickness: 26 },
          { label: 'Closed within 14 days', data: groups.map((group) => group.closed_within_14_days), backgroundColor: CLOSED_COLOR, borderRadius: 2, maxBarThickness: 26 },
        ],
      },
      options: {
        maintainAspectRatio: false,
        scales: { y: { beginAtZero: true, ticks: { precision: 0 } }, x: { ticks: { autoSkip: false, maxRotation: 60 } } },
        plugins: {
          legend: { position: 'top', align: 'end', labels: { boxWidth: 10 } },
          tooltip: {
            callbacks: {
              afterBody: /** @param {{ dataIndex: number }[]} items */ (items) => {
                const group = groups[items[0]?.dataIndex ?? 0];
                if (!group) return '';
                return `share within 14 days ${percent(group.share_closed_within_14_days) ?? '—'}, median ${group.median_days_to_close ?? '—'} days, p90 ${group.p90_days_to_close ?? '—'} days`;
              },
            },
          },
        },
      },
    });
  }
  const period = choice.period ? `, per ${choice.period}` : '';
  const othersOpened = answer.others.reduce((sum, numbers) => sum + numbers.opened, 0);
  const others = othersOpened > 0 ? `; the other groups together: ${formatCount(othersOpened)}` : '';
  const keys = new Set(groups.map((group) => groupLabel(group, choice.by))).size;
  element('groups-note').textContent = `Requests grouped by ${choice.by.map((column) => column.replace(/_/g, ' ')).join(' and ')}${period}: the ${formatCount(keys)} largest groups${others}.`;
  element('groups-card').dataset.groups = String(groups.length);
}

/**
 * The group-by view could not be read (the rest of the page is drawn).
 * @param {unknown} error
 */
function drawGroupsFailure(error) {
  state.charts.groups?.destroy();
  delete state.charts.groups;
  /** @type {HTMLTableSectionElement} */ (element('groups-table').querySelector('tbody')).replaceChildren();
  element('groups-note').textContent = error instanceof ApiFailure ? `The group-by view is not available: the API answered ${error.status} (${error.message}).` : 'The group-by view could not be read.';
  element('groups-card').dataset.groups = 'failed';
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
    const choice = readGroupChoice();
    const [days, types, layer, page, count, groups] = await Promise.all([
      loadDaily(filters),
      loadComplaintTypes(filters),
      loadMap(filters),
      loadTablePage(filters, 0),
      loadMatchCount(filters),
      // The group-by view fails alone: the rest of the page is drawn.
      loadGroups(filters, choice).catch(/** @param {unknown} error */ (error) => (error instanceof KeyRefused ? Promise.reject(error) : error)),
    ]);
    if (generation !== state.generation) return;
    state.matchCount = count;
    element('match-count').textContent = `${formatCount(state.matchCount)} requests match`;
    drawDaily(days);
    drawComplaintTypes(types);
    drawMap(layer);
    drawTable(page);
    if (groups instanceof Error) drawGroupsFailure(groups);
    else drawGroups(/** @type {GroupAnswer} */ (groups), choice);
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

/** Reads the group-by view again for a new choice of columns, period or size, under the filters shown. */
async function showGroups() {
  const filters = state.filters;
  if (!filters) return;
  const generation = state.generation;
  const choice = readGroupChoice();
  setPageState('loading');
  try {
    const answer = await loadGroups(filters, choice);
    if (generation !== state.generation) return;
    drawGroups(answer, choice);
  } catch (error) {
    if (generation !== state.generation) return;
    if (error instanceof KeyRefused) {
      handleFailure(error);
      return;
    }
    drawGroupsFailure(error);
  }
  setPageState('ready');
}

/** The columns the group-by view offers: the first one required, the second one optional. */
function fillGroupColumns() {
  /** @param {string} value @param {string} text */
  const option = (value, text) => Object.assign(document.createElement('option'), { value, textContent: text });
  element('group-first').replaceChildren(...GROUP_COLUMNS.map((column) => option(column, column.replace(/_/g, ' '))));
  element('group-second').replaceChildren(option('', '(none)'), ...GROUP_COLUMNS.map((column) => option(column, column.replace(/_/g, ' '))));
  element('group-first').value = 'borough';
  element('group-second').value = '';
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
    state.outlines ??= await loadOutlines();
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
for (const id of /** @type {const} */ (['group-first', 'group-second', 'group-period', 'group-limit'])) element(id).addEventListener('change', () => void showGroups());
element('groups-form').addEventListener('submit', (event) => event.preventDefault());
fillGroupColumns();
element('next-page').addEventListener('click', () => void showTablePage(state.pageIndex + 1));
element('first-page').addEventListener('click', () => void showTablePage(0));

const savedKey = sessionStorage.getItem(KEY_STORAGE);
if (savedKey) void start(savedKey);
else {
  setPageState('idle');
  element('api-key').focus();
}
