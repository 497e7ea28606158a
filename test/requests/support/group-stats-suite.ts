import { describe, expect, it } from 'vitest';
import { SeededRandom } from '../../../src/ingest/nyc311/seeded-random.js';
import { compareFilterValues, type FilterValue } from '../../../src/services/requests/list-filters.js';
import type { GroupNumbers, ServiceRequestRecord } from '../../../src/services/requests/store/service-request-store.js';
import { isoWeekOf } from '../../../src/services/requests/engine/period-stats.js';
import { fixtureDuringSuite, type Backend } from './fixture-database.js';
import { json, testAppDuringSuite, type TestApp } from './requests-app.js';
import { randomRows } from './random-rows.js';
import type { AnyResponse } from '../../support/http.js';

/**
 * GET /v1/stats/groups on a backend: every rule of the route, and the numbers of random groupings
 * (columns, periods, orders, limits, filters) against a recount of the rows the list serves with the
 * same filters.
 */
type Numbers = GroupNumbers;
type Group = { key: Record<string, FilterValue>; period?: string } & Numbers;
type Answer = { items: Group[]; others: ({ period?: string } & Numbers)[] };

const COLUMNS = ['borough', 'complaint_type', 'descriptor', 'status', 'channel', 'council_district', 'incident_zip', 'location_type', 'community_board'] as const;
const MEASURES = ['opened', 'closed', 'closed_within_14_days', 'share_closed_within_14_days', 'median_days_to_close', 'p90_days_to_close'] as const;
const FILTERS = [
  'borough=queens',
  'borough=none&borough=bronx',
  'status=closed&status=open',
  'complaint_type=Street%20Condition',
  'channel=phone',
  'council_district=33',
  'incident_zip=10001',
  'descriptor=Pothole',
  'created_from=2025-01-01',
  'created_to=2025-01-20T12:00:00',
  'community_board=01%20BRONX&community_board=none',
  'bbox=-74.1,40.6,-73.9,40.8',
  'q=pot',
  'not_borough=queens',
  'closed=false',
  'near=40.7,-73.95&radius_m=5000',
];

/** Days over two years, several ISO weeks (2025-W01 starts on 2024-12-30) and months. */
const DAYS = ['2024-12-23', '2024-12-29', '2024-12-30', '2024-12-31', '2025-01-01', '2025-01-02', '2025-01-05', '2025-01-06', '2025-01-19', '2025-01-31', '2025-02-01', '2025-02-05'];

const BOARDS = ['01 BRONX', '04 BROOKLYN', '12 QUEENS', null] as const;

/** Random rows spread over DAYS, with community boards. */
export function groupRows(seed: number, count: number): ServiceRequestRecord[] {
  const random = new SeededRandom(seed);
  return randomRows(random, count).map((row) => ({ ...row, created_at: `${random.pick(DAYS)}${row.created_at.slice(10)}`, community_board: random.pick(BOARDS) }));
}

const round = (x: number, digits: number): number => Math.round(x * 10 ** digits) / 10 ** digits;

/** The numbers of some rows, spelled out: sort, middles, nearest rank. */
function numbersOf(rows: readonly ServiceRequestRecord[]): Numbers {
  const days = rows.flatMap((row) => (row.days_to_close === null ? [] : [row.days_to_close])).sort((a, b) => a - b);
  const n = days.length;
  const within = days.filter((d) => d <= 14).length;
  return {
    opened: rows.length,
    closed: n,
    closed_within_14_days: within,
    share_closed_within_14_days: round(within / rows.length, 4),
    median_days_to_close: n === 0 ? null : round(((days[Math.ceil(n / 2) - 1] as number) + (days[Math.floor(n / 2)] as number)) / 2, 2),
    p90_days_to_close: n === 0 ? null : (days[Math.ceil(Math.round(9 * n) / 10) - 1] as number),
  };
}

const PERIOD_OF: Record<string, (day: string) => string> = {
  day: (day) => day,
  week: isoWeekOf,
  month: (day) => day.slice(0, 7),
  year: (day) => day.slice(0, 4),
};

