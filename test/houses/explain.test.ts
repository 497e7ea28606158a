import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PlatformApp } from '../../src/platform/platform-app.js';
import { HOUSE_FIELDS } from '../../src/services/houses/house.js';
import type { ExplainedEstimate } from '../../src/services/houses/schemas.js';
import { expectError } from '../support/http.js';
import { buildFixtureApp, house, houseWithout, postJson, type HouseBody } from './support.js';

/**
 * POST /v1/estimates/explain and /v1/estimates/explain/batch (the explained-estimates decisions; docs/houses.md, "Explanations"
 * and "Comparable sales"): the same checks and Estimate as POST /v1/estimates and its batch, plus the
 * explanation and the comparable sales. On the fixture model (test/fixtures/houses/tiny-model.json).
 */
let app: PlatformApp;
let keyed: PlatformApp;
let noModel: PlatformApp;
beforeAll(async () => {
  app = await buildFixtureApp();
  keyed = await buildFixtureApp({ API_KEY: 'explain-key-0123456' });
  noModel = await buildFixtureApp({ MODEL_PATH: '/nonexistent/model.json' });
});
afterAll(async () => {
  await Promise.all([app.close(), keyed.close(), noModel.close()]);
});

const explain = (body: unknown, to: PlatformApp = app) => postJson(to, '/v1/estimates/explain', body);
const explainBatch = (body: unknown, to: PlatformApp = app) => postJson(to, '/v1/estimates/explain/batch', body);

async function explained(body: HouseBody): Promise<ExplainedEstimate> {
  const response = await explain(body);
  expect(response.statusCode, response.body).toBe(200);
  return response.json<ExplainedEstimate>();
}

describe('POST /v1/estimates/explain answers', () => {
  it('the same Estimate as POST /v1/estimates, plus explanation and comparable_sales', async () => {
    for (const one of [house(), house({ grade: 11, waterfront: true }), house({ yr_renovated: 0 })]) {
      const { explanation, comparable_sales, ...estimate } = await explained(one);
      expect(estimate).toEqual((await postJson(app, '/v1/estimates', one)).json());
      expect(explanation.fields).toHaveLength(16);
      expect(comparable_sales.length).toBeGreaterThan(0);
    }
  });

  it('additivity: baseline + the 16 contributions = raw, and exp(raw) x sqft_living is the estimate', async () => {
    for (const one of [house(), house({ grade: 11, waterfront: true, sqft_basement: 0 }), house({ yr_renovated: 2001, sqft_living: 4000 })]) {
      const answer = await explained(one);
      const { baseline, raw, fields } = answer.explanation;
      const sum = fields.reduce((total, field) => total + field.contribution, baseline);
      expect(Math.abs(sum - raw)).toBeLessThanOrEqual(1e-12);
      expect(Math.round(Math.exp(raw) * Number(one.sqft_living))).toBe(answer.estimate_usd);
    }
  });

  it('price factors are exp(contribution); starting_usd x their product is the estimate', async () => {
    const answer = await explained(house({ grade: 10, waterfront: true }));
    const { fields, starting_usd, baseline_usd_per_sqft, baseline } = answer.explanation;
    expect(baseline_usd_per_sqft).toBe(Math.exp(baseline));
    expect(starting_usd).toBe(Math.exp(baseline) * 2170);
    for (const field of fields) expect(field.price_factor).toBe(Math.exp(field.contribution));
    const product = fields.reduce((p, field) => p * field.price_factor, starting_usd);
    expect(Math.abs(product - answer.estimate_usd)).toBeLessThan(1);
    expect(answer.explanation.sqft_living_outside_trees).toMatch(/price per square foot.*times sqft_living \(2170\)/);
  });

  it('names every field once with its value, largest effect first', async () => {
    const one = house({ grade: 10, waterfront: true });
    const { fields } = (await explained(one)).explanation;
    expect(fields.map((f) => f.field).sort()).toEqual([...HOUSE_FIELDS].sort());
    for (const field of fields) expect(field.value).toBe(one[field.field]);
    const sizes = fields.map((f) => Math.abs(f.contribution));
    expect(sizes).toEqual([...sizes].sort((a, b) => b - a));
    // equal effects (zero here: the fixture's trees never split on bedrooms or lat) keep the contract order
    const zeros = fields.filter((f) => f.contribution === 0).map((f) => f.field);
    expect(zeros).toEqual(HOUSE_FIELDS.filter((f) => zeros.includes(f)));
  });

  it('derived features go back to their fields: sqft_above halves to sqft_living and sqft_basement, yr_last_work to the later year', async () => {
    // The fixture's trees split on grade, waterfront, sqft_above (> 3000) and yr_last_work (> 1990.5).
    const big = (await explained(house({ sqft_living: 4000, sqft_basement: 0, grade: 7, yr_renovated: 0 }))).explanation.fields;
    const of = (fields: typeof big, name: string) => fields.find((f) => f.field === name)?.contribution ?? NaN;
    expect(of(big, 'sqft_living')).toBe(of(big, 'sqft_basement'));
    expect(of(big, 'sqft_living')).not.toBe(0);
    expect(of(big, 'yr_renovated')).toBe(0); // never renovated: yr_last_work is yr_built
    const renovated = (await explained(house({ yr_built: 1951, yr_renovated: 2001 }))).explanation.fields;
    expect(of(renovated, 'yr_built')).toBe(0);
    expect(of(renovated, 'yr_renovated')).not.toBe(0);
  });
});

