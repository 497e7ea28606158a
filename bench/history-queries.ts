/**
 * Random unique queries of the data API for the full-history bench (bench/full-history.ts): every
 * route kind, drawn from a sample of the snapshot's own rows (so values are as frequent as in the
 * data), each URL different from every other of the same service run (no answer comes from a kept
 * body). The group-by queries (`GET /v1/stats/groups`) are drawn as specifications that render both
 * as a URL and as DuckDB SQL over the same rows (bench/duckdb-groups.ts), so the two engines answer
 * the same questions.
 */
import Database from 'better-sqlite3';
import pg from 'pg';
import { SeededRandom } from '../src/ingest/nyc311/seeded-random.js';
import { FILTERED_COLUMNS } from '../src/snapshot/snapshot-schema.js';

/** The columns `stats/groups` groups by. */
export const GROUP_COLUMNS = ['borough', 'complaint_type', 'descriptor', 'status', 'channel', 'council_district', 'incident_zip', 'location_type', 'community_board'] as const;
export type GroupColumn = (typeof GROUP_COLUMNS)[number];
export const PERIODS = ['day', 'week', 'month', 'year'] as const;
export type Period = (typeof PERIODS)[number];
/** The measures of a group: `order` names one of them (`-` in front: descending). */
export const GROUP_MEASURES = ['opened', 'closed', 'closed_within_14_days', 'share_closed_within_14_days', 'median_days_to_close', 'p90_days_to_close'] as const;
const LIMITS = [5, 10, 20, 20, 50, 100, 1000];
/** The periods and the measures of the groupings the summaries hold (summaryGroup). */
const SUMMARY_PERIODS = ['day', 'week', 'month', 'year'] as const;
const SUMMED_MEASURES = ['opened', 'closed', 'closed_within_14_days', 'share_closed_within_14_days'] as const;

/** A request of the snapshot, as sampled: the columns the queries filter and group on. */
export interface SampledRow {
  id: number;
  created_at: string;
  closed_at: string | null;
  status: string;
  complaint_type: string | null;
  descriptor: string | null;
  location_type: string | null;
  borough: string | null;
  community_board: string | null;
  council_district: number | null;
  incident_zip: string | null;
  channel: string | null;
  latitude: number | null;
  longitude: number | null;
  days_to_close: number | null;
}

const SAMPLE_COLUMNS = 'id, created_at, closed_at, status, complaint_type, descriptor, location_type, borough, community_board, council_district, incident_zip, channel, latitude, longitude, days_to_close';

/**
 * `count` requests of the snapshot at random (the first at or after a random id: ids have gaps),
 * once each: a SQLite file, or a `postgres://...?schema=NAME` URL (the served schema's views).
 */
export async function sampleRows(snapshot: string, count: number, seed: number): Promise<SampledRow[]> {
  const random = new SeededRandom(seed);
  if (!snapshot.startsWith('postgres://')) {
    const db = new Database(snapshot, { readonly: true });
    try {
      const { low, high } = db.prepare('SELECT min(id) AS low, max(id) AS high FROM service_requests').get() as { low: number; high: number };
      const at = db.prepare(`SELECT ${SAMPLE_COLUMNS} FROM service_requests WHERE id >= ? ORDER BY id LIMIT 1`);
      const byId = new Map<number, SampledRow>();
      for (let tries = 0; byId.size < count && tries < count * 4; tries++) {
        const row = at.get(random.int(low, high)) as SampledRow | undefined;
        if (row !== undefined) byId.set(row.id, row);
      }
      return [...byId.values()];
    } finally {
      db.close();
    }
  }
  const url = new URL(snapshot);
  const schema = url.searchParams.get('schema') ?? 'public';
  url.searchParams.delete('schema');
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    const table = `"${schema}".service_requests`;
    const { low, high } = (await client.query(`SELECT min(id) AS low, max(id) AS high FROM ${table}`)).rows[0] as { low: string; high: string };
    const draws = Array.from({ length: count * 2 }, () => random.int(Number(low), Number(high)));
    const rows = (
      await client.query<SampledRow & { id: string }>(`SELECT s.* FROM unnest($1::bigint[]) AS x CROSS JOIN LATERAL (SELECT ${SAMPLE_COLUMNS} FROM ${table} WHERE id >= x ORDER BY id LIMIT 1) AS s`, [draws])
    ).rows;
    const byId = new Map<number, SampledRow>();
    for (const row of rows) if (byId.size < count) byId.set(Number(row.id), { ...row, id: Number(row.id) });
    return [...byId.values()];
  } finally {
    await client.end();
  }
}

