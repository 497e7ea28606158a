import { describe, expect, it } from 'vitest';
import { expectError } from '../support/http.js';
import { buildFixtureApp, house, postJson, type HouseBody } from './support.js';
import { appDuringSuite } from '../support/during-suite.js';

/** house-prices.md "Batch request and answer", rules 4 and 5. */
const app = appDuringSuite(() => buildFixtureApp());

const batch = (body: unknown) => postJson(app, '/v1/estimates/batch', body);
const single = (body: unknown) => postJson(app, '/v1/estimates', body);

/** Houses that differ, so that the order of the answers shows. */
function variedHouses(count: number): HouseBody[] {
  return Array.from({ length: count }, (_, index) =>
    house({ sqft_living: 1000 + index * 37, grade: 1 + (index % 13), waterfront: index % 7 === 0, sqft_basement: index % 3 === 0 ? 0 : 300 }),
  );
}

describe('batch sizes', () => {
  it('0 houses gives fields houses', async () => {
    expectError(await batch({ houses: [] }), 422, 'invalid_request', ['houses']);
  });
  it('1 house is answered like a single estimate', async () => {
    const response = await batch({ houses: [house()] });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ estimates: [(await single(house())).json()] });
  });
  it('100 houses are answered in order', async () => {
    const houses = variedHouses(100);
    const response = await batch({ houses });
    expect(response.statusCode).toBe(200);
    const { estimates } = response.json<{ estimates: unknown[] }>();
    expect(estimates).toHaveLength(100);
    const singles = await Promise.all(houses.map(async (one) => (await single(one)).json<unknown>()));
    expect(estimates).toEqual(singles);
  });
  it('101 houses gives fields houses', async () => {
    expectError(await batch({ houses: variedHouses(101) }), 422, 'invalid_request', ['houses']);
  });
  it('houses missing, not an array, or with an unknown field beside it', async () => {
    expectError(await batch({}), 422, 'invalid_request', ['houses']);
    expectError(await batch({ houses: house() }), 422, 'invalid_request', ['houses']);
    expectError(await batch({ houses: [house()], extra: 1 }), 422, 'invalid_request', ['extra']);
  });
});

describe('batch error paths', () => {
  it('an invalid grade in the second house names houses.1.grade', async () => {
    expectError(await batch({ houses: [house(), house({ grade: 14 })] }), 422, 'invalid_request', ['houses.1.grade']);
  });
  it('latitude outside the area in the third house names houses.2.lat', async () => {
    expectError(await batch({ houses: [house(), house(), house({ lat: 46 })] }), 422, 'outside_model_area', ['houses.2.lat']);
  });
  it('every house is checked and every offending path reported, cross-field rules included', async () => {
    const houses = [house({ bedrooms: 12 }), house(), house({ sqft_basement: 5000 }), house({ extra: 1, yr_built: 1990, yr_renovated: 1980 }), 'x'];
    expectError(await batch({ houses }), 422, 'invalid_request', [
      'houses.0.bedrooms',
      'houses.3.extra',
      'houses.4',
      'houses.2.sqft_basement',
      'houses.3.yr_renovated',
    ]);
  });
  it('a missing field in a house names its path', async () => {
    const { view: _view, ...withoutView } = house();
    expectError(await batch({ houses: [house(), withoutView] }), 422, 'invalid_request', ['houses.1.view']);
  });
  it('outside_model_area names every coordinate outside, in every house', async () => {
    const houses = [house({ long: -120 }), house(), house({ lat: 48, long: -125 })];
    expectError(await batch({ houses }), 422, 'outside_model_area', ['houses.0.long', 'houses.2.lat', 'houses.2.long']);
  });
  it('a batch with invalid houses and houses outside the area answers invalid_request, naming only the invalid fields', async () => {
    const houses = [house({ lat: 46 }), house({ grade: 0 })];
    expectError(await batch({ houses }), 422, 'invalid_request', ['houses.1.grade']);
  });
  it('101 houses with an invalid one is refused on its size alone: fields houses, no house looked at (the hostile-input decisions)', async () => {
    const houses = variedHouses(101);
    houses[5] = house({ floors: 1.25 });
    expectError(await batch({ houses }), 422, 'invalid_request', ['houses'], 'The request is not valid: houses must hold from 1 to 100 items');
  });
});
