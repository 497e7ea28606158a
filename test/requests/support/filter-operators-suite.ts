/**
 * The filter operators over HTTP on one backend: each rule at its boundaries, on every route that
 * takes filters (count, list, export, facets, statistics), against a plain filter of the rows.
 */
import { describe, expect, it } from 'vitest';
import type { ServiceRequestRecord } from '../../../src/services/requests/store/service-request-store.js';
import { greatCircleMeters } from '../../../src/services/requests/great-circle.js';
import { expectError } from '../../support/http.js';
import { type Backend, fixtureDuringSuite } from './fixture-database.js';
import { json, testAppDuringSuite } from './requests-app.js';

/** A request of 2025-01-0`day` at 10:00, closed `days` later (January: no change of the clocks), at a location. */
function request(id: number, day: number, fields: Partial<ServiceRequestRecord> & { days?: number | null }): ServiceRequestRecord {
  const created_at = `2025-01-0${day}T10:00:00`;
  const days = fields.days ?? null;
  const closed_at = days === null ? null : new Date(Date.parse(`${created_at}Z`) + Math.round(days * 100) * 864_000).toISOString().slice(0, 19);
  return {
    id,
    created_at,
    closed_at,
    status: days === null ? 'open' : 'closed',
    complaint_type: 'Street Condition',
    descriptor: null,
    location_type: null,
    borough: 'queens',
    community_board: null,
    council_district: null,
    incident_zip: null,
    channel: 'phone',
    latitude: 40.7,
    longitude: -74,
    days_to_close: days,
    ...fields,
  };
}

const CENTRE = { latitude: 40.7, longitude: -74 };
/** A location about 1,112 m north of the centre, and its exact distance. */
const NORTH = { latitude: 40.71, longitude: -74 };
const NORTH_M = greatCircleMeters(CENTRE.latitude, CENTRE.longitude, NORTH.latitude, NORTH.longitude);

const ROWS: ServiceRequestRecord[] = [
  request(1, 1, { days: 2, descriptor: 'Pothole', borough: 'queens', community_board: '01 QUEENS' }),
  request(2, 1, { days: 1.5, location_type: 'Sidewalk', borough: null }),
  request(3, 2, { days: 14, complaint_type: 'Noise', descriptor: 'Loud Music', borough: 'bronx', ...NORTH }),
  request(4, 3, { days: null, complaint_type: null, borough: 'brooklyn', latitude: null, longitude: null, community_board: '01 QUEENS' }),
  // Closed at 2025-01-09T23:55:12.
  request(5, 4, { days: 5.58, complaint_type: 'POTHOLE REPAIR', latitude: 40.8, longitude: -73.9 }),
];