/** The filters of one query: the list's (equality with one or more values, time bounds, box) and the new operators. */
export interface QueryFilters {
  /** Column -> values (null: the requests without a value, `none`). */
  equal: [string, (string | number | null)[]][];
  /** Column -> the value that is excluded. */
  not: [string, string | number][];
  createdFrom?: string;
  createdTo?: string;
  bbox?: [number, number, number, number];
  closed?: boolean;
  closedFrom?: string;
  closedTo?: string;
  daysToCloseMin?: number;
  daysToCloseMax?: number;
  near?: { latitude: number; longitude: number; radiusM: number };
  q?: string;
}

/** The new filter operators; the bench draws those the service accepts (probed first, bench/full-history.ts). */
export const OPERATORS = ['negation', 'closed', 'closed_range', 'days_to_close', 'near', 'community_board', 'q'] as const;
export type Operator = (typeof OPERATORS)[number];

/**
 * How a negation is written: the syntaxes the bench tries in turn (the first the service accepts
 * is used). `borough=queens` negated.
 */
export const NEGATION_SYNTAXES: readonly ((column: string, value: string) => string)[] = [
  (column, value) => `${column}!=${value}`,
  (column, value) => `not_${column}=${value}`,
  (column, value) => `${column}=not.${value}`,
  (column, value) => `${column}=!${value}`,
];

/** What the service served accepts, as probed: the operators and the negation's syntax. */
export interface Accepted {
  operators: ReadonlySet<Operator>;
  negation: ((column: string, value: string) => string) | null;
}

const NONE_COLUMNS = new Set(['borough', 'complaint_type', 'channel']);
const pad = (n: number): string => String(n).padStart(2, '0');

/** A local timestamp `seconds` after `text` (both `YYYY-MM-DDTHH:MM:SS`, read as UTC: only the text matters). */
function shifted(text: string, seconds: number): string {
  const date = new Date(Date.parse(`${text}Z`) + seconds * 1000);
  return `${date.getUTCFullYear()}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())}T${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())}`;
}

const DAY = 86_400;

/** Draws of queries from a sample of rows, seeded. */
export class QueryDraws {
  readonly random: SeededRandom;
  private readonly first: string;
  private readonly last: string;
  private readonly spanSeconds: number;

  constructor(
    private readonly rows: readonly SampledRow[],
    seed: number,
  ) {
    this.random = new SeededRandom(seed);
    const created = rows.map((row) => row.created_at).sort();
    this.first = created[0]!;
    this.last = created.at(-1)!;
    this.spanSeconds = Math.max(DAY, (Date.parse(`${this.last}Z`) - Date.parse(`${this.first}Z`)) / 1000);
  }

  row(): SampledRow {
    return this.random.pick(this.rows);
  }

  /**
   * A value of `column` as the data holds it (null where the filter takes `none`), or undefined: the
   * `base` row's when it has one, else another row's.
   */
  private value(column: string, base?: SampledRow): string | number | null | undefined {
    for (let tries = 0; tries < 20; tries++) {
      const value = (tries === 0 && base !== undefined ? base : this.row())[column as keyof SampledRow];
      if (value !== null) return value;
      if (NONE_COLUMNS.has(column)) return null;
    }
    return undefined;
  }

  /** A random instant of the history, to the second. */
  private instant(): string {
    return shifted(this.first, this.random.int(0, Math.floor(this.spanSeconds)));
  }

  /** A created_at range: from a random instant, a day to the whole history long (shorter ones more often). */
  private range(maxDays = this.spanSeconds / DAY): [string, string] {
    const from = this.instant();
    const days = Math.max(1, Math.round(Math.exp(this.random.next() * Math.log(Math.max(2, maxDays)))));
    return [from, shifted(from, days * DAY + this.random.int(0, DAY - 1))];
  }

  /** A box of 0.005 to 0.05 degree around the base row's location (or another sampled one). */
  private box(base: SampledRow): [number, number, number, number] | undefined {
    for (let tries = 0; tries < 20; tries++) {
      const { latitude, longitude } = tries === 0 ? base : this.row();
      if (latitude === null || longitude === null) continue;
      const half = 0.0025 + this.random.next() * 0.0225;
      const round = (n: number): number => Math.round(n * 10_000) / 10_000;
      return [round(longitude - half), round(latitude - half), round(longitude + half), round(latitude + half)];
    }
    return undefined;
  }

