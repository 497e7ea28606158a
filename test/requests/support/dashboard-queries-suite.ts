import { gunzipSync } from 'node:zlib';
import { describe, expect, it, vi } from 'vitest';
import type { ServiceRequestRecord } from '../../../src/services/requests/store/service-request-store.js';
import { expectError, type AnyResponse } from '../../support/http.js';
import { expectedDaily, matchesQuery, parseCsv, queryText, type Query } from './expected.js';
import { inApiOrder, type Backend } from './fixture-database.js';
import { PostgresServiceRequestStore } from '../../../src/services/requests/store/postgres-store.js';
import { SqliteServiceRequestStore } from '../../../src/services/requests/store/sqlite-store.js';
import { ROW_WALK_LIMITS } from '../../../src/services/requests/engine/sqlite-row-walks.js';
import { json, serveFixture, TEST_API_KEY } from './requests-app.js';

/**
 * The dashboard API decisions, the API a dashboard is built on: repeated filters, `none`, the new filters (each bound into
 * the cursor), the count, CSV and GeoJSON pages, the full export, facets, complaint types by borough,
 * and the daily, weekly and monthly numbers, on SQLite and on the real PostgreSQL, checked against the
 * fixture's rows.
 */
interface Page {
  items: ServiceRequestRecord[];
  next_cursor: string | null;
}

const START_AGAIN = 'The cursor belongs to other filters: start again without a cursor';

/** Queries with each new filter, several values and `none`; each selects some rows of the fixture and not all. */
const FILTER_CASES: Query[] = [
  { borough: ['queens', 'bronx'] },
  { borough: ['none'] },
  { borough: ['none', 'brooklyn'], status: ['closed', 'open'] },
  { complaint_type: ['none'] },
  { complaint_type: ['Street Condition', 'Sidewalk Condition'] },
  { channel: ['phone'] },
  { channel: ['none'] },
  { channel: ['online', 'none'] },
  { council_district: ['36'] },
  { council_district: ['36', '30'] },
  { incident_zip: ['11216'] },
  { descriptor: ['Pothole'] },
  { bbox: ['-74,40.6,-73.9,40.75'] },
  { bbox: ['-73.95,40.68,-73.94,40.69'], channel: ['online'] },
  { status: ['closed'], created_from: ['2025-01-05'], created_to: ['2025-01-20'], channel: ['phone', 'online'] },
];

