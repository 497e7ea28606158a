import { describe, expect, it } from 'vitest';
import { expectError } from '../support/http.js';
import { buildFixtureApp, house, houseWithout, postJson, VALID_HOUSE, type HouseBody } from './support.js';
import { appDuringSuite } from '../support/during-suite.js';

/** house-prices.md "House" and the decided bounds (docs/houses.md): both sides of every bound. */
const app = appDuringSuite(() => buildFixtureApp());

const estimate = (body: unknown) => postJson(app, '/v1/estimates', body);

async function expectAccepted(body: HouseBody): Promise<void> {
  const response = await estimate(body);
  expect(response.statusCode, response.body).toBe(200);
}

async function expectRefused(body: unknown, fields: string[]): Promise<void> {
  expectError(await estimate(body), 422, 'invalid_request', fields);
}

// [field, accepted values, refused values]; each case changes one field of a valid house
// (plus what it needs to stay otherwise valid).
const BOUNDS: [string, HouseBody[], HouseBody[]][] = [
  ['bedrooms', [{ bedrooms: 0 }, { bedrooms: 11 }], [{ bedrooms: -1 }, { bedrooms: 12 }, { bedrooms: 2.5 }]],
  [
    'bathrooms',
    [{ bathrooms: 0 }, { bathrooms: 0.25 }, { bathrooms: 2.25 }, { bathrooms: 10 }],
    [{ bathrooms: -0.25 }, { bathrooms: 0.3 }, { bathrooms: 2.1 }, { bathrooms: 10.25 }],
  ],
  ['floors', [{ floors: 1 }, { floors: 1.5 }, { floors: 3.5 }, { floors: 4 }], [{ floors: 0.5 }, { floors: 1.25 }, { floors: 4.5 }, { floors: 0 }]],
  ['sqft_living', [{ sqft_living: 100, sqft_basement: 0 }, { sqft_living: 14000 }, { sqft_living: 2170.5 }], [{ sqft_living: 99, sqft_basement: 0 }, { sqft_living: 14001 }]],
  ['sqft_basement', [{ sqft_basement: 0 }, { sqft_basement: 2169 }, { sqft_basement: 2169.9 }], [{ sqft_basement: -1 }, { sqft_basement: 2170 }, { sqft_basement: 2171 }]],
  ['sqft_lot', [{ sqft_lot: 100 }, { sqft_lot: 5_000_000 }], [{ sqft_lot: 99 }, { sqft_lot: 5_000_001 }]],
  ['waterfront', [{ waterfront: true }, { waterfront: false }], [{ waterfront: 1 }, { waterfront: 0 }, { waterfront: 'true' }, { waterfront: null }]],
  ['view', [{ view: 0 }, { view: 4 }], [{ view: -1 }, { view: 5 }, { view: 1.5 }]],
  ['condition', [{ condition: 1 }, { condition: 5 }], [{ condition: 0 }, { condition: 6 }, { condition: 3.5 }]],
  ['grade', [{ grade: 1 }, { grade: 13 }], [{ grade: 0 }, { grade: 14 }, { grade: 7.5 }]],
  ['yr_built', [{ yr_built: 1900 }, { yr_built: 2015, yr_renovated: 0 }], [{ yr_built: 1899 }, { yr_built: 2016, yr_renovated: 0 }, { yr_built: 1951.5 }]],
  [
    'yr_renovated',
    [{ yr_renovated: 0 }, { yr_renovated: 1951 }, { yr_renovated: 2015 }, { yr_built: 1900, yr_renovated: 1900 }],
    [{ yr_renovated: -1 }, { yr_renovated: 1 }, { yr_renovated: 1899 }, { yr_renovated: 1950 }, { yr_renovated: 2016 }, { yr_renovated: 1991.5 }],
  ],
  ['lat', [{ lat: 47.5 }], [{ lat: '47.5' }, { lat: null }, { lat: -90.5 }, { lat: 90.5 }]],
  ['long', [{ long: -122.2 }], [{ long: '-122.2' }, { long: true }, { long: -180.5 }, { long: 180.5 }]],
  ['sqft_living15', [{ sqft_living15: 100 }, { sqft_living15: 14000 }], [{ sqft_living15: 99 }, { sqft_living15: 14001 }]],
  ['sqft_lot15', [{ sqft_lot15: 100 }, { sqft_lot15: 5_000_000 }], [{ sqft_lot15: 99 }, { sqft_lot15: 5_000_001 }]],
];