describe('comparable sales', () => {
  it('five training sales, nearest first, of similar size first, each with date, price, price per sq ft, distance and differing fields', async () => {
    const sales = (await explained(house({ sqft_living: 2000, sqft_basement: 0, lat: 47.48, long: -122.235 }))).comparable_sales;
    expect(sales).toHaveLength(5);
    const similar = sales.filter((s) => s.similar_size);
    for (const sale of similar) expect(sale.sqft_living / 2000).toBeGreaterThanOrEqual(1 / 1.25);
    for (const sale of similar) expect(sale.sqft_living / 2000).toBeLessThanOrEqual(1.25);
    expect(sales.slice(0, similar.length).every((s) => s.similar_size)).toBe(true);
    const distances = similar.map((s) => s.distance_km);
    expect(distances).toEqual([...distances].sort((a, b) => a - b));
    for (const sale of sales) {
      expect(sale.date).toMatch(/^2014-(06-01|09-15)$/);
      expect(sale.usd_per_sqft).toBe(Math.round((sale.price_usd / sale.sqft_living) * 100) / 100);
      expect(sale.differing_fields.length).toBeLessThanOrEqual(3);
      expect(sale.differing_fields.map((f) => f.field)).not.toContain('lat');
    }
    // The fixture sale at the house's own place (47.48, -122.235, 2050 sq ft) comes first, at 0 km.
    expect(sales[0]).toMatchObject({ distance_km: 0, sqft_living: 2050, price_usd: 375_000 });
  });

  it('are deterministic: the same house gives the same sales, byte for byte', async () => {
    const a = (await explain(house())).body;
    const b = (await explain(house())).body;
    expect(a).toBe(b);
  });

  it('a house of no similar size is given the sales nearest in size', async () => {
    const sales = (await explained(house({ sqft_living: 9000, sqft_basement: 0 }))).comparable_sales;
    expect(sales).toHaveLength(5);
    expect(sales.every((s) => !s.similar_size)).toBe(true);
    expect(sales.map((s) => s.sqft_living)).toEqual([2500, 2350, 2200, 2050, 1900]);
  });
});

