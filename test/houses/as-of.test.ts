import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PlatformApp } from '../../src/platform/platform-app.js';
import { createPriceLevels } from '../../src/services/houses/model/price-level.js';
import type { ModelFile } from '../../src/services/houses/model/model-file.js';
import type { Estimate, ExplainedEstimate } from '../../src/services/houses/schemas.js';
import { expectError } from '../support/http.js';
import { buildFixtureApp, house, postJson } from './support.js';

/**
 * The as_of query parameter of the estimate and explain routes (docs/houses.md, "Prices as of a
 * month"): the estimate at that month's price level. On the fixture model, whose levels run from
 * -0.09 (2014-05) by 0.01 a month to 0 (2015-02, prices_as_of); the last three months' trend is
 * (0 - -0.03) / 3 a month, carried on to 2015-05 at most.
 */
let app: PlatformApp;
let noModel: PlatformApp;
beforeAll(async () => {
  app = await buildFixtureApp();
  noModel = await buildFixtureApp({ MODEL_PATH: '/nonexistent/model.json' });
});
afterAll(async () => {
  await Promise.all([app.close(), noModel.close()]);
});

const RANGE_MESSAGE = "The request is not valid: as_of must be a month from 2014-05 to 2015-05 (the model's data run from 2014-05 to 2015-02)";
const TREND = (0 - -0.03) / 3;

/** VALID_HOUSE on the fixture's trees (grade 7: -0.1, last work 1991: +0.03) at a price level, as the evaluator sums. */
function dollarsAt(level: number): number {
  let raw = 0;
  raw += 5.52 + level;
  raw += -0.1;
  raw += 0;
  raw += 0;
  raw += 0.03;
  return Math.exp(raw) * 2170;
}

async function estimateAsOf(asOf: string, path = '/v1/estimates'): Promise<Estimate> {
  const response = await postJson(app, `${path}?as_of=${asOf}`, house());
  expect(response.statusCode, response.body).toBe(200);
  return response.json<Estimate>();
}

describe('as_of inside the data', () => {
  it('without as_of the prices are as of the model prices_as_of, at its level', async () => {
    const response = await postJson(app, '/v1/estimates', house());
    expect(response.json()).toMatchObject({ estimate_usd: Math.round(dollarsAt(0)), prices_as_of: '2015-02-28', warnings: [] });
  });
  it('the first training month (2014-05) answers at its level, prices as of its last day', async () => {
    expect(await estimateAsOf('2014-05')).toMatchObject({ estimate_usd: Math.round(dollarsAt(-0.09)), prices_as_of: '2014-05-31', warnings: [] });
  });
  it('the last month of the data (2015-02) is the answer without as_of', async () => {
    expect(await estimateAsOf('2015-02')).toEqual((await postJson(app, '/v1/estimates', house())).json());
  });
});

