import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PlatformApp } from '../../src/platform/platform-app.js';
import { expectError } from '../support/http.js';
import { HOUSES, REQUESTS, TICKETS, type ServiceUnderTest } from './services.js';

/**
 * The hostile-input decisions: messages in the contracts' words. No ajv wording reaches a client, whatever
 * keyword fires; query parameters are called parameters; `__proto__` and `constructor` keys are
 * named as the offending field; year 0000 follows the proleptic Gregorian calendar; error.fields is
 * capped (docs/decisions.md, "Messages in the contracts' words", "Size of an error answer").
 */
const KEY = 'contract-wording-key';
const headers = { 'content-type': 'application/json', 'x-api-key': KEY };

/** Phrases of ajv's own messages (ajv 8, English). */
const AJV_WORDING = /must NOT|equal to constant|must match|must have required|must be (string|integer|number|boolean|object|array|null)\b|must be (<|>|<=|>=) |must pass|must be equal to one of|must be multiple of|allowed values|additional properties|must match format/;

interface Answer {
  statusCode: number;
  body: string;
  headers: Record<string, unknown>;
}

function errorOf(response: Answer): { code: string; message: string; fields: string[] } {
  return (JSON.parse(response.body) as { error: { code: string; message: string; fields: string[] } }).error;
}

function expectContractWords(response: Answer): void {
  expect(response.statusCode, response.body).toBe(422);
  expect(errorOf(response).message, response.body).toMatch(/^The request is not valid: /);
  expect(errorOf(response).message).not.toMatch(AJV_WORDING);
}

function withService(service: ServiceUnderTest, body: (app: () => PlatformApp) => void): void {
  describe(service.name, () => {
    let app: PlatformApp;
    let cleanup: () => Promise<void>;
    beforeAll(async () => {
      if (service.available) ({ app, cleanup } = await service.build(KEY));
    });
    afterAll(async () => {
      if (!service.available) return;
      await app.close();
      await cleanup();
    });
    if (service.available) body(() => app);
  });
}

/** Wrong values of every kind, to make each keyword of a field's schema fire. */
const WRONG_VALUES: unknown[] = ['', 'x', 'x'.repeat(5001), -1e9, 1e9, 0.3, 1.25, true, null, [], [1], {}, { a: 1 }];

withService(TICKETS, (app) => {
  const classify = (payload: unknown) => app().inject({ method: 'POST', url: '/v1/classify', headers, payload: JSON.stringify(payload) });

  it('each keyword of Ticket has its own words', async () => {
    const cases: [unknown, string[], string][] = [
      [{ subject: '' }, ['subject'], 'subject must not be empty'],
      [{ subject: 'x'.repeat(121) }, ['subject'], 'subject must have at most 120 characters'],
      [{ subject: 'ok', body: 'x'.repeat(5001) }, ['body'], 'body must have at most 5000 characters'],
      [{ subject: 3 }, ['subject'], 'subject must be a string'],
      [{}, ['subject'], 'subject is required'],
      [{ subject: 'ok', priority: 1 }, ['priority'], 'priority is not an allowed field'],
      [[], ['body'], 'body must be an object'],
    ];
    for (const [payload, fields, problem] of cases) {
      expectError(await classify(payload), 422, 'invalid_request', fields, `The request is not valid: ${problem}`);
    }
  });

  it('no ajv wording for any wrong value of any field', async () => {
    for (const value of WRONG_VALUES.filter((wrong) => wrong !== 'x')) {
      expectContractWords(await classify({ subject: value, body: value }));
      expectContractWords(await classify(value));
    }
  });

  it('a __proto__ or constructor key is the offending field, also written with escapes', async () => {
    const send = (payload: string) => app().inject({ method: 'POST', url: '/v1/classify', headers, payload });
    expectError(await send('{"subject":"x","__proto__":{"admin":true}}'), 422, 'invalid_request', ['__proto__'], 'The request is not valid: __proto__ is not an allowed field');
    expectError(await send('{"subject":"x","constructor":{"prototype":{"admin":true}}}'), 422, 'invalid_request', ['constructor']);
    expectError(await send('{"subject":"x","__pro\\u0074o__":{}}'), 422, 'invalid_request', ['__proto__']);
  });

  it('error.fields holds the first 100 names, the message says how many more; long names are cut', async () => {
    const unknown = Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`field_${i}`, 0]));
    const response = await classify(unknown);
    const error = errorOf(response);
    expect(error.fields).toHaveLength(100);
    expect(error.fields.slice(0, 2)).toEqual(['subject', 'field_0']);
    expect(error.message).toMatch(/; field_98 is not an allowed field \(and 401 more fields\)$/);
    const long = 'k'.repeat(5000);
    const cut = errorOf(await classify({ subject: 'ok', [long]: 1 }));
    expect(cut.fields).toEqual([`${'k'.repeat(40)}…`]);
    expect(cut.message).toBe(`The request is not valid: ${'k'.repeat(40)}… is not an allowed field`);
  });
});

