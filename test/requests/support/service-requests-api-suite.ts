import { createHmac } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { FILTER_SET_ID } from '../../../src/services/requests/cursor.js';
import type { ServiceRequestRecord } from '../../../src/services/requests/store/service-request-store.js';
import { expectError, type AnyResponse } from '../../support/http.js';
import { expectedComplaintTypes, expectedDaily, expectedList, queryOf, type Filters } from './expected.js';
import { type Backend, createFixture, FIXTURE_SNAPSHOT_ID, type FixtureDatabase, fixtureDuringSuite } from './fixture-database.js';
import { json, startTestApp, TEST_API_KEY, TEST_CURSOR_SECRET, testAppDuringSuite } from './requests-app.js';

interface Page {
  items: ServiceRequestRecord[];
  next_cursor: string | null;
}

const NOT_VALID = 'The cursor is not valid';
const START_AGAIN = 'The cursor belongs to other filters: start again without a cursor';
const EARLIER_SNAPSHOT = 'The cursor belongs to an earlier snapshot of the data: start again without a cursor';
const NO_LONGER_ACCEPTED = 'The cursor is no longer accepted: start again without a cursor';

function signed(payload: unknown, secret: string = TEST_CURSOR_SECRET): string {
  const text = Buffer.from(typeof payload === 'string' ? payload : JSON.stringify(payload)).toString('base64url');
  return `${text}.${createHmac('sha256', secret).update(text).digest('base64url')}`;
}

/** The payload of a cursor: `[2, created_at, id, filter_set, filters_hash, snapshot_id]`. */
function contentOf(cursor: string): unknown[] {
  return JSON.parse(Buffer.from(cursor.split('.')[0]!, 'base64url').toString()) as unknown[];
}