describe('as_of past the data', () => {
  it('+1 month (2015-03) carries the trend on once and warns extrapolated_price_level', async () => {
    expect(await estimateAsOf('2015-03')).toMatchObject({
      estimate_usd: Math.round(dollarsAt(0 + 1 * TREND)),
      prices_as_of: '2015-03-31',
      warnings: [
        {
          code: 'extrapolated_price_level',
          fields: [],
          message: "Prices as of 2015-03-31, 1 month past the model's data: the price level of 2015-03 carries on the last three months' trend, it was not measured",
        },
      ],
    });
  });
  it('+3 months (2015-05), the last month allowed', async () => {
    const answer = await estimateAsOf('2015-05');
    expect(answer).toMatchObject({ estimate_usd: Math.round(dollarsAt(0 + 3 * TREND)), prices_as_of: '2015-05-31' });
    expect(answer.warnings.map((w) => w.code)).toEqual(['extrapolated_price_level']);
    expect(answer.warnings[0]?.message).toMatch(/^Prices as of 2015-05-31, 3 months past the model's data/);
  });
  it('+4 months (2015-06) answers 422 invalid_request naming as_of and the allowed range', async () => {
    expectError(await postJson(app, '/v1/estimates?as_of=2015-06', house()), 422, 'invalid_request', ['as_of'], RANGE_MESSAGE);
  });
  it('the month before the first training month (2014-04) answers 422 with the allowed range', async () => {
    expectError(await postJson(app, '/v1/estimates?as_of=2014-04', house()), 422, 'invalid_request', ['as_of'], RANGE_MESSAGE);
  });
});

describe('as_of malformed', () => {
  for (const bad of ['2015-13', '2015-00', '2015-3', '2015-03-01', '201503', 'march', '']) {
    it(`as_of=${bad} answers 422 invalid_request naming as_of`, async () => {
      expectError(await postJson(app, `/v1/estimates?as_of=${bad}`, house()), 422, 'invalid_request', ['as_of']);
    });
  }
  it('as_of given twice answers 422 naming as_of', async () => {
    expectError(await postJson(app, '/v1/estimates?as_of=2015-03&as_of=2015-04', house()), 422, 'invalid_request', ['as_of']);
  });
  it('an unknown query parameter answers 422 naming it', async () => {
    expectError(await postJson(app, '/v1/estimates?asof=2015-03', house()), 422, 'invalid_request', ['asof']);
  });
  it('an invalid body is named first (the query is checked after the body)', async () => {
    expectError(await postJson(app, '/v1/estimates?as_of=2015-13', house({ grade: 14 })), 422, 'invalid_request', ['grade']);
  });
  it('without a model: 503 model_unavailable before the month range is checked', async () => {
    expectError(await postJson(noModel, '/v1/estimates?as_of=2016-01', house()), 503, 'model_unavailable', []);
  });
});

describe('as_of on the batch and explain routes', () => {
  it('the batch answers every house at the month asked', async () => {
    const response = await postJson(app, '/v1/estimates/batch?as_of=2015-04', { houses: [house(), house()] });
    expect(response.statusCode, response.body).toBe(200);
    const single = await estimateAsOf('2015-04');
    expect(response.json()).toEqual({ estimates: [single, single] });
  });
  it('the batch refuses a month out of range with as_of', async () => {
    expectError(await postJson(app, '/v1/estimates/batch?as_of=2015-06', { houses: [house()] }), 422, 'invalid_request', ['as_of'], RANGE_MESSAGE);
  });
  it('explain: the same Estimate as POST /v1/estimates at that month, the level part of the baseline', async () => {
    const response = await postJson(app, '/v1/estimates/explain?as_of=2014-05', house());
    expect(response.statusCode, response.body).toBe(200);
    const { explanation, comparable_sales: _, ...estimate } = response.json<ExplainedEstimate>();
    expect(estimate).toEqual(await estimateAsOf('2014-05'));
    const atModelDate = (await postJson(app, '/v1/estimates/explain', house())).json<ExplainedEstimate>().explanation;
    expect(explanation.baseline).toBe(atModelDate.baseline + -0.09);
    expect(explanation.fields).toEqual(atModelDate.fields);
    expect(explanation.raw).toBe(Math.log(dollarsAt(-0.09) / 2170));
  });
  it('explain batch answers every house at the month asked, and refuses a month out of range', async () => {
    const response = await postJson(app, '/v1/estimates/explain/batch?as_of=2015-05', { houses: [house()] });
    expect(response.statusCode, response.body).toBe(200);
    const [one] = response.json<{ estimates: ExplainedEstimate[] }>().estimates;
    expect(one).toEqual((await postJson(app, '/v1/estimates/explain?as_of=2015-05', house())).json());
    expectError(await postJson(app, '/v1/estimates/explain/batch?as_of=2014-04', { houses: [house()] }), 422, 'invalid_request', ['as_of'], RANGE_MESSAGE);
  });
});

describe('price levels (model/price-level.ts)', () => {
  const index: ModelFile['price_index'] = {
    months: ['2014-11', '2014-12', '2015-01', '2015-02'].map((month, i) => ({ month, level: [-0.03, 0.01, 0.02, 0.05][i] as number, sales: 1 })),
    as_of_month: '2015-01',
    extrapolation: { rule: 'trend', trend_months: 3, max_months_past_data: 2 },
  };
  const levels = createPriceLevels(index, '2015-01-31');
  it('names the allowed months and the level of prices_as_of', () => {
    expect([levels.firstMonth, levels.lastDataMonth, levels.lastMonth]).toEqual(['2014-11', '2015-02', '2015-04']);
    expect(levels.asOf).toEqual({ month: '2015-01', level: 0.02, monthsPastData: 0, pricesAsOf: '2015-01-31' });
  });
  it('carries the last trend_months months trend on, with the float64 operations of training/drift.py', () => {
    const trend = (0.05 - -0.03) / 3;
    expect(levels.at('2015-03')).toEqual({ month: '2015-03', level: 0.05 + 1 * trend, monthsPastData: 1, pricesAsOf: '2015-03-31' });
    expect(levels.at('2015-04')?.level).toBe(0.05 + 2 * trend);
  });
  it('has no level outside the allowed months or for a malformed month', () => {
    for (const month of ['2014-10', '2015-05', '2015-13', '2015-1', 'x']) expect(levels.at(month)).toBeUndefined();
  });
  it('ends a month on its last day, leap years included', () => {
    const leap = createPriceLevels({ ...index, months: index.months.map((m, i) => ({ ...m, month: ['2015-11', '2015-12', '2016-01', '2016-02'][i] as string })), as_of_month: '2016-02' }, '2016-02-29');
    expect(leap.at('2016-02')?.pricesAsOf).toBe('2016-02-29');
    expect(leap.at('2015-12')?.pricesAsOf).toBe('2015-12-31');
  });
});