withService(HOUSES, (app) => {
  const valid = HOUSES.json!.validBody;
  const estimate = (payload: unknown) => app().inject({ method: 'POST', url: '/v1/estimates', headers, payload: JSON.stringify(payload) });
  const batch = (payload: unknown) => app().inject({ method: 'POST', url: '/v1/estimates/batch', headers, payload: JSON.stringify(payload) });

  it('each keyword of House and the batch has its own words', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ bedrooms: 12 }, 'bedrooms must be at most 11'],
      [{ sqft_living: 99 }, 'sqft_living must be at least 100'],
      [{ bathrooms: 0.3 }, 'bathrooms must be a multiple of 0.25'],
      [{ bedrooms: 2.5 }, 'bedrooms must be an integer'],
      [{ sqft_lot: '7242' }, 'sqft_lot must be a number'],
      [{ waterfront: 1 }, 'waterfront must be true or false'],
      [{ yr_renovated: 1850 }, 'yr_renovated must be 0 or an integer from 1900 to 2015'],
      [{ yr_renovated: 'never' }, 'yr_renovated must be 0 or an integer from 1900 to 2015'],
    ];
    for (const [change, problem] of cases) {
      const field = Object.keys(change)[0]!;
      expectError(await estimate({ ...valid, ...change }), 422, 'invalid_request', [field], `The request is not valid: ${problem}`);
    }
    expectError(await batch({ houses: [] }), 422, 'invalid_request', ['houses'], 'The request is not valid: houses must hold from 1 to 100 items');
    expectError(await batch({ houses: {} }), 422, 'invalid_request', ['houses'], 'The request is not valid: houses must be an array');
  });

  it('no ajv wording for any wrong value of any field, single or in a batch', async () => {
    for (const value of WRONG_VALUES.filter((wrong) => !(typeof wrong === 'string' && wrong.length > 100))) {
      const house = Object.fromEntries(Object.keys(valid).map((field) => [field, value]));
      expectContractWords(await estimate(house));
      expectContractWords(await batch({ houses: [house] }));
      expectContractWords(await batch({ houses: value }));
    }
  });

  it('outside_model_area of 100 houses names the first 100 coordinates and says how many more', async () => {
    const response = await batch({ houses: Array.from({ length: 100 }, () => ({ ...valid, lat: 10, long: 10 })) });
    const error = errorOf(response);
    expect(response.statusCode).toBe(422);
    expect(error.code).toBe('outside_model_area');
    expect(error.fields).toHaveLength(100);
    expect(error.fields.slice(0, 3)).toEqual(['houses.0.lat', 'houses.0.long', 'houses.1.lat']);
    expect(error.message).toMatch(/houses\.49\.long \(and 100 more fields\)$/);
  });

  it('a constructor key in a house of a batch is named by its path', async () => {
    const response = await app().inject({
      method: 'POST',
      url: '/v1/estimates/batch',
      headers,
      payload: `{"houses":[${JSON.stringify(valid)},{"constructor":{"prototype":{"polluted":true}}}]}`,
    });
    expectError(response, 422, 'invalid_request', ['houses.1.constructor'], 'The request is not valid: houses.1.constructor is not an allowed field');
  });
});