export const describeServiceRequestApi = (backend: Backend) => describe(`service-request API on ${backend}`, () => {
  const fixture = fixtureDuringSuite(backend);
  const service = testAppDuringSuite(fixture);
  let rows: ServiceRequestRecord[];

  const get = (path: string, headers?: Record<string, string>): Promise<AnyResponse> => service.get(path, headers);
  const page = async (parameters: Record<string, string | number | undefined>): Promise<Page> => {
    const response = await get(`/v1/service-requests${queryOf(parameters)}`);
    expect(response.statusCode, response.body).toBe(200);
    return json<Page>(response);
  };
  /** Every page from the first to the last; checks the page rules on the way. */
  const walk = async (filters: Filters, limit: number): Promise<ServiceRequestRecord[]> => {
    const seen: ServiceRequestRecord[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < 1000; pages++) {
      const current = await page({ ...filters, limit, cursor });
      expect(current.items.length).toBeLessThanOrEqual(limit);
      if (cursor !== undefined) expect(current.items.length, 'an empty last page').toBeGreaterThan(0);
      seen.push(...current.items);
      if (current.next_cursor === null) return seen;
      expect(current.items.length).toBe(limit);
      cursor = current.next_cursor;
    }
    throw new Error('the walk does not end');
  };

  beforeAll(() => {
    rows = fixture.rows;
  });

  describe('GET /v1/service-requests', () => {
    it('returns every request, all fields, numbers as numbers and timestamps without zone', async () => {
      const result = await page({ limit: 1000 });
      expect(result.items).toEqual(expectedList(rows, {}));
      expect(result.next_cursor).toBeNull();
      const full = result.items.find((row) => row.id === 1001)!;
      expect(Object.keys(full)).toEqual([
        'id', 'created_at', 'closed_at', 'status', 'complaint_type', 'descriptor', 'location_type', 'borough',
        'community_board', 'council_district', 'incident_zip', 'channel', 'latitude', 'longitude', 'days_to_close',
      ]);
      expect(full).toMatchObject({ latitude: 40.6816, longitude: -73.9496, council_district: 36, incident_zip: '11216', days_to_close: 2.5 });
      for (const row of result.items) expect(row.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/);
      // a value that was not recorded is null; the row is not hidden
      expect(result.items.find((row) => row.id === 1008)).toMatchObject({ complaint_type: null, borough: null, latitude: null, channel: 'other' });
    });

    it('rule 1: filters combine with AND; an unset parameter adds no condition', async () => {
      const cases: Filters[] = [
        { borough: 'brooklyn' },
        { borough: 'brooklyn', status: 'closed' },
        { complaint_type: 'Street Condition', borough: 'queens' },
        { complaint_type: 'Street Condition', status: 'open', created_from: '2025-01-04' },
        { borough: 'bronx', complaint_type: 'Street Light Condition', status: 'assigned', created_from: '2025-01-20', created_to: '2025-01-23' },
        { status: 'pending' },
      ];
      for (const filters of cases) {
        const expected = expectedList(rows, filters);
        expect(expected.length, JSON.stringify(filters)).toBeGreaterThan(0);
        expect((await page({ ...filters, limit: 1000 })).items, JSON.stringify(filters)).toEqual(expected);
      }
    });

    it('created_from is inclusive and created_to exclusive, as dates or date-times', async () => {
      const ids = async (filters: Filters) => (await page({ ...filters, limit: 1000 })).items.map((row) => row.id);
      expect(await ids({ created_from: '2025-01-02', created_to: '2025-01-03' })).toEqual([1006, 1007, 1008, 1009]);
      expect(await ids({ created_from: '2025-01-02T00:00:00', created_to: '2025-01-02T09:00:00' })).toEqual([1006]);
      expect(await ids({ created_from: '2025-01-02T09:00:00', created_to: '2025-01-02T09:00:01' })).toEqual([1007, 1008]);
      expect(await ids({ created_to: '2025-01-01T00:00:01' })).toEqual([1001, 1002, 1003]);
      expect(await ids({ created_from: '2025-01-31T23:59:59' })).toEqual([1038]);
      expect(await ids({ created_from: '2025-01-01T23:59:59.5', created_to: '2025-01-02T00:00:00.000001' })).toEqual([1006]);
    });

    it('rule 2: orders by created_at, then id, and nothing else', async () => {
      const items = (await page({ limit: 6 })).items;
      expect(items.map((row) => row.id)).toEqual([1001, 1002, 1003, 1004, 1005, 1006]);
      const sameTime = (await page({ created_from: '2025-01-10T03:03:03', created_to: '2025-01-10T03:03:04' })).items;
      expect(sameTime.map((row) => row.id)).toEqual([1024, 1025, 1026]);
    });

    it('rule 3: at most limit rows; next_cursor null on the last page; never an empty last page; limit defaults to 50', async () => {
      const all = expectedList(rows, {});
      const first = await page({ limit: 19 });
      expect(first.items).toEqual(all.slice(0, 19));
      expect(first.next_cursor).toEqual(expect.any(String));
      const second = await page({ limit: 19, cursor: first.next_cursor! });
      expect(second.items).toEqual(all.slice(19));
      expect(second.next_cursor).toBeNull();
      expect((await page({ limit: all.length })).next_cursor).toBeNull();
      expect((await page({})).items).toHaveLength(all.length); // 38 < 50
      expect((await page({ borough: 'queens', status: 'open' })).items).toEqual([]);
    });

    it('walks every filter combination with several page sizes: no row skipped or repeated, same rows as one query', async () => {
      const cases: Filters[] = [
        {},
        { borough: 'brooklyn' },
        { status: 'closed', created_from: '2025-01-03T06:30:00' },
        { complaint_type: 'Street Condition', created_to: '2025-01-15T10:00:00' },
        { borough: 'queens', complaint_type: 'Street Condition', status: 'closed' },
      ];
      for (const filters of cases) {
        const oneQuery = (await page({ ...filters, limit: 1000 })).items;
        expect(oneQuery).toEqual(expectedList(rows, filters));
        for (const limit of [1, 2, 3, 7, 50]) {
          const walked = await walk(filters, limit);
          expect(walked.map((row) => row.id), `${JSON.stringify(filters)} limit ${limit}`).toEqual(oneQuery.map((row) => row.id));
          expect(new Set(walked.map((row) => row.id)).size).toBe(walked.length);
        }
      }
    });

    it('rule 5: the cursor is opaque URL-safe text of at most 200 characters, bound to the filters and not to limit', async () => {
      const filters = { borough: 'brooklyn', created_from: '2025-01-02' };
      const first = await page({ ...filters, limit: 2 });
      const cursor = first.next_cursor!;
      expect(cursor).toMatch(/^[A-Za-z0-9_.-]+$/);
      expect(cursor.length).toBeLessThanOrEqual(200);
      expect(encodeURIComponent(cursor)).toBe(cursor);
      const expected = expectedList(rows, filters);
      // another limit on the next page works
      const next = await page({ ...filters, limit: 3, cursor });
      expect(next.items).toEqual(expected.slice(2, 5));
      const rest = await page({ ...filters, limit: 1000, cursor });
      expect(rest.items).toEqual(expected.slice(2));
      expect(rest.next_cursor).toBeNull();
      // the same filters spelled differently (date vs midnight date-time, parameter order) are the same filters
      const respelled = await get(`/v1/service-requests?created_from=2025-01-02T00:00:00.000&limit=3&borough=brooklyn&cursor=${cursor}`);
      expect(json<Page>(respelled).items).toEqual(expected.slice(2, 5));
    });

    it('rule 6: an undecodable, malformed or wrongly typed cursor is 422 invalid_cursor "not valid"', async () => {
      const cursor = (await page({ limit: 2 })).next_cursor!;
      const [payload, signature] = cursor.split('.') as [string, string];
      const bad = [
        'abc',
        '!!!!',
        'not-a-cursor.at-all',
        `${payload}.`,
        payload,
        `${payload}.${signature}.${signature}`,
        `${payload}.${signature.slice(1)}`, // a signature one character short
        `${Buffer.from('[1,"2025-01-01T00:00:00",1002').toString('base64url')}.${signature}`, // cut content
        signed('not json'),
        signed({ created_at: '2025-01-01T00:00:00', id: 1 }),
        signed([2, '2025-01-01T00:00:00', '1002', FILTER_SET_ID, 'x'.repeat(16), FIXTURE_SNAPSHOT_ID]), // id as text
        signed([2, '2025-01-01', 1002, FILTER_SET_ID, 'x'.repeat(16), FIXTURE_SNAPSHOT_ID]), // not a date-time
        signed([2, '2025-01-01T00:00:00', 1.5, FILTER_SET_ID, 'x'.repeat(16), FIXTURE_SNAPSHOT_ID]),
        signed([3, '2025-01-01T00:00:00', 1002, FILTER_SET_ID, 'x'.repeat(16), FIXTURE_SNAPSHOT_ID]), // unknown version
        signed([2, '2025-01-01T00:00:00', 1002, FILTER_SET_ID, null, FIXTURE_SNAPSHOT_ID]),
        signed([2, '2025-01-01T00:00:00', 1002, null, 'x'.repeat(16), FIXTURE_SNAPSHOT_ID]), // no filter set
        signed([2, '2025-01-01T00:00:00', 1002]),
        signed([1, '2025-01-01T00:00:00', '1002', 'x'.repeat(16), FIXTURE_SNAPSHOT_ID]), // format 1, id as text
      ];
      for (const value of bad) {
        const response = await get(`/v1/service-requests?limit=2&cursor=${encodeURIComponent(value)}`);
        expectError(response, 422, 'invalid_cursor', ['cursor'], NOT_VALID);
      }
      const empty = await get('/v1/service-requests?cursor=');
      expectError(empty, 422, 'invalid_cursor', ['cursor'], NOT_VALID);
    });

    it('a well-formed cursor that no current secret signed (altered, forged, an earlier secret) is 422 invalid_cursor "start again"', async () => {
      const cursor = (await page({ limit: 2 })).next_cursor!;
      const [payload, signature] = cursor.split('.') as [string, string];
      const flip = (text: string, at: number) => text.slice(0, at) + (text[at] === 'A' ? 'B' : 'A') + text.slice(at + 1);
      const content = contentOf(cursor);
      const altered = Buffer.from(JSON.stringify(content.map((value, at) => (at === 2 ? 999_999 : value)))).toString('base64url');
      const unsigned = [
        `${altered}.${signature}`, // another position under the old signature
        `${payload}.${flip(signature, 10)}`, // tampered signature
        `${payload}.${flip(signature, signature.length - 1)}`, // last character (spare bits) changed
        signed(content, 'another-secret-of-the-same-form-0123456789'), // forged: right format, wrong key
      ];
      for (const value of unsigned) {
        const response = await get(`/v1/service-requests?limit=2&cursor=${encodeURIComponent(value)}`);
        expectError(response, 422, 'invalid_cursor', ['cursor'], NO_LONGER_ACCEPTED);
      }
    });

    it('rule 7: a cursor made under other filter values answers 422 invalid_cursor "start again"', async () => {
      const cursor = (await page({ borough: 'brooklyn', limit: 2 })).next_cursor!;
      for (const other of [
        {},
        { borough: 'queens' },
        { borough: 'brooklyn', status: 'closed' },
        { borough: 'brooklyn', complaint_type: 'Street Condition' },
        { borough: 'brooklyn', created_from: '2025-01-01' },
        { borough: 'brooklyn', created_to: '2025-02-01' },
      ]) {
        const response = await get(`/v1/service-requests${queryOf({ ...other, cursor })}`);
        expectError(response, 422, 'invalid_cursor', ['cursor'], START_AGAIN);
      }
      // a correctly signed cursor of the same filters but another snapshot
      const filtersHash = contentOf(cursor)[4];
      const otherSnapshot = signed([2, '2025-01-01T00:00:00', 1001, FILTER_SET_ID, filtersHash, 'another0snapshot']);
      expectError(await get(`/v1/service-requests?borough=brooklyn&cursor=${otherSnapshot}`), 422, 'invalid_cursor', ['cursor'], EARLIER_SNAPSHOT);
    });

    it('a cursor made under another filter set (the service gained or lost a filter since) answers 422 invalid_cursor "no longer accepted"', async () => {
      const cursor = (await page({ borough: 'brooklyn', limit: 2 })).next_cursor!;
      const [, createdAt, id, filterSet, filtersHash] = contentOf(cursor);
      expect(filterSet).toBe(FILTER_SET_ID);
      for (const other of [
        signed([2, createdAt, id, 'AnotherS', filtersHash, FIXTURE_SNAPSHOT_ID]), // another set, the same values hash
        signed([1, createdAt, id, filtersHash, FIXTURE_SNAPSHOT_ID]), // format 1, which names no set
      ]) {
        expectError(await get(`/v1/service-requests?borough=brooklyn&cursor=${other}`), 422, 'invalid_cursor', ['cursor'], NO_LONGER_ACCEPTED);
      }
      // the same content under the current set is the cursor itself, and pages on
      expect(signed([2, createdAt, id, FILTER_SET_ID, filtersHash, FIXTURE_SNAPSHOT_ID])).toBe(cursor);
      expect((await page({ borough: 'brooklyn', limit: 2, cursor })).items.length).toBeGreaterThan(0);
    });

    it('rule 8: created_from not before created_to is 422 invalid_range', async () => {
      for (const [from, to] of [
        ['2025-01-02', '2025-01-02'],
        ['2025-01-03', '2025-01-02'],
        ['2025-01-02', '2025-01-02T00:00:00'],
        ['2025-01-02T10:00:00', '2025-01-02T09:59:59'],
      ]) {
        const response = await get(`/v1/service-requests?created_from=${from}&created_to=${to}`);
        expectError(response, 422, 'invalid_range', ['created_from', 'created_to'], 'created_from must be before created_to');
      }
    });

    it('rule 9: each parameter\'s bad values answer 422 invalid_request naming the parameter', async () => {
      const cases: [string, string[]][] = [
        ['borough=Queens', ['borough']],
        ['borough=', ['borough']],
        ['status=Closed', ['status']],
        ['status=done', ['status']],
        ['limit=0', ['limit']],
        ['limit=1001', ['limit']],
        ['limit=abc', ['limit']],
        ['limit=1.5', ['limit']],
        ['limit=-1', ['limit']],
        ['limit=1e2', ['limit']],
        ['limit=%20', ['limit']],
        ['created_from=2025-01-01T00:00:00Z', ['created_from']],
        ['created_from=2025-01-01T00:00:00%2B01:00', ['created_from']],
        ['created_to=2025-01-01T00:00:00-05:00', ['created_to']],
        ['created_from=2025-13-01', ['created_from']],
        ['created_from=2025-02-30', ['created_from']],
        ['created_to=01/02/2025', ['created_to']],
        ['created_from=2025-01-01T25:00:00', ['created_from']],
        ['created_from=2025-01-01 00:00:00', ['created_from']],
        [`complaint_type=${'x'.repeat(201)}`, ['complaint_type']],
        ['complaint_type=', ['complaint_type']],
        [`cursor=${'a'.repeat(201)}`, ['cursor']],
        ['sort=id', ['sort']],
        ['offset=10', ['offset']],
        ['Borough=queens', ['Borough']],
        ['borough=queens&borough=Bronx', ['borough']],
        ['limit=5&limit=6', ['limit']],
        ['borough=Queens&limit=0&page=2', ['page', 'borough', 'limit']],
      ];
      for (const [query, fields] of cases) {
        const response = await get(`/v1/service-requests?${query}`);
        expectError(response, 422, 'invalid_request', fields);
        expect(json<{ error: { message: string } }>(response).error.message, query).toMatch(/^The request is not valid/);
      }
    });

    it('injection text is only a value: 200 with no rows', async () => {
      for (const value of ["' OR 1=1 --", "Street Condition' OR '1'='1", '"; DROP TABLE service_requests; --', '%', '*']) {
        const result = await page({ complaint_type: value });
        expect(result, value).toEqual({ items: [], next_cursor: null });
      }
      expectError(await get(`/v1/service-requests?borough=${encodeURIComponent("queens' OR 1=1 --")}`), 422, 'invalid_request', ['borough']);
      expect((await page({ limit: 1000 })).items).toHaveLength(rows.length);
    });
  });

  describe('GET /v1/service-requests/{id}', () => {
    it('returns one request', async () => {
      const response = await get('/v1/service-requests/1030');
      expect(response.statusCode).toBe(200);
      expect(json(response)).toEqual(rows.find((row) => row.id === 1030));
    });

    it('a non-integer id is 422 invalid_request fields [id]; an unknown id 404 not_found', async () => {
      for (const id of ['abc', '1.5', '10x', '%20', '1e3', '0x10', '+7']) {
        expectError(await get(`/v1/service-requests/${id}`), 422, 'invalid_request', ['id']);
      }
      for (const id of ['999', '0', '-5', '99999999999', '123456789012345678901234567890']) {
        expectError(await get(`/v1/service-requests/${id}`), 404, 'not_found', []);
      }
      expectError(await get('/v1/service-requests/1001?x=1'), 422, 'invalid_request', ['x']);
    });
  });

  describe('GET /v1/complaint-types', () => {
    it('every type with its count, largest first, counts checked against the rows', async () => {
      const response = await get('/v1/complaint-types');
      expect(response.statusCode).toBe(200);
      const body = json<{ items: { complaint_type: string; count: number }[] }>(response);
      expect(body).toEqual({ items: expectedComplaintTypes(rows) });
      expect(body.items.reduce((sum, item) => sum + item.count, 0)).toBe(rows.filter((row) => row.complaint_type !== null).length);
      expectError(await get('/v1/complaint-types?status=open'), 422, 'invalid_request', ['status']);
    });
  });

  describe('GET /v1/stats/daily', () => {
    it('one row per day of the period, numbers checked against the rows', async () => {
      const response = await get('/v1/stats/daily');
      expect(response.statusCode).toBe(200);
      const items = json<{ items: unknown[] }>(response).items;
      expect(items).toHaveLength(31);
      expect(items).toEqual(expectedDaily(rows, {}));
    });

    it('with borough and complaint_type filters, alone and together; an unknown type gives days of zeros', async () => {
      const scopes = [
        { borough: 'brooklyn' },
        { complaint_type: 'Street Condition' },
        { borough: 'queens', complaint_type: 'Street Condition' },
        { complaint_type: "' OR 1=1 --" },
      ];
      for (const scope of scopes) {
        const response = await get(`/v1/stats/daily${queryOf(scope)}`);
        expect(response.statusCode, response.body).toBe(200);
        expect(json<{ items: unknown[] }>(response).items, JSON.stringify(scope)).toEqual(expectedDaily(rows, scope));
      }
    });

    it('bad and unknown parameters are 422 invalid_request naming them', async () => {
      expectError(await get('/v1/stats/daily?borough=Queens'), 422, 'invalid_request', ['borough']);
      expectError(await get('/v1/stats/daily?status=done'), 422, 'invalid_request', ['status']);
      expectError(await get('/v1/stats/daily?limit=5'), 422, 'invalid_request', ['limit']);
      expectError(await get(`/v1/stats/daily?complaint_type=${'x'.repeat(201)}`), 422, 'invalid_request', ['complaint_type']);
    });
  });

  describe('GET /v1/dataset', () => {
    it('source, snapshot date and id, row count, created_at range, cleaning rules with removed counts', async () => {
      const response = await get('/v1/dataset');
      expect(response.statusCode).toBe(200);
      const body = json(response);
      expect(body).toMatchObject({
        snapshot_id: FIXTURE_SNAPSHOT_ID,
        snapshot_date: '2025-07-01',
        source: { kind: 'synthetic', dataset: 'erm2-nwe9', seed: 311, layout: 'standard-41', format: 'portal_csv', column_count: 41, missing_columns: ['Council District'] },
        row_count: rows.length,
        created_at_min: '2025-01-01T00:00:00',
        created_at_max: '2025-01-31T23:59:59',
        period: { start: '2025-01-01', end: '2025-01-31' },
      });
      expect(body.cleaning_rules).toEqual([
        expect.objectContaining({ id: 'duplicate_unique_key', rows_removed: 2, applied: true }),
        expect.objectContaining({ id: 'closed_before_created', rows_removed: 3 }),
        expect.objectContaining({ id: 'placeholder_to_null', rows_removed: 0, values_changed: 7 }),
      ]);
      expectError(await get('/v1/dataset?x=1'), 422, 'invalid_request', ['x']);
    });
  });

  describe('health, readiness, keys, routing', () => {
    it('/health and /ready answer 200 without a key', async () => {
      for (const [path, status] of [['/health', 'ok'], ['/ready', 'ready']] as const) {
        const response = await service.app.inject({ method: 'GET', url: path });
        expect(response.statusCode).toBe(200);
        expect(response.json()).toEqual({ status });
      }
    });

    it('every /v1 path needs the key: missing or wrong is 401 unauthorized', async () => {
      const paths = ['/v1/service-requests', '/v1/service-requests/1001', '/v1/complaint-types', '/v1/stats/daily', '/v1/dataset', '/v1/service-requests?borough=Queens'];
      for (const path of paths) {
        expectError(await service.app.inject({ method: 'GET', url: path }), 401, 'unauthorized', [], 'Missing or invalid API key');
        expectError(await get(path, { 'x-api-key': `${TEST_API_KEY}x` }), 401, 'unauthorized', [], 'Missing or invalid API key');
      }
    });

    it('an unknown path is 404 not_found; other methods are 405 with Allow; HEAD works', async () => {
      expectError(await get('/v1/unknown'), 404, 'not_found', [], 'Not Found');
      expectError(await get('/v1/service-requests/1001/history'), 404, 'not_found', []);
      for (const method of ['POST', 'PUT', 'PATCH', 'DELETE'] as const) {
        for (const url of ['/v1/service-requests', '/v1/service-requests/1001', '/v1/complaint-types', '/v1/stats/daily', '/v1/dataset']) {
          const response = await service.app.inject({ method, url, headers: { 'x-api-key': TEST_API_KEY } });
          expectError(response, 405, 'method_not_allowed', []);
          expect(response.headers.allow).toBe('GET, HEAD');
        }
      }
      const head = await service.app.inject({ method: 'HEAD', url: '/v1/service-requests?limit=2', headers: { 'x-api-key': TEST_API_KEY } });
      expect(head.statusCode).toBe(200);
      expect(head.body).toBe('');
      expect((await page({ limit: 1000 })).items).toHaveLength(rows.length);
    });

    it('every response has X-Request-ID, equal to error.request_id', async () => {
      const response = await get('/v1/service-requests?limit=0', { 'x-request-id': 'dashboard-42' });
      expect(response.headers['x-request-id']).toBe('dashboard-42');
      expectError(response, 422, 'invalid_request', ['limit']);
    });
  });

  describe('caching of the frozen snapshot', () => {
    it('ETag and Cache-Control on the GET answers; If-None-Match answers 304 without a body', async () => {
      for (const path of ['/v1/service-requests?limit=5', '/v1/service-requests/1001', '/v1/complaint-types', '/v1/stats/daily?borough=bronx', '/v1/dataset']) {
        const first = await get(path);
        expect(first.statusCode).toBe(200);
        const etag = first.headers.etag as string;
        expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
        expect(first.headers['cache-control']).toBe('private, max-age=300');
        expect((await get(path)).headers.etag).toBe(etag);
        for (const ifNoneMatch of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
          const cached = await get(path, { 'if-none-match': ifNoneMatch });
          expect(cached.statusCode, `${path} ${ifNoneMatch}`).toBe(304);
          expect(cached.body).toBe('');
          expect(cached.headers.etag).toBe(etag);
        }
        expect((await get(path, { 'if-none-match': '"other"' })).statusCode).toBe(200);
      }
      expect((await get('/v1/service-requests?limit=5')).headers.etag).not.toBe((await get('/v1/service-requests?limit=6')).headers.etag);
      // errors are not cached
      const error = await get('/v1/service-requests/999');
      expect(error.headers.etag).toBeUndefined();
      expect(error.headers['cache-control']).toBeUndefined();
      await expect(service.app.inject({ method: 'GET', url: '/v1/dataset', headers: { 'if-none-match': '*' } })).resolves.toMatchObject({ statusCode: 401 });
    });
  });

  describe('rule 4: paging is position-based', () => {
    it('when rows leave the filtered set between pages, no other row is skipped or repeated', async () => {
      const own = await createFixture(backend, { snapshotId: FIXTURE_SNAPSHOT_ID });
      const ownService = await startTestApp(own.databaseUrl);
      try {
        const filters = { borough: 'brooklyn' };
        const expected = expectedList(own.rows, filters);
        const first = json<Page>(await ownService.get(`/v1/service-requests${queryOf({ ...filters, limit: 3 })}`));
        expect(first.items).toEqual(expected.slice(0, 3));
        // the last row of page 1 and the first row of page 2 leave the set
        const leaving = [expected[2]!.id, expected[3]!.id];
        await removeRows(backend, own, leaving);
        // A client's next page reaches the service in a later turn of its event loop.
        await new Promise((resolve) => setImmediate(resolve));
        const second = json<Page>(await ownService.get(`/v1/service-requests${queryOf({ ...filters, limit: 3, cursor: first.next_cursor! })}`));
        expect(second.items.map((row) => row.id)).toEqual(expected.slice(4, 7).map((row) => row.id));
      } finally {
        await ownService.app.close();
        await own.drop();
      }
    });
  });
});

async function removeRows(backend: Backend, fixture: FixtureDatabase, ids: number[]): Promise<void> {
  if (backend === 'sqlite') {
    const { default: Database } = await import('better-sqlite3');
    const database = new Database(fixture.databaseUrl);
    database.prepare(`DELETE FROM service_requests WHERE id IN (${ids.map(() => '?').join(', ')})`).run(...ids);
    database.close();
    return;
  }
  const { default: pg } = await import('pg');
  const url = new URL(fixture.databaseUrl);
  const schema = url.searchParams.get('schema')!;
  url.searchParams.delete('schema');
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    await client.query(`DELETE FROM "${schema}".service_requests WHERE id = ANY($1::int[])`, [ids]);
  } finally {
    await client.end();
  }
}
