import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildHousesApp } from '../../src/services/houses/app.js';
import type { HouseModel } from '../../src/services/houses/model/index.js';
import { parseHouseModel } from '../../src/services/houses/model/index.js';
import { readHouseSettings } from '../../src/services/houses/settings.js';
import { warningsFor } from '../../src/services/houses/warnings.js';
import { buildFixtureApp, FIXTURE_MODEL_PATH, house, postJson, sha256OfFile, VALID_HOUSE } from './support.js';
import { appDuringSuite } from '../support/during-suite.js';

/** The Estimate answer, rounding, range and warnings, on the hand-made model (four one-split trees). */
const FILE = JSON.parse(readFileSync(FIXTURE_MODEL_PATH, 'utf8')) as {
  card: Record<string, unknown>;
  range: { low_factor: number; high_factor: number };
  model_area: { lat_min: number; lat_max: number; long_min: number; long_max: number };
};

/** The model's own month: no extrapolation. */
const AT_MODEL_DATE = { month: '2015-02', monthsPastData: 0, pricesAsOf: '2015-02-28' };

const app = appDuringSuite(() => buildFixtureApp());

const estimate = async (body: unknown) => {
  const response = await postJson(app, '/v1/estimates', body);
  expect(response.statusCode, response.body).toBe(200);
  return response.json<{ estimate_usd: number; range_usd: { low: number; high: number }; model_version: string; prices_as_of: string; warnings: { code: string; fields: string[]; message: string }[] }>();
};

describe('estimate answer', () => {
  it('estimate_usd is the model dollars rounded; range_usd is round(estimate_usd x factor)', async () => {
    // VALID_HOUSE: grade 7 (-0.1), not waterfront (0), sqft_above 1770 (0), last work 1991 (+0.03).
    let raw = 0;
    raw += 5.52;
    raw += -0.1;
    raw += 0;
    raw += 0;
    raw += 0.03;
    const dollars = Math.exp(raw) * VALID_HOUSE.sqft_living;
    const estimateUsd = Math.round(dollars);
    expect(await estimate(house())).toEqual({
      estimate_usd: estimateUsd,
      range_usd: { low: Math.round(estimateUsd * FILE.range.low_factor), high: Math.round(estimateUsd * FILE.range.high_factor) },
      model_version: 'tiny-fixture-1',
      prices_as_of: '2015-02-28',
      warnings: [],
    });
  });
  it('all three amounts are whole dollars', async () => {
    const answer = await estimate(house({ sqft_living: 1234.5, waterfront: true }));
    for (const amount of [answer.estimate_usd, answer.range_usd.low, answer.range_usd.high]) expect(Number.isInteger(amount)).toBe(true);
    expect(answer.range_usd.low).toBeLessThan(answer.estimate_usd);
    expect(answer.range_usd.high).toBeGreaterThan(answer.estimate_usd);
  });
  it('carries model_version and prices_as_of', async () => {
    expect(await estimate(house())).toMatchObject({ model_version: 'tiny-fixture-1', prices_as_of: '2015-02-28' });
  });
});

describe('warnings', () => {
  it('large land values give exactly one rare_value warning with fields sqft_lot and sqft_lot15', async () => {
    for (const changes of [{ sqft_lot: 300_000 }, { sqft_lot15: 200_000 }, { sqft_lot: 300_000, sqft_lot15: 200_000 }]) {
      const { warnings } = await estimate(house(changes));
      expect(warnings).toEqual([{ code: 'rare_value', fields: ['sqft_lot', 'sqft_lot15'], message: expect.stringContaining('sqft_lot and sqft_lot15') }]);
    }
  });
  it('values at the thresholds are not rare', async () => {
    expect((await estimate(house({ sqft_lot: 200_000, sqft_lot15: 150_000 }))).warnings).toEqual([]);
  });
  it('each group of the thresholds gives its own warning', async () => {
    const { warnings } = await estimate(house({ bedrooms: 9, bathrooms: 6.25, sqft_lot: 250_000 }));
    expect(warnings.map((warning) => [warning.code, warning.fields])).toEqual([
      ['rare_value', ['sqft_lot', 'sqft_lot15']],
      ['rare_value', ['bedrooms']],
      ['rare_value', ['bathrooms']],
    ]);
  });
  it('an estimate of $1M or more gets high_value with empty fields', async () => {
    const answer = await estimate(house({ sqft_living: 9500, sqft_basement: 0, grade: 12, waterfront: true }));
    expect(answer.estimate_usd).toBeGreaterThanOrEqual(1_000_000);
    expect(answer.warnings).toEqual([
      { code: 'rare_value', fields: ['sqft_living'], message: expect.any(String) },
      { code: 'high_value', fields: [], message: 'Estimates of $1,000,000 or more are much less reliable' },
    ]);
  });
  it('high_value starts at exactly $1,000,000 of the rounded estimate', () => {
    const model = { rareValueGroups: [], highValueUsd: 1_000_000 };
    const valid = VALID_HOUSE;
    expect(warningsFor(valid, 999_999, model, AT_MODEL_DATE)).toEqual([]);
    expect(warningsFor(valid, 1_000_000, model, AT_MODEL_DATE).map((warning) => warning.code)).toEqual(['high_value']);
  });
  it("high_value starts at the model file's high_value_usd, and its message says that amount", () => {
    const file = JSON.parse(readFileSync(FIXTURE_MODEL_PATH, 'utf8')) as { high_value_usd: number };
    file.high_value_usd = 250_000;
    const model: HouseModel = parseHouseModel(Buffer.from(JSON.stringify(file)));
    expect(model.highValueUsd).toBe(250_000);
    const valid = VALID_HOUSE;
    expect(warningsFor(valid, 249_999, model, model.levels.asOf)).toEqual([]);
    expect(warningsFor(valid, 250_000, model, model.levels.asOf)).toEqual([
      { code: 'high_value', fields: [], message: 'Estimates of $250,000 or more are much less reliable' },
    ]);
  });
});

describe('GET /ready', () => {
  it('asks the model for one estimate: a model that answers no finite price is not ready', async () => {
    const broken = await buildHousesApp(readHouseSettings({ MODEL_PATH: FIXTURE_MODEL_PATH, MODEL_SHA256: sha256OfFile(FIXTURE_MODEL_PATH) }), {
      logger: false,
      parseModel: (bytes) => ({ ...parseHouseModel(bytes), priceInDollars: () => NaN }),
    });
    const response = await broken.inject({ url: '/ready' });
    expect(response.statusCode).toBe(503);
    expect((response.json<{ error: { code: string } }>()).error.code).toBe('model_unavailable');
    await broken.close();
  });
});

describe('GET /v1/model', () => {
  it('answers the model card of the file plus the model area', async () => {
    const response = await app.inject({ url: '/v1/model' });
    expect(response.statusCode).toBe(200);
    const { lat_min, lat_max, long_min, long_max } = FILE.model_area;
    expect(response.json()).toEqual({ ...FILE.card, model_area: { lat_min, lat_max, long_min, long_max } });
  });
});