withService(REQUESTS, (app) => {
  const get = (url: string) => app().inject({ method: 'GET', url, headers: { 'x-api-key': KEY } });

  it('query parameters are parameters, in the contracts\' words', async () => {
    const cases: [string, string[], string][] = [
      ['/v1/service-requests?borough=Queens', ['borough'], 'borough must be one of bronx, brooklyn, manhattan, queens, staten_island, none'],
      // a repeated filter means any of its values (the dashboard API decisions): a wrong second value still names the parameter
      ['/v1/service-requests?borough=queens&borough=Bronx', ['borough'], 'borough must be one of bronx, brooklyn, manhattan, queens, staten_island, none'],
      [`/v1/service-requests?${'borough=queens&'.repeat(51)}`, ['borough'], 'borough must hold from 1 to 50 items'],
      ['/v1/service-requests?created_from=2025-01-01&created_from=2025-01-02', ['created_from'], 'created_from is given more than once'],
      ['/v1/service-requests?limit=5&limit=6', ['limit'], 'limit is given more than once'],
      ['/v1/service-requests?colour=red', ['colour'], 'colour is not an allowed parameter'],
      ['/v1/service-requests?complaint_type=', ['complaint_type'], 'complaint_type must not be empty'],
      ['/v1/service-requests?limit=0', ['limit'], 'limit must be at least 1'],
      ['/v1/service-requests?limit=1001', ['limit'], 'limit must be at most 1000'],
      ['/v1/service-requests?created_from=yesterday', ['created_from'], 'created_from is not in the expected format'],
      ['/v1/service-requests/1?x=1', ['x'], 'x is not an allowed parameter'],
      ['/v1/service-requests/abc', ['id'], 'id must be an integer'],
      ['/v1/stats/daily?created_to=2025-02-01&created_to=2025-02-01', ['created_to'], 'created_to is given more than once'],
      ['/v1/service-requests?__proto__=x', ['__proto__'], '__proto__ is not an allowed parameter'],
      ['/v1/dataset?constructor=x', ['constructor'], 'constructor is not an allowed parameter'],
    ];
    for (const [url, fields, problem] of cases) {
      expectError(await get(url), 422, 'invalid_request', fields, `The request is not valid: ${problem}`);
    }
    const many = Array.from({ length: 150 }, (_, i) => `p${i}=1`).join('&');
    expect(errorOf(await get(`/v1/dataset?${many}`)).message).toMatch(/\(and 50 more parameters\)$/);
  });

  it('no ajv wording for any wrong value of any parameter', async () => {
    const values = ['', 'x', 'Queens', '-1', '1.5', '99999999999999999999', '2025-13-01', '0000-00-00', '%00x'.slice(1), 'a'.repeat(300)];
    for (const name of ['borough', 'complaint_type', 'status', 'created_from', 'created_to', 'limit', 'cursor']) {
      for (const value of values) {
        const response = await get(`/v1/service-requests?${name}=${encodeURIComponent(value)}`);
        if (response.statusCode === 422 && errorOf(response).code === 'invalid_request') expectContractWords(response);
      }
    }
  });

  it('year 0000 follows the proleptic Gregorian calendar', async () => {
    expect((await get('/v1/service-requests?created_from=0000-02-29&limit=1')).statusCode).toBe(200);
    expect((await get('/v1/service-requests?created_from=2000-02-29&limit=1')).statusCode).toBe(200);
    for (const notADate of ['0100-02-29', '1900-02-29', '0001-02-29', '0000-04-31']) {
      expectError(await get(`/v1/service-requests?created_from=${notADate}`), 422, 'invalid_request', ['created_from'], 'The request is not valid: created_from must be a date of the calendar');
    }
  });
});