describe('POST /v1/estimates/explain refuses like POST /v1/estimates', () => {
  it('422 invalid_request naming every offending field (missing, unknown, wrong type, cross-field)', async () => {
    expectError(await explain(houseWithout('grade')), 422, 'invalid_request', ['grade']);
    expectError(await explain({ ...house(), zipcode: 98103 }), 422, 'invalid_request', ['zipcode']);
    expectError(await explain(house({ bedrooms: 12, waterfront: 1 })), 422, 'invalid_request', ['bedrooms', 'waterfront']);
    expectError(await explain(house({ sqft_basement: 2170 })), 422, 'invalid_request', ['sqft_basement']);
    expectError(await explain(house({ yr_renovated: 1900 })), 422, 'invalid_request', ['yr_renovated']);
  });
  it('422 outside_model_area naming lat, long or both', async () => {
    expectError(await explain(house({ lat: 46 })), 422, 'outside_model_area', ['lat']);
    expectError(await explain(house({ lat: 46, long: -120 })), 422, 'outside_model_area', ['lat', 'long']);
  });
  it('413 body_too_large before validation', async () => {
    expectError(await explain({ ...house(), padding: 'x'.repeat(70_000) }), 413, 'body_too_large', []);
  });
  it('401 without or with a wrong key, before validation; 200 with the key', async () => {
    expectError(await explain(house(), keyed), 401, 'unauthorized', []);
    expectError(await postJson(keyed, '/v1/estimates/explain', house(), { 'x-api-key': 'nope' }), 401, 'unauthorized', []);
    expectError(await explain({ bad: true }, keyed), 401, 'unauthorized', []);
    expect((await postJson(keyed, '/v1/estimates/explain', house(), { 'x-api-key': 'explain-key-0123456' })).statusCode).toBe(200);
    expectError(await explainBatch({ houses: [house()] }, keyed), 401, 'unauthorized', []);
  });
  it('503 model_unavailable without a model, after validation', async () => {
    expectError(await explain(house(), noModel), 503, 'model_unavailable', []);
    expectError(await explainBatch({ houses: [house()] }, noModel), 503, 'model_unavailable', []);
    expectError(await explain(house({ grade: 14 }), noModel), 422, 'invalid_request', ['grade']);
  });
});

describe('POST /v1/estimates/explain/batch', () => {
  it('answers 1 to 100 houses in order, each as the single explanation', async () => {
    const houses = Array.from({ length: 100 }, (_, i) => house({ sqft_living: 1000 + i * 37, grade: 1 + (i % 13), waterfront: i % 7 === 0 }));
    const response = await explainBatch({ houses });
    expect(response.statusCode).toBe(200);
    const { estimates } = response.json<{ estimates: unknown[] }>();
    expect(estimates).toHaveLength(100);
    for (const index of [0, 1, 42, 99]) expect(estimates[index]).toEqual((await explain(houses[index])).json());
  });
  it('0 or 101 houses give fields houses', async () => {
    expectError(await explainBatch({ houses: [] }), 422, 'invalid_request', ['houses']);
    expectError(await explainBatch({ houses: Array.from({ length: 101 }, () => house()) }), 422, 'invalid_request', ['houses']);
  });
  it('a batch of 64 KiB of empty objects is refused on its size alone, quickly: fields houses, as the estimate batch (the hostile-input decisions)', async () => {
    const payload = `{"houses":[${Array.from({ length: Math.floor((64 * 1024 - 14) / 3) }, () => '{}').join(',')}]}`;
    expect(Buffer.byteLength(payload)).toBeLessThanOrEqual(64 * 1024);
    const started = process.cpuUsage();
    const response = await app.inject({ method: 'POST', url: '/v1/estimates/explain/batch', headers: { 'content-type': 'application/json' }, payload });
    const used = process.cpuUsage(started);
    expectError(response, 422, 'invalid_request', ['houses'], 'The request is not valid: houses must hold from 1 to 100 items');
    // Generous bound on a loaded machine (test/reliability/request-cost.machine.test.ts measures every worst body).
    expect((used.user + used.system) / 1000).toBeLessThan(200);
  });
  it('101 houses with an invalid one is refused on its size alone: fields houses, no house looked at (the hostile-input decisions)', async () => {
    const houses = Array.from({ length: 101 }, () => house());
    houses[5] = house({ floors: 1.25 });
    expectError(await explainBatch({ houses }), 422, 'invalid_request', ['houses'], 'The request is not valid: houses must hold from 1 to 100 items');
  });
  it('field paths are houses.<index>.<field>, every house checked; outside_model_area only when all are otherwise valid', async () => {
    expectError(await explainBatch({ houses: [house(), house({ grade: 14 })] }), 422, 'invalid_request', ['houses.1.grade']);
    expectError(await explainBatch({ houses: [house(), house(), house({ lat: 46 })] }), 422, 'outside_model_area', ['houses.2.lat']);
    expectError(await explainBatch({ houses: [house({ lat: 46 }), house({ bedrooms: 12 })] }), 422, 'invalid_request', ['houses.1.bedrooms']);
    expectError(await explainBatch({ houses: [house({ sqft_basement: 5000 }), houseWithout('view')] }), 422, 'invalid_request', [
      'houses.1.view',
      'houses.0.sqft_basement',
    ]);
  });
});