describe('field constraints: both sides of every bound', () => {
  for (const [field, accepted, refused] of BOUNDS) {
    for (const changes of accepted) {
      it(`accepts ${JSON.stringify(changes)}`, async () => {
        await expectAccepted(house(changes));
      });
    }
    for (const changes of refused) {
      it(`refuses ${JSON.stringify(changes)} naming ${field}`, async () => {
        await expectRefused(house(changes), [field]);
      });
    }
  }
});

describe('wrong JSON types are refused, never converted', () => {
  it('a string for a number', async () => {
    await expectRefused(house({ sqft_living: '2170' }), ['sqft_living']);
  });
  it('a number for a boolean', async () => {
    await expectRefused(house({ waterfront: 1 }), ['waterfront']);
  });
  it('a fraction for an integer', async () => {
    await expectRefused(house({ bedrooms: 2.5 }), ['bedrooms']);
  });
  it('a string for an integer', async () => {
    await expectRefused(house({ grade: '7' }), ['grade']);
  });
  it('an object, an array and null for numbers', async () => {
    await expectRefused(house({ bathrooms: {}, floors: [2], sqft_lot: null }), ['bathrooms', 'floors', 'sqft_lot']);
  });
});

describe('required and unknown fields', () => {
  for (const field of Object.keys(VALID_HOUSE)) {
    it(`${field} is required`, async () => {
      await expectRefused(houseWithout(field), [field]);
    });
  }
  it('an unknown field is refused', async () => {
    await expectRefused(house({ zipcode: 98178 }), ['zipcode']);
  });
  it('a missing and an unknown field are listed together', async () => {
    await expectRefused({ ...houseWithout('grade'), price: 1 }, ['grade', 'price']);
  });
  it('an empty object lists all 16 fields', async () => {
    await expectRefused({}, Object.keys(VALID_HOUSE));
  });
  it('every offending field is listed at once', async () => {
    const response = await estimate({ ...houseWithout('view'), bedrooms: 12, waterfront: 'no', extra: true });
    expectError(response, 422, 'invalid_request', ['view', 'extra', 'bedrooms', 'waterfront']);
  });
  it('a body that is not an object names body', async () => {
    await expectRefused([VALID_HOUSE], ['body']);
  });
  it('a body that is not JSON names body', async () => {
    const response = await app.inject({ method: 'POST', url: '/v1/estimates', headers: { 'content-type': 'application/json' }, payload: '{"bedrooms": 3,' });
    expectError(response, 422, 'invalid_request', ['body']);
  });
});

describe('non-finite numbers', () => {
  it('1e400 (Infinity after parsing) is invalid_request, not outside_model_area', async () => {
    const body = JSON.stringify(house({ lat: 123456 })).replace('123456', '1e400');
    const response = await app.inject({ method: 'POST', url: '/v1/estimates', headers: { 'content-type': 'application/json' }, payload: body });
    expectError(response, 422, 'invalid_request', ['lat']);
    const basement = JSON.stringify(house({ sqft_basement: 123456 })).replace('123456', '1e400');
    const second = await app.inject({ method: 'POST', url: '/v1/estimates', headers: { 'content-type': 'application/json' }, payload: basement });
    expectError(second, 422, 'invalid_request', ['sqft_basement']);
  });
});

describe('cross-field rules', () => {
  it('sqft_basement equal to sqft_living is refused with fields sqft_basement', async () => {
    const response = await estimate(house({ sqft_living: 1500, sqft_basement: 1500 }));
    expectError(response, 422, 'invalid_request', ['sqft_basement'], 'The request is not valid: sqft_basement must be smaller than sqft_living');
  });
  it('yr_renovated before yr_built is refused with fields yr_renovated', async () => {
    await expectRefused(house({ yr_built: 1960, yr_renovated: 1959 }), ['yr_renovated']);
  });
  it('yr_renovated equal to yr_built is accepted', async () => {
    await expectAccepted(house({ yr_built: 1960, yr_renovated: 1960 }));
  });
  it('schema errors and cross-field errors come in one answer', async () => {
    await expectRefused(house({ grade: 14, extra: 1, sqft_basement: 5000, yr_built: 2000, yr_renovated: 1990 }), [
      'extra',
      'grade',
      'sqft_basement',
      'yr_renovated',
    ]);
  });
  it('a cross-field rule is not checked when a field it reads is itself invalid', async () => {
    await expectRefused(house({ sqft_living: 'big', sqft_basement: 5000 }), ['sqft_living']);
    await expectRefused(house({ yr_built: 1800, yr_renovated: 1950 }), ['yr_built']);
  });
});