/** The answer, recounted from the matching rows. */
export function recount(rows: readonly ServiceRequestRecord[], by: readonly string[], period: string | null, order: string, limit: number): Answer {
  const descending = order.startsWith('-');
  const measure = (descending ? order.slice(1) : order) as (typeof MEASURES)[number];
  const keys = new Map<string, ServiceRequestRecord[]>();
  for (const row of rows) {
    const id = JSON.stringify(by.map((column) => row[column as keyof ServiceRequestRecord]));
    const ofKey = keys.get(id);
    if (ofKey === undefined) keys.set(id, [row]);
    else ofKey.push(row);
  }
  const keyOf = (id: string): FilterValue[] => JSON.parse(id) as FilterValue[];
  const measured = new Map([...keys].map(([id, ofKey]) => [id, numbersOf(ofKey)[measure]]));
  const ordered = [...keys].sort(([a], [b]) => {
    const x = measured.get(a) ?? null;
    const y = measured.get(b) ?? null;
    if (x !== y) {
      if (x === null) return 1;
      if (y === null) return -1;
      return descending ? y - x : x - y;
    }
    const ka = keyOf(a);
    const kb = keyOf(b);
    return compareFilterValues(ka[0] ?? null, kb[0] ?? null) || compareFilterValues(ka[1] ?? null, kb[1] ?? null);
  });
  const periodOf = (row: ServiceRequestRecord): string => (period === null ? '' : (PERIOD_OF[period] as (day: string) => string)(row.created_at.slice(0, 10)));
  const perPeriod = (some: readonly ServiceRequestRecord[]): [string, ServiceRequestRecord[]][] => {
    const periods = new Map<string, ServiceRequestRecord[]>();
    for (const row of some) {
      const ofPeriod = periods.get(periodOf(row));
      if (ofPeriod === undefined) periods.set(periodOf(row), [row]);
      else ofPeriod.push(row);
    }
    return [...periods].sort(([a], [b]) => (a < b ? -1 : 1));
  };
  const items: Group[] = [];
  for (const [id, ofKey] of ordered.slice(0, limit)) {
    const key = Object.fromEntries(by.map((column, c) => [column, keyOf(id)[c] ?? null]));
    for (const [p, ofPeriod] of perPeriod(ofKey)) items.push({ key, ...(period === null ? {} : { period: p }), ...numbersOf(ofPeriod) });
  }
  const left = ordered.slice(limit).flatMap(([, ofKey]) => ofKey);
  const others = perPeriod(left).map(([p, ofPeriod]) => ({ ...(period === null ? {} : { period: p }), ...numbersOf(ofPeriod) }));
  return { items, others };
}

/** Every row the list serves for a query string of filters. */
export async function servedRows(service: TestApp, filters: string): Promise<ServiceRequestRecord[]> {
  const rows: ServiceRequestRecord[] = [];
  let cursor: string | null = null;
  do {
    const page: { items: ServiceRequestRecord[]; next_cursor: string | null } = json(
      await service.get(`/v1/service-requests?limit=1000&${filters}${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`),
    );
    rows.push(...page.items);
    cursor = page.next_cursor;
  } while (cursor !== null);
  return rows;
}

function expectInvalid(response: AnyResponse, field: string): void {
  expect(response.statusCode, response.body).toBe(422);
  const { error } = json<{ error: { code: string; fields: string[]; message: string; request_id: string } }>(response);
  expect(error.code).toBe('invalid_request');
  expect(error.fields).toEqual([field]);
  expect(typeof error.request_id).toBe('string');
}