  /**
   * Filters: 0 to `most` of the list's equality filters (a second value one time in five), a created_at
   * range one time in two (at most `maxRangeDays` long), a box one time in ten (`withBox`), and each
   * operator `accepted` one time in eight. The equality values and the box are those of one sampled
   * request (a second value another's), as a user narrows down to what exists; so most combinations
   * match some requests, as often as the data holds them.
   */
  filters(accepted: Accepted, options: { most?: number; withBox?: boolean; maxRangeDays?: number; alwaysRange?: boolean } = {}): QueryFilters {
    const filters: QueryFilters = { equal: [], not: [] };
    const base = this.row();
    const columns = [...FILTERED_COLUMNS, ...(accepted.operators.has('community_board') ? ['community_board'] : [])];
    const count = this.random.int(0, options.most ?? 2);
    const chosen = new Set<string>();
    while (chosen.size < count) chosen.add(this.random.pick(columns));
    for (const column of chosen) {
      const values = new Set<string | number | null>();
      const wanted = this.random.chance(0.2) ? 2 : 1;
      for (let tries = 0; values.size < wanted && tries < 10; tries++) {
        const value = this.value(column, values.size === 0 ? base : undefined);
        if (value !== undefined) values.add(value);
      }
      if (values.size > 0) filters.equal.push([column, [...values]]);
    }
    if (options.alwaysRange === true || this.random.chance(0.5)) [filters.createdFrom, filters.createdTo] = this.range(options.maxRangeDays);
    if (options.withBox === true && this.random.chance(0.1)) filters.bbox = this.box(base);
    const maybe = (operator: Operator): boolean => accepted.operators.has(operator) && this.random.chance(0.125);
    if (accepted.negation !== null && maybe('negation')) {
      const column = this.random.pick(FILTERED_COLUMNS.filter((c) => !chosen.has(c)));
      const value = this.value(column);
      if (value !== undefined && value !== null) filters.not.push([column, value]);
    }
    if (maybe('closed')) filters.closed = this.random.chance(0.7);
    if (maybe('closed_range') && filters.closed !== false) [filters.closedFrom, filters.closedTo] = this.range(365);
    if (maybe('days_to_close')) {
      if (this.random.chance(0.5)) filters.daysToCloseMin = this.random.int(0, 30);
      if (filters.daysToCloseMin === undefined || this.random.chance(0.5)) filters.daysToCloseMax = (filters.daysToCloseMin ?? 0) + this.random.int(1, 60);
    }
    if (maybe('near')) {
      const row = this.row();
      if (row.latitude !== null && row.longitude !== null) filters.near = { latitude: row.latitude, longitude: row.longitude, radiusM: this.random.int(100, 5000) };
    }
    if (maybe('q')) {
      const text = String(this.value(this.random.pick(['complaint_type', 'descriptor', 'location_type'])) ?? 'street');
      const words = text.split(/\s+/).filter((w) => w.length >= 3);
      const word = words.length > 0 ? this.random.pick(words) : text;
      const start = this.random.int(0, Math.max(0, word.length - 3));
      filters.q = word.slice(start, start + this.random.int(3, 6)).toLowerCase();
    }
    return filters;
  }

  /** A `stats/groups` query: 1 or 2 columns, a period 3 times in 5 (a day only over at most a year), filters, an order and a limit. */
  group(accepted: Accepted): GroupQuery {
    const by = [this.random.pick(GROUP_COLUMNS)];
    if (this.random.chance(0.3)) {
      const second = this.random.pick(GROUP_COLUMNS.filter((c) => c !== by[0]));
      by.push(second);
    }
    const period = this.random.chance(0.4) ? null : this.random.pick(PERIODS);
    const filters = this.filters(accepted, { most: 2, ...(period === 'day' ? { maxRangeDays: 366, alwaysRange: true } : {}) });
    const measure = this.random.chance(0.5) ? 'opened' : this.random.pick(GROUP_MEASURES);
    const order = `${this.random.chance(0.7) ? '-' : ''}${measure}`;
    // With a period the limit counts keys, each with all its periods: kept to 100 keys.
    const limit = period === null ? this.random.pick(LIMITS) : Math.min(100, this.random.pick(LIMITS));
    return { by, period, filters, order, limit };
  }