export const describeDashboardQueries = (backend: Backend) => describe(`dashboard queries on ${backend}`, () => {
  const served = serveFixture(backend);

  const get = (path: string, headers?: Record<string, string>): Promise<AnyResponse> => served.service.get(path, headers);
  const ok = async <T>(path: string, headers?: Record<string, string>): Promise<T> => {
    const response = await get(path, headers);
    expect(response.statusCode, `${path}: ${response.body}`).toBe(200);
    return json<T>(response);
  };
  const expected = (query: Query) => inApiOrder(served.rows.filter((row) => matchesQuery(row, query)));
  /** Every page of the list from the first to the last. */
  const walk = async (query: Query, limit: number): Promise<ServiceRequestRecord[]> => {
    const seen: ServiceRequestRecord[] = [];
    let cursor: string | null = null;
    do {
      const page: Page = await ok(`/v1/service-requests${queryText({ ...query, limit: [String(limit)], ...(cursor ? { cursor: [cursor] } : {}) })}`);
      seen.push(...page.items);
      cursor = page.next_cursor;
    } while (cursor !== null);
    return seen;
  };


  it('every new path needs the key (401), answers 405 with Allow to other methods, and HEAD', async () => {
    const paths = ['/v1/service-requests/count', '/v1/exports/service-requests', '/v1/facets?field=borough', '/v1/stats/weekly', '/v1/stats/monthly'];
    for (const path of paths) {
      expectError(await served.service.app.inject({ method: 'GET', url: path }), 401, 'unauthorized', [], 'Missing or invalid API key');
      const post = await served.service.app.inject({ method: 'POST', url: path, headers: { 'x-api-key': TEST_API_KEY } });
      expectError(post, 405, 'method_not_allowed', []);
      expect(post.headers.allow).toBe('GET, HEAD');
      const head = await served.service.app.inject({ method: 'HEAD', url: path, headers: { 'x-api-key': TEST_API_KEY } });
      expect(head.statusCode, path).toBe(200);
      expect(head.body).toBe('');
    }
  });

  describe('filters', () => {
    it('the fixture has rows without a borough, a complaint type, a channel and a location', () => {
      expect(served.rows.some((row) => row.borough === null)).toBe(true);
      expect(served.rows.some((row) => row.complaint_type === null)).toBe(true);
      expect(served.rows.some((row) => row.channel === null)).toBe(true);
      expect(served.rows.some((row) => row.latitude === null)).toBe(true);
    });

    it('each new filter, several values and none select exactly the matching rows, page by page', async () => {
      for (const query of FILTER_CASES) {
        const want = expected(query);
        expect(want.length, JSON.stringify(query)).toBeGreaterThan(0);
        expect(want.length, JSON.stringify(query)).toBeLessThan(served.rows.length);
        expect(await walk(query, 1000), JSON.stringify(query)).toEqual(want);
        expect(await walk(query, 2), JSON.stringify(query)).toEqual(want);
      }
    });

    it('the order of repeated values does not matter, to the rows or to the cursor', async () => {
      const first: Page = await ok('/v1/service-requests?borough=queens&borough=bronx&limit=2');
      const next: Page = await ok(`/v1/service-requests?borough=bronx&borough=queens&borough=bronx&limit=2&cursor=${first.next_cursor}`);
      expect([...first.items, ...next.items]).toEqual(expected({ borough: ['queens', 'bronx'] }).slice(0, 4));
    });

    it('every filter is bound into the cursor: other values, or the filter left out, answer "start again"', async () => {
      const others: Record<string, [string, string]> = {
        borough: ['none', 'queens'],
        complaint_type: ['none', 'Street Condition'],
        status: ['closed', 'open'],
        channel: ['phone', 'none'],
        council_district: ['36', '30'],
        incident_zip: ['11216', '11385'],
        descriptor: ['Pothole', 'Cave-in'],
        bbox: ['-74.1,40.5,-73.7,40.9', '-74.1,40.5,-73.7,40.91'],
      };
      for (const [name, [value, other]] of Object.entries(others)) {
        const query: Query = { [name]: [value], limit: ['1'] };
        const first: Page = await ok(`/v1/service-requests${queryText(query)}`);
        expect(first.next_cursor, name).not.toBeNull();
        const cursor = first.next_cursor!;
        expect((await get(`/v1/service-requests${queryText({ ...query, cursor: [cursor] })}`)).statusCode, name).toBe(200);
        const changes: Query[] = [{ ...query, [name]: [other] }, { limit: ['1'] }];
        if (name !== 'bbox') changes.push({ ...query, [name]: [value, other] }); // one box only
        for (const changed of changes) {
          expectError(await get(`/v1/service-requests${queryText({ ...changed, cursor: [cursor] })}`), 422, 'invalid_cursor', ['cursor'], START_AGAIN);
        }
      }
    });

    it('bad values of each new parameter are 422 invalid_request naming it', async () => {
      const cases: [string, string[]][] = [
        ['borough=queens&borough=Queens', ['borough']],
        ['borough=null', ['borough']],
        ['status=none', ['status']],
        ['channel=fax', ['channel']],
        ['channel=', ['channel']],
        ['council_district=abc', ['council_district']],
        ['council_district=1.5', ['council_district']],
        ['council_district=1e3', ['council_district']],
        ['council_district=-3', ['council_district']],
        ['incident_zip=1121', ['incident_zip']],
        ['incident_zip=1121a', ['incident_zip']],
        ['descriptor=', ['descriptor']],
        [`descriptor=${'x'.repeat(201)}`, ['descriptor']],
        ['bbox=1,2,3', ['bbox']],
        ['bbox=a,b,c,d', ['bbox']],
        ['bbox=-73,40,-74,41', ['bbox']],
        ['bbox=-74,41,-73,40', ['bbox']],
        ['bbox=-200,40,-73,41', ['bbox']],
        ['bbox=-74,40,-73,91', ['bbox']],
        ['bbox=-74,40,-73,41&bbox=-74,40,-73,41', ['bbox']],
        ['format=xml', ['format']],
        ['format=csv&format=csv', ['format']],
        [`borough=${Array.from({ length: 51 }, () => 'queens').join('&borough=')}`, ['borough']],
      ];
      for (const [query, fields] of cases) {
        for (const path of ['/v1/service-requests', '/v1/service-requests/count', '/v1/facets?field=borough&', '/v1/exports/service-requests', '/v1/stats/weekly']) {
          const formatted = path === '/v1/service-requests' || path === '/v1/exports/service-requests';
          if (query.startsWith('format') && !formatted) continue;
          const url = path.endsWith('&') ? `${path}${query}` : `${path}?${query}`;
          const response = await get(url);
          expectError(response, 422, 'invalid_request', fields);
        }
      }
      expectError(await get('/v1/facets'), 422, 'invalid_request', ['field']);
      expectError(await get('/v1/facets?field=latitude'), 422, 'invalid_request', ['field']);
      expectError(await get('/v1/service-requests/count?format=csv'), 422, 'invalid_request', ['format']);
      expectError(await get('/v1/exports/service-requests?format=json'), 422, 'invalid_request', ['format']);
      expectError(await get('/v1/exports/service-requests?limit=5'), 422, 'invalid_request', ['limit']);
      expectError(await get('/v1/complaint-types?channel=phone'), 422, 'invalid_request', ['channel']);
      expectError(
        await get('/v1/service-requests/count?created_from=2025-01-05&created_to=2025-01-05'),
        422,
        'invalid_range',
        ['created_from', 'created_to'],
      );
    });

    it('the five filters keep their meaning: one value, exact text, 422 for a bad value', async () => {
      expect(await walk({ borough: ['brooklyn'] }, 3)).toEqual(expected({ borough: ['brooklyn'] }));
      expect((await ok<Page>('/v1/service-requests?complaint_type=street%20condition')).items).toEqual([]);
      expectError(await get('/v1/service-requests?borough=Queens'), 422, 'invalid_request', ['borough']);
    });
  });

  describe('GET /v1/service-requests/count', () => {
    it('answers the number of matching rows for each filter case, and for none', async () => {
      expect(await ok('/v1/service-requests/count')).toEqual({ count: served.rows.length });
      for (const query of FILTER_CASES) {
        expect(await ok(`/v1/service-requests/count${queryText(query)}`), JSON.stringify(query)).toEqual({ count: expected(query).length });
      }
      expect(await ok('/v1/service-requests/count?complaint_type=Nothing')).toEqual({ count: 0 });
    });
  });

  describe('CSV and GeoJSON pages', () => {
    const toRecord = (header: string[], record: string[]): ServiceRequestRecord => {
      const numeric = new Set(['id', 'council_district', 'latitude', 'longitude', 'days_to_close']);
      return Object.fromEntries(
        header.map((name, i) => {
          const text = record[i]!;
          return [name, text === '' ? null : numeric.has(name) ? Number(text) : text];
        }),
      ) as unknown as ServiceRequestRecord;
    };

    it('CSV (format=csv or Accept: text/csv) round-trips to the JSON page, with the next page in a Link header', async () => {
      for (const query of [{}, ...FILTER_CASES.slice(0, 6)] as Query[]) {
        const jsonPages: ServiceRequestRecord[] = [];
        const csvPages: ServiceRequestRecord[] = [];
        let jsonUrl: string | null = `/v1/service-requests${queryText({ ...query, limit: ['3'] })}`;
        let csvUrl: string | null = `/v1/service-requests${queryText({ ...query, limit: ['3'], format: ['csv'] })}`;
        while (jsonUrl !== null) {
          const page: Page = await ok(jsonUrl);
          jsonPages.push(...page.items);
          const csv = await get(csvUrl);
          expect(csv.statusCode).toBe(200);
          expect(csv.headers['content-type']).toMatch(/^text\/csv; charset=utf-8/);
          const [header, ...records] = parseCsv(csv.body);
          expect(header).toEqual(Object.keys(served.rows[0]!));
          csvPages.push(...records.map((record) => toRecord(header!, record)));
          const link = csv.headers.link as string | undefined;
          if (page.next_cursor === null) {
            expect(link).toBeUndefined();
            jsonUrl = null;
          } else {
            const target = /^<([^>]+)>; rel="next"$/.exec(link ?? '')?.[1];
            expect(target).toBeDefined();
            expect(new URL(target!, 'http://x').searchParams.get('cursor')).toBe(page.next_cursor);
            jsonUrl = `/v1/service-requests${queryText({ ...query, limit: ['3'], cursor: [page.next_cursor] })}`;
            csvUrl = target!;
          }
        }
        expect(csvPages, JSON.stringify(query)).toEqual(jsonPages);
      }
      const byAccept = await get('/v1/service-requests?limit=5', { accept: 'text/html;q=0.9, text/csv' });
      expect(byAccept.headers['content-type']).toMatch(/^text\/csv/);
      expect(byAccept.headers.vary).toMatch(/Accept/);
      expect(byAccept.body).toBe((await get('/v1/service-requests?limit=5&format=csv')).body);
      expect(byAccept.body.split('\r\n')).toHaveLength(7); // header, 5 records, the empty rest after the last CRLF
      // the format parameter wins over Accept; other Accept values get JSON
      expect((await get('/v1/service-requests?limit=5&format=json', { accept: 'text/csv' })).headers['content-type']).toMatch(/^application\/json/);
      expect((await get('/v1/service-requests?limit=5', { accept: 'text/html' })).headers['content-type']).toMatch(/^application\/json/);
      // each format its own ETag
      expect(byAccept.headers.etag).not.toBe((await get('/v1/service-requests?limit=5')).headers.etag);
    });

    it('RFC 4180: a field with a comma or a quote is quoted, its quotes doubled; null is empty', async () => {
      const { csvRecordOf } = await import('../../../src/services/requests/answers/row-formats.js');
      const row = { ...served.rows[0]!, descriptor: 'Pothole, "deep"', community_board: null };
      const [[record]] = [parseCsv(csvRecordOf(row))];
      expect(record).toContain('Pothole, "deep"');
      expect(csvRecordOf(row)).toContain(',"Pothole, ""deep""",');
      expect(record![Object.keys(row).indexOf('community_board')]).toBe('');
    });

    it('GeoJSON (format=geojson or Accept: application/geo+json) is a FeatureCollection of Points, null geometry without a location', async () => {
      for (const query of [{}, ...FILTER_CASES.slice(5, 9)] as Query[]) {
        const page: Page = await ok(`/v1/service-requests${queryText({ ...query, limit: ['4'] })}`);
        const response = await get(`/v1/service-requests${queryText({ ...query, limit: ['4'] })}`, { accept: 'application/geo+json' });
        expect(response.headers['content-type']).toBe('application/geo+json; charset=utf-8');
        const collection = json<{ type: string; features: { type: string; id: number; geometry: unknown; properties: ServiceRequestRecord }[]; next_cursor: string | null }>(response);
        expect(collection.type).toBe('FeatureCollection');
        expect(collection.next_cursor).toBe(page.next_cursor);
        expect(collection.features.map((feature) => feature.properties)).toEqual(page.items);
        for (const feature of collection.features) {
          const row = feature.properties;
          expect(feature.type).toBe('Feature');
          expect(feature.id).toBe(row.id);
          expect(feature.geometry).toEqual(row.latitude === null || row.longitude === null ? null : { type: 'Point', coordinates: [row.longitude, row.latitude] });
        }
      }
      const noLocation = served.rows.find((row) => row.latitude === null)!;
      const all = json<{ features: { id: number; geometry: unknown }[] }>(await get('/v1/service-requests?limit=1000&format=geojson'));
      expect(all.features.find((feature) => feature.id === noLocation.id)!.geometry).toBeNull();
    });
  });

  describe('GET /v1/exports/service-requests', () => {
    it('streams every matching row as CSV (the default) or GeoJSON, in list order', async () => {
      for (const query of [{}, ...FILTER_CASES] as Query[]) {
        const want = expected(query);
        const csv = await get(`/v1/exports/service-requests${queryText(query)}`);
        expect(csv.statusCode).toBe(200);
        expect(csv.headers['content-type']).toMatch(/^text\/csv/);
        expect(csv.headers['content-disposition']).toBe('attachment; filename="service-requests.csv"');
        const [header, ...records] = parseCsv(csv.body);
        expect(records.map((record) => Number(record[header!.indexOf('id')]))).toEqual(want.map((row) => row.id));
        const geojson = await get(`/v1/exports/service-requests${queryText(query)}`, { accept: 'application/geo+json' });
        const collection = json<{ features: { properties: ServiceRequestRecord }[] }>(geojson);
        expect(collection.features.map((feature) => feature.properties), JSON.stringify(query)).toEqual(want);
      }
      const compressed = await served.service.app.inject({
        method: 'GET',
        url: '/v1/exports/service-requests',
        headers: { 'x-api-key': TEST_API_KEY, 'accept-encoding': 'gzip' },
      });
      expect(compressed.headers['content-encoding']).toBe('gzip');
      expect(gunzipSync(compressed.rawPayload).toString()).toBe((await get('/v1/exports/service-requests')).body);
    });
  });

  describe('GET /v1/facets and complaint types by borough', () => {
    it('each value with its count among the matching rows, largest first, nulls as null', async () => {
      const fields = ['borough', 'complaint_type', 'status', 'channel', 'descriptor', 'council_district', 'location_type'] as const;
      for (const field of fields) {
        for (const query of [{}, FILTER_CASES[0]!, FILTER_CASES[5]!, FILTER_CASES[12]!] as Query[]) {
          const counts = new Map<string | number | null, number>();
          for (const row of expected(query)) counts.set(row[field], (counts.get(row[field]) ?? 0) + 1);
          const want = [...counts]
            .map(([value, count]) => ({ value, count }))
            .sort((a, b) => b.count - a.count || (a.value === null ? 1 : b.value === null ? -1 : a.value < b.value ? -1 : 1));
          expect(await ok(`/v1/facets${queryText({ field: [field], ...query })}`), `${field} ${JSON.stringify(query)}`).toEqual({ field, items: want });
        }
      }
      const boroughs = await ok<{ items: { value: string | null }[] }>('/v1/facets?field=borough');
      expect(boroughs.items.some((item) => item.value === null)).toBe(true);
    });

    it('complaint-types accepts the borough filter (several values, none)', async () => {
      for (const boroughs of [['queens'], ['queens', 'bronx'], ['none']]) {
        const counts = new Map<string, number>();
        for (const row of served.rows) {
          if (row.complaint_type !== null && boroughs.includes(row.borough ?? 'none')) counts.set(row.complaint_type, (counts.get(row.complaint_type) ?? 0) + 1);
        }
        const want = [...counts].map(([complaint_type, count]) => ({ complaint_type, count })).sort((a, b) => b.count - a.count || (a.complaint_type < b.complaint_type ? -1 : 1));
        expect(await ok(`/v1/complaint-types${queryText({ borough: boroughs })}`), boroughs.join()).toEqual({ items: want });
      }
    });
  });

  describe('daily, weekly and monthly numbers', () => {
    interface Numbers {
      opened: number;
      closed_within_14_days: number;
      share_closed_within_14_days: number | null;
      median_days_to_close: number | null;
      complete: boolean;
      start: string;
      end: string;
    }

    it('stats/daily filters by created_from, created_to, status and channel, checked against the rows', async () => {
      const cases: Query[] = [
        { status: ['closed'] },
        { channel: ['phone'] },
        { channel: ['none', 'online'], borough: ['brooklyn'] },
        { created_from: ['2025-01-10'], created_to: ['2025-01-20'] },
        { created_from: ['2025-01-10T12:00:00'], created_to: ['2025-01-20T00:00:01'], status: ['closed', 'open'] },
        { borough: ['none'] },
      ];
      for (const query of cases) {
        const days = (await ok<{ items: { date: string }[] }>(`/v1/stats/daily${queryText(query)}`)).items;
        const want = expectedDaily(served.rows.filter((row) => matchesQuery(row, query)), {});
        const from = query.created_from?.[0]?.slice(0, 10) ?? '0000';
        const to = query.created_to?.[0];
        const lastDay = to === undefined ? '9999' : to.length === 10 || to.endsWith('T00:00:00') ? to.slice(0, 10) : `${to.slice(0, 10)}~`;
        expect(days, JSON.stringify(query)).toEqual(want.filter((day) => day.date >= from && day.date < lastDay));
      }
    });

    it('weekly (ISO weeks) and monthly sums equal the daily ones, medians from the rows', async () => {
      for (const query of [{}, { borough: ['queens', 'brooklyn'] }, { created_from: ['2025-01-08'], channel: ['phone'] }] as Query[]) {
        const daily = (await ok<{ items: (Numbers & { date: string })[] }>(`/v1/stats/daily${queryText(query)}`)).items;
        const weekly = (await ok<{ items: (Numbers & { week: string })[] }>(`/v1/stats/weekly${queryText(query)}`)).items;
        const monthly = (await ok<{ items: (Numbers & { month: string })[] }>(`/v1/stats/monthly${queryText(query)}`)).items;
        for (const buckets of [weekly, monthly]) {
          expect(buckets[0]!.start).toBe(daily[0]!.date);
          expect(buckets[buckets.length - 1]!.end).toBe(daily[daily.length - 1]!.date);
          for (const bucket of buckets) {
            const days = daily.filter((day) => day.date >= bucket.start && day.date <= bucket.end);
            expect(bucket.opened).toBe(days.reduce((sum, day) => sum + day.opened, 0));
            expect(bucket.closed_within_14_days).toBe(days.reduce((sum, day) => sum + day.closed_within_14_days, 0));
            expect(bucket.complete).toBe(days.every((day) => day.complete));
          }
          expect(buckets.reduce((sum, bucket) => sum + bucket.opened, 0)).toBe(daily.reduce((sum, day) => sum + day.opened, 0));
        }
        // January 2025: 1 to 5 are ISO week 1 (Monday 30 December 2024), 6 to 12 week 2, ... 27 to 31 week 5
        if (Object.keys(query).length === 0) {
          expect(weekly.map((week) => [week.week, week.start, week.end])).toEqual([
            ['2025-W01', '2025-01-01', '2025-01-05'],
            ['2025-W02', '2025-01-06', '2025-01-12'],
            ['2025-W03', '2025-01-13', '2025-01-19'],
            ['2025-W04', '2025-01-20', '2025-01-26'],
            ['2025-W05', '2025-01-27', '2025-01-31'],
          ]);
          expect(monthly).toHaveLength(1);
          const all = expectedDaily(served.rows, {});
          const closeDays = served.rows.flatMap((row) => (row.days_to_close === null ? [] : [row.days_to_close])).sort((a, b) => a - b);
          const middle = closeDays.length >> 1;
          const median = closeDays.length % 2 === 1 ? closeDays[middle]! : (closeDays[middle - 1]! + closeDays[middle]!) / 2;
          expect(monthly[0]).toMatchObject({ month: '2025-01', opened: all.reduce((sum, day) => sum + day.opened, 0), median_days_to_close: Math.round(median * 100) / 100 });
        }
      }
    });

    it('a count, facet or statistics answer is built once per URL and snapshot: the next request of the URL gets the same bytes without reading the snapshot', async () => {
      const store = (backend === 'sqlite' ? SqliteServiceRequestStore : PostgresServiceRequestStore).prototype;
      const reads = [vi.spyOn(store, 'bucketsFromRows'), vi.spyOn(store, 'periodSummaries'), vi.spyOn(store, 'dailyStats'), vi.spyOn(store, 'count'), vi.spyOn(store, 'facet')];
      try {
        for (const path of [
          '/v1/stats/weekly?channel=phone&created_from=2025-01-09',
          '/v1/stats/daily?borough=queens',
          '/v1/stats/monthly?status=open',
          '/v1/service-requests/count?status=open&borough=queens',
          '/v1/facets?field=channel&status=open&borough=queens',
        ]) {
          const first = await get(path);
          const calls = reads.reduce((sum, read) => sum + read.mock.calls.length, 0);
          expect(calls, path).toBeGreaterThan(0);
          const second = await get(path);
          expect(reads.reduce((sum, read) => sum + read.mock.calls.length, 0), path).toBe(calls);
          expect(second.statusCode).toBe(200);
          expect(second.body).toBe(first.body);
          expect(second.headers['content-type']).toBe(first.headers['content-type']);
          expect(second.headers.etag).toBe(first.headers.etag);
          for (const read of reads) read.mockClear();
        }
      } finally {
        for (const read of reads) read.mockRestore();
      }
    });

    it('ten requests of the same URL arriving together walk the rows once and get the same answer', async () => {
      const store = (backend === 'sqlite' ? SqliteServiceRequestStore : PostgresServiceRequestStore).prototype;
      const walks = vi.spyOn(store, 'bucketsFromRows');
      try {
        const answers = await Promise.all(Array.from({ length: 10 }, () => get('/v1/stats/weekly?status=closed&channel=online')));
        expect(answers.map((answer) => answer.statusCode)).toEqual(Array.from({ length: 10 }, () => 200));
        expect(new Set(answers.map((answer) => answer.body)).size).toBe(1);
        expect(walks).toHaveBeenCalledTimes(1);
      } finally {
        walks.mockRestore();
      }
    });

    it('ten requests of the same URL whose walk outlasts the row walks budget\'s longest wait all get its answer: the build takes the place, not each request', async () => {
      const store = (backend === 'sqlite' ? SqliteServiceRequestStore : PostgresServiceRequestStore).prototype;
      let openGate = (): void => undefined;
      const gate = new Promise<void>((resolve) => (openGate = resolve));
      // Held at the gate, then the store's own walk.
      const original = (Object.getOwnPropertyDescriptor(store, 'bucketsFromRows') as PropertyDescriptor).value as typeof store.bucketsFromRows;
      const walks = vi.spyOn(store, 'bucketsFromRows').mockImplementation(async function (this: typeof store, ...args) {
        await gate;
        return original.apply(this, args);
      });
      // The budget's waits are timers: time runs past the longest wait while the walk is held.
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
      try {
        const answers = Promise.all(Array.from({ length: 10 }, () => get('/v1/stats/monthly?status=closed&channel=phone')));
        while (walks.mock.calls.length === 0) await new Promise((resolve) => setImmediate(resolve));
        vi.advanceTimersByTime(ROW_WALK_LIMITS.deadlineMs + 1_000);
        vi.useRealTimers();
        openGate();
        const settled = await answers;
        expect(settled.map((answer) => answer.statusCode)).toEqual(Array.from({ length: 10 }, () => 200));
        expect(new Set(settled.map((answer) => answer.body)).size).toBe(1);
        expect(walks).toHaveBeenCalledTimes(1);
      } finally {
        vi.useRealTimers();
        openGate();
        walks.mockRestore();
      }
    });
  });
});