export const describeFilterOperators = (backend: Backend) =>
  describe(`filter operators on ${backend}`, () => {
    const fixture = fixtureDuringSuite(backend, { rows: ROWS });
    const service = testAppDuringSuite(fixture);

    /** Every filtered route answers for the rows of these ids (count, list page, export, facets, daily numbers). */
    const expectIds = async (query: string, ids: number[]): Promise<void> => {
      const count = await service.get(`/v1/service-requests/count?${query}`);
      expect(count.statusCode, count.body).toBe(200);
      expect(json<{ count: number }>(count).count, query).toBe(ids.length);
      const list = await service.get(`/v1/service-requests?${query}&limit=1000`);
      expect(json<{ items: { id: number }[] }>(list).items.map((row) => row.id).sort((a, b) => a - b), query).toEqual(ids);
      const exported = await service.get(`/v1/exports/service-requests?${query}&format=csv`);
      expect(exported.statusCode).toBe(200);
      expect(exported.body.trim().split('\n').length - 1, query).toBe(ids.length);
      const facets = await service.get(`/v1/facets?field=borough&${query}`);
      expect(json<{ items: { count: number }[] }>(facets).items.reduce((sum, item) => sum + item.count, 0), query).toBe(ids.length);
      const daily = await service.get(`/v1/stats/daily?${query}`);
      expect(daily.statusCode, daily.body).toBe(200);
      expect(json<{ items: { opened: number }[] }>(daily).items.reduce((sum, item) => sum + item.opened, 0), query).toBe(ids.length);
    };

    it('not_<filter>: any value but these; a request without a value matches unless none is among them', async () => {
      await expectIds('not_borough=queens', [2, 3, 4]);
      await expectIds('not_borough=queens&not_borough=none', [3, 4]);
      await expectIds('not_borough=none', [1, 3, 4, 5]);
      await expectIds('not_community_board=01%20QUEENS', [2, 3, 5]);
      await expectIds('not_complaint_type=Unknown', [1, 2, 3, 4, 5]);
    });

    it('community_board: equality, none for the requests without one', async () => {
      await expectIds('community_board=01%20QUEENS', [1, 4]);
      await expectIds('community_board=none', [2, 3, 5]);
    });

    it('closed=true|false: closed_at set or not', async () => {
      await expectIds('closed=true', [1, 2, 3, 5]);
      await expectIds('closed=false', [4]);
    });

    it('closed_from inclusive, closed_to exclusive; a request not closed never matches', async () => {
      const closedAt = ROWS[4]?.closed_at as string;
      await expectIds(`closed_from=${closedAt}`, [3, 5]);
      await expectIds(`closed_to=${closedAt}`, [1, 2]);
      await expectIds('closed_from=2025-01-01', [1, 2, 3, 5]);
    });

    it('days_to_close_min and days_to_close_max are inclusive, decimals allowed; a request not closed never matches', async () => {
      await expectIds('days_to_close_min=2', [1, 3, 5]);
      await expectIds('days_to_close_max=2', [1, 2]);
      await expectIds('days_to_close_min=2&days_to_close_max=2', [1]);
      await expectIds('days_to_close_min=1.5&days_to_close_max=1.5', [2]);
      await expectIds('days_to_close_min=5.581', [3]);
      await expectIds('days_to_close_min=0', [1, 2, 3, 5]);
    });

    it('near with radius_m: the great-circle distance, edge included; requests without a location never match', async () => {
      const near = `near=${CENTRE.latitude},${CENTRE.longitude}`;
      await expectIds(`${near}&radius_m=${NORTH_M}`, [1, 2, 3]);
      await expectIds(`${near}&radius_m=${NORTH_M - 0.001}`, [1, 2]);
      await expectIds(`${near}&radius_m=5000`, [1, 2, 3]);
      await expectIds(`near=40.8,-73.9&radius_m=1`, [5]);
    });

    it('near and bbox take coordinates as clients print a double in full (up to 20 fractional digits)', async () => {
      await expectIds(`near=40.80000000000000000001,-73.90000000000001&radius_m=1`, [5]);
      await expectIds('bbox=-73.90000000000001,40.79999999999999,-73.89999999999999,40.80000000000001', [5]);
      expectError(await service.get('/v1/service-requests/count?near=40.800000000000000000001,-73.9&radius_m=1'), 422, 'invalid_request', ['near']);
    });

    it('q: a case-insensitive search over the values of complaint_type, descriptor and location_type; a text no value holds matches nothing', async () => {
      await expectIds('q=POT', [1, 5]);
      await expectIds('q=sidewalk', [2]);
      await expectIds('q=music', [3]);
      await expectIds('q=zzz', []);
      await expectIds('q=pot&not_complaint_type=POTHOLE%20REPAIR', [1]);
    });

    it('a page cursor carries the operators: paged with them, the rows come once each; with other ones the cursor is refused', async () => {
      const first = json<{ items: { id: number }[]; next_cursor: string }>(await service.get('/v1/service-requests?q=pot&limit=1'));
      expect(first.items.map((row) => row.id)).toEqual([1]);
      const second = json<{ items: { id: number }[] }>(await service.get(`/v1/service-requests?q=pot&limit=1&cursor=${first.next_cursor}`));
      expect(second.items.map((row) => row.id)).toEqual([5]);
      const other = await service.get(`/v1/service-requests?q=street&limit=1&cursor=${first.next_cursor}`);
      expectError(other, 422, 'invalid_cursor', ['cursor'], 'The cursor belongs to other filters: start again without a cursor');
    });

    it('radius_m at most 5000: 5000 is answered, 5001 is refused; near and radius_m go together', async () => {
      expect((await service.get('/v1/service-requests/count?near=40.7,-74&radius_m=5000')).statusCode).toBe(200);
      expectError(await service.get('/v1/service-requests/count?near=40.7,-74&radius_m=5001'), 422, 'invalid_request', ['radius_m']);
      expectError(await service.get('/v1/service-requests/count?near=40.7,-74&radius_m=0'), 422, 'invalid_request', ['radius_m']);
      expectError(
        await service.get('/v1/service-requests/count?near=40.7,-74'),
        422,
        'invalid_request',
        ['near', 'radius_m'],
        'The request is not valid: near and radius_m go together: give both or neither',
      );
      expectError(
        await service.get('/v1/stats/weekly?near=91,-74&radius_m=10'),
        422,
        'invalid_request',
        ['near'],
        'The request is not valid: near must be lat,long with a latitude from -90 to 90 and a longitude from -180 to 180',
      );
    });

    it('the example of every filter parameter in the served description is answered 200 as sent (near with radius_m)', async () => {
      const description = json<{ paths: Record<string, { get: { parameters: { name: string; example?: string | number }[] } }> }>(await service.get('/openapi.json'));
      const examples = new Map(description.paths['/v1/service-requests/count']?.get.parameters.flatMap(({ name, example }) => (example === undefined ? [] : [[name, String(example)]])));
      expect([...examples.keys()].sort()).toEqual(['closed', 'days_to_close_max', 'days_to_close_min', 'near', 'q', 'radius_m']);
      const near = `near=${examples.get('near') ?? ''}&radius_m=${examples.get('radius_m') ?? ''}`;
      for (const [name, example] of examples) {
        if (name === 'radius_m') continue;
        const query = name === 'near' ? near : `${name}=${encodeURIComponent(example)}`;
        const response = await service.get(`/v1/service-requests/count?${query}`);
        expect(response.statusCode, `${query}: ${response.body}`).toBe(200);
      }
    });

    it('bounds out of order are refused as created_from and created_to are', async () => {
      expectError(
        await service.get('/v1/facets?field=status&closed_from=2025-01-05&closed_to=2025-01-05'),
        422,
        'invalid_request',
        ['closed_from', 'closed_to'],
        'The request is not valid: closed_from must be before closed_to',
      );
      expectError(
        await service.get('/v1/stats/monthly?days_to_close_min=3&days_to_close_max=2'),
        422,
        'invalid_request',
        ['days_to_close_min', 'days_to_close_max'],
        'The request is not valid: days_to_close_min must be at most days_to_close_max',
      );
      expectError(await service.get('/v1/service-requests?closed_to=2025-02-30'), 422, 'invalid_request', ['closed_to'], 'The request is not valid: closed_to must be a date of the calendar');
      expectError(await service.get('/v1/service-requests?closed=yes'), 422, 'invalid_request', ['closed']);
    });
  });