  /**
   * A `stats/groups` query of the shapes the summaries hold (src/snapshot/aggregate-summaries.ts), a
   * count or the share closed within 14 days in order, the whole history or a range of whole periods (a
   * day's always, at most a year), per one of `periods`:
   * - `one column`: one of the filtered columns, no filter or one on the same column (1 to 3 values),
   *   every key kept (200 keys: more than any column holds);
   * - `within another column`: the same with always one value of another column instead (summary_pairs
   *   hold them per month and year; per day or week the scan answers);
   * - `two columns`: two of the filtered columns, no filter or one on either of them (summary_pairs per
   *   month and year), limit 1,000: pairs of columns with more pairs of values than that are scanned.
   */
  summaryGroup(shape: 'one column' | 'within another column' | 'two columns' = 'one column', periods: readonly (typeof SUMMARY_PERIODS)[number][] = SUMMARY_PERIODS): GroupQuery {
    const column = this.random.pick(FILTERED_COLUMNS);
    const by = shape === 'two columns' ? [column, this.random.pick(FILTERED_COLUMNS.filter((c) => c !== column))] : [column];
    const period = this.random.pick(periods);
    const filters: QueryFilters = { equal: [], not: [] };
    if (shape === 'within another column') {
      const other = this.random.pick(FILTERED_COLUMNS.filter((c) => c !== column));
      const value = this.value(other);
      if (value !== undefined) filters.equal.push([other, [value]]);
    } else if (this.random.chance(0.4)) {
      const filtered = this.random.pick(by);
      const values = new Set<string | number | null>();
      const wanted = this.random.int(1, 3);
      for (let tries = 0; values.size < wanted && tries < 10; tries++) {
        const value = this.value(filtered);
        if (value !== undefined) values.add(value);
      }
      if (values.size > 0) filters.equal.push([filtered, [...values]]);
    }
    if (period === 'day' || this.random.chance(0.5)) {
      const start = new Date(`${this.instant().slice(0, 10)}T00:00:00Z`);
      if (period === 'week') start.setUTCDate(start.getUTCDate() - ((start.getUTCDay() + 6) % 7));
      if (period === 'month' || period === 'year') start.setUTCDate(1);
      if (period === 'year') start.setUTCMonth(0);
      const end = new Date(start);
      if (period === 'day') end.setUTCDate(end.getUTCDate() + this.random.int(1, 366));
      if (period === 'week') end.setUTCDate(end.getUTCDate() + 7 * this.random.int(1, 104));
      if (period === 'month') end.setUTCMonth(end.getUTCMonth() + this.random.int(1, 36));
      if (period === 'year') end.setUTCFullYear(end.getUTCFullYear() + this.random.int(1, 5));
      [filters.createdFrom, filters.createdTo] = [start, end].map((date) => `${date.toISOString().slice(0, 10)}T00:00:00`) as [string, string];
    }
    const order = `${this.random.chance(0.7) ? '-' : ''}${this.random.pick(SUMMED_MEASURES)}`;
    return { by, period, filters, order, limit: shape === 'two columns' ? 1000 : 200 };
  }

  /** A `stats/cells` box: the whole city to a neighbourhood, around a sampled location. */
  cellsBox(): [number, number, number, number] {
    const row = this.row();
    const latitude = row.latitude ?? 40.7;
    const longitude = row.longitude ?? -73.95;
    const half = Math.exp(Math.log(0.01) + this.random.next() * (Math.log(0.25) - Math.log(0.01)));
    const round = (n: number): number => Math.round(n * 10_000) / 10_000;
    return [round(longitude - half), round(latitude - half), round(longitude + half), round(latitude + half)];
  }
}

export interface GroupQuery {
  by: string[];
  period: Period | null;
  filters: QueryFilters;
  order: string;
  limit: number;
}

/** The filters as query parameters of the data API. */
export function filterParams(filters: QueryFilters, accepted: Accepted): string[] {
  const params: string[] = [];
  const value = (v: string | number | null): string => (v === null ? 'none' : encodeURIComponent(String(v)));
  for (const [column, values] of filters.equal) for (const v of values) params.push(`${column}=${value(v)}`);
  if (accepted.negation !== null) for (const [column, v] of filters.not) params.push(accepted.negation(column, value(v)));
  if (filters.createdFrom !== undefined) params.push(`created_from=${filters.createdFrom}`);
  if (filters.createdTo !== undefined) params.push(`created_to=${filters.createdTo}`);
  if (filters.bbox !== undefined) params.push(`bbox=${filters.bbox.join(',')}`);
  if (filters.closed !== undefined) params.push(`closed=${filters.closed}`);
  if (filters.closedFrom !== undefined) params.push(`closed_from=${filters.closedFrom}`);
  if (filters.closedTo !== undefined) params.push(`closed_to=${filters.closedTo}`);
  if (filters.daysToCloseMin !== undefined) params.push(`days_to_close_min=${filters.daysToCloseMin}`);
  if (filters.daysToCloseMax !== undefined) params.push(`days_to_close_max=${filters.daysToCloseMax}`);
  if (filters.near !== undefined) params.push(`near=${filters.near.latitude},${filters.near.longitude}`, `radius_m=${filters.near.radiusM}`);
  if (filters.q !== undefined) params.push(`q=${encodeURIComponent(filters.q)}`);
  return params;
}