export const describeGroupStats = (backend: Backend) =>
  describe(`GET /v1/stats/groups on ${backend}`, () => {
    const fixture = fixtureDuringSuite(backend, { rows: groupRows(49, 700) });
    const service = testAppDuringSuite(fixture);
    const get = (path: string) => service.get(path);

    it('the numbers of random groupings are a recount of the rows the list serves with the same filters, and items and others add up to them', async () => {
      const random = new SeededRandom(7);
      for (let i = 0; i < 60; i += 1) {
        const by = random.chance(0.5) ? [random.pick(COLUMNS)] : [random.pick(COLUMNS), random.pick(COLUMNS)].filter((c, at, all) => all.indexOf(c) === at);
        const period = random.pick([null, null, 'day', 'week', 'month', 'year']);
        const order = `${random.chance(0.5) ? '-' : ''}${random.pick(MEASURES)}`;
        const limit = random.pick([1, 2, 3, 5, 20, 1000]);
        const filters = FILTERS.filter(() => random.chance(0.2)).join('&');
        const rows = await servedRows(service, filters);
        const byText = random.chance(0.5) ? by.map((c) => `by=${c}`).join('&') : `by=${by.join(',')}`;
        const query = `${byText}${period === null ? '' : `&period=${period}`}&order=${encodeURIComponent(order)}&limit=${limit}${filters === '' ? '' : `&${filters}`}`;
        const response = await get(`/v1/stats/groups?${query}`);
        expect(response.statusCode, response.body).toBe(200);
        const answer = json<Answer>(response);
        expect(answer, query).toEqual(recount(rows, by, period, order, limit));
        const total = [...answer.items, ...answer.others].reduce((sum, group) => sum + group.opened, 0);
        expect(total, query).toBe(rows.length);
      }
    });

    it('orders by opened by default, largest last, ties by key (values in order, null last), and keeps 20 keys by default', async () => {
      const rows = await servedRows(service, '');
      const answer = json<Answer>(await get('/v1/stats/groups?by=descriptor,council_district'));
      expect(answer).toEqual(recount(rows, ['descriptor', 'council_district'], null, 'opened', 20));
      expect(answer.items.length).toBeLessThanOrEqual(20);
      for (let i = 1; i < answer.items.length; i += 1) {
        const [a, b] = [answer.items[i - 1] as Group, answer.items[i] as Group];
        expect(a.opened).toBeLessThanOrEqual(b.opened);
        if (a.opened === b.opened) {
          const byKey = compareFilterValues(a.key.descriptor ?? null, b.key.descriptor ?? null) || compareFilterValues(a.key.council_district ?? null, b.key.council_district ?? null);
          expect(byKey).toBeLessThan(0);
        }
      }
    });

    it('requests without a value form their own group, null in the key', async () => {
      const answer = json<Answer>(await get('/v1/stats/groups?by=borough&limit=1000'));
      const nulls = answer.items.filter((group) => group.key.borough === null);
      expect(nulls).toHaveLength(1);
      expect(nulls[0]?.opened).toBe(fixture.rows.filter((row) => row.borough === null).length);
      expect(answer.others).toEqual([]);
    });

    it('with a period, limit keeps keys: each kept key with all its periods, the others per period', async () => {
      const answer = json<Answer>(await get('/v1/stats/groups?by=complaint_type&period=month&limit=2&order=-opened'));
      const keys = new Set(answer.items.map((group) => JSON.stringify(group.key)));
      expect(keys.size).toBe(2);
      for (const key of keys) {
        const months = new Set(fixture.rows.filter((row) => JSON.stringify({ complaint_type: row.complaint_type }) === key).map((row) => row.created_at.slice(0, 7)));
        expect(answer.items.filter((group) => JSON.stringify(group.key) === key).map((group) => group.period)).toEqual([...months].sort());
      }
      expect(answer.others.map((other) => other.period)).toEqual([...new Set(answer.others.map((other) => other.period))].sort());
      expect(answer.items.every((group) => /^[0-9]{4}-[0-9]{2}$/.test(group.period ?? ''))).toBe(true);
    });

    it('periods: days, ISO weeks (as /v1/stats/weekly), months and years; absent without period', async () => {
      const keysOf = async (period: string) => new Set(json<Answer>(await get(`/v1/stats/groups?by=status&period=${period}&limit=1000`)).items.map((group) => group.period));
      expect(await keysOf('year')).toEqual(new Set(['2024', '2025']));
      expect(await keysOf('week')).toEqual(new Set(fixture.rows.map((row) => isoWeekOf(row.created_at.slice(0, 10)))));
      expect([...(await keysOf('week'))]).toContain('2025-W01');
      expect(await keysOf('day')).toEqual(new Set(fixture.rows.map((row) => row.created_at.slice(0, 10))));
      const weekly = json<{ items: { week: string; opened: number }[] }>(await get('/v1/stats/weekly')).items.filter((week) => week.opened > 0);
      const perWeek = json<Answer>(await get('/v1/stats/groups?by=status&period=week&limit=1000')).items;
      for (const week of weekly) expect(perWeek.filter((group) => group.period === week.week).reduce((sum, group) => sum + group.opened, 0)).toBe(week.opened);
      expect(json<Answer>(await get('/v1/stats/groups?by=status')).items.every((group) => !('period' in group))).toBe(true);
    });

    it('p90 is the nearest rank and the median the mean of the two middle values', async () => {
      const answer = json<Answer>(await get('/v1/stats/groups?by=status&limit=1000'));
      for (const group of answer.items) expect(group).toEqual({ key: group.key, ...numbersOf(fixture.rows.filter((row) => row.status === group.key.status)) });
    });

    it('answers 422 invalid_request, fields by, for a column it does not know, more than two, or one twice; and without by', async () => {
      expectInvalid(await get('/v1/stats/groups?by=colour'), 'by');
      expectInvalid(await get('/v1/stats/groups?by=borough,status,channel'), 'by');
      expectInvalid(await get('/v1/stats/groups?by=borough&by=status&by=channel'), 'by');
      expectInvalid(await get('/v1/stats/groups?by=borough,status&by=channel'), 'by');
      expectInvalid(await get('/v1/stats/groups?by=borough,borough'), 'by');
      expectInvalid(await get('/v1/stats/groups?by='), 'by');
      expectInvalid(await get('/v1/stats/groups'), 'by');
    });

    it('answers 422 invalid_request for an order, a limit or a period it does not take', async () => {
      expectInvalid(await get('/v1/stats/groups?by=borough&order=size'), 'order');
      expectInvalid(await get('/v1/stats/groups?by=borough&order=--opened'), 'order');
      expectInvalid(await get('/v1/stats/groups?by=borough&limit=0'), 'limit');
      expectInvalid(await get('/v1/stats/groups?by=borough&limit=1001'), 'limit');
      expectInvalid(await get('/v1/stats/groups?by=borough&limit=1e2'), 'limit');
      expectInvalid(await get('/v1/stats/groups?by=borough&period=quarter'), 'period');
      expectInvalid(await get('/v1/stats/groups?by=borough&colour=red'), 'colour');
    });
  });