export function groupPath(query: GroupQuery, accepted: Accepted): string {
  const params = [`by=${query.by.join(',')}`, ...(query.period === null ? [] : [`period=${query.period}`]), ...filterParams(query.filters, accepted), `order=${query.order}`, `limit=${query.limit}`];
  return `/v1/stats/groups?${params.join('&')}`;
}

/** The route kinds of the bench, in the order they run. */
export const ROUTE_KINDS = ['pages', 'one request', 'count', 'facets', 'stats daily', 'stats weekly', 'stats monthly', 'export start', 'stats/groups', 'stats/groups by period', 'stats/groups filtered by month or year', 'stats/groups filtered by day or week', 'stats/groups of two columns by month or year', 'stats/cells'] as const;
export type RouteKind = (typeof ROUTE_KINDS)[number];

const FACET_FIELDS = ['borough', 'complaint_type', 'status', 'channel', 'descriptor', 'council_district', 'location_type'];
const STATS_ROUTES: Partial<Record<RouteKind, string>> = { 'stats daily': '/v1/stats/daily', 'stats weekly': '/v1/stats/weekly', 'stats monthly': '/v1/stats/monthly' };

/**
 * One path of the kind. `cell` is how `stats/cells` is given its cell (the value the service was
 * probed to accept). Rows for `one request` are taken in turn from `ids`.
 */
export function routePath(kind: RouteKind, draws: QueryDraws, accepted: Accepted, ids: { next(): number }, cell: string): string {
  const query = (filters: QueryFilters, ...extra: string[]): string => {
    const params = [...extra, ...filterParams(filters, accepted)];
    return params.length === 0 ? '' : `?${params.join('&')}`;
  };
  switch (kind) {
    case 'pages':
      return `/v1/service-requests${query(draws.filters(accepted, { withBox: true }), `limit=${draws.random.int(10, 100)}`)}`;
    case 'one request':
      return `/v1/service-requests/${ids.next()}`;
    case 'count':
      return `/v1/service-requests/count${query(draws.filters(accepted, { withBox: true }))}`;
    case 'facets':
      return `/v1/facets${query(draws.filters(accepted, { withBox: true }), `field=${draws.random.pick(FACET_FIELDS)}`)}`;
    case 'export start':
      return `/v1/exports/service-requests${query(draws.filters(accepted), `format=${draws.random.chance(0.8) ? 'csv' : 'geojson'}`)}`;
    case 'stats/groups':
      return groupPath(draws.group(accepted), accepted);
    case 'stats/groups by period':
      return groupPath(draws.summaryGroup(), accepted);
    case 'stats/groups filtered by month or year':
      return groupPath(draws.summaryGroup('within another column', ['month', 'year']), accepted);
    case 'stats/groups filtered by day or week':
      return groupPath(draws.summaryGroup('within another column', ['day', 'week']), accepted);
    case 'stats/groups of two columns by month or year':
      return groupPath(draws.summaryGroup('two columns', ['month', 'year']), accepted);
    case 'stats/cells':
      return `/v1/stats/cells${query(draws.filters(accepted), `bbox=${draws.cellsBox().join(',')}`, `cell=${cell}`)}`;
    default:
      return `${STATS_ROUTES[kind]!}${query(draws.filters(accepted, { withBox: true }))}`;
  }
}

/** `count` different paths of the kind, none of them in `used` (which gains them). */
export function uniquePaths(count: number, used: Set<string>, draw: () => string): string[] {
  const paths: string[] = [];
  for (let tries = 0; paths.length < count && tries < count * 20; tries++) {
    const path = draw();
    if (used.has(path)) continue;
    used.add(path);
    paths.push(path);
  }
  return paths;
}
