import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REVIEWED_MODEL } from '../../../src/services/houses/model/index.js';
import type { House } from '../../../src/services/houses/house.js';
import { dollarAnswer } from '../../../src/services/houses/model/dollars.js';
import { createEvaluator } from '../../../src/services/houses/model/evaluator.js';
import { parseModelFile, type ModelFile } from '../../../src/services/houses/model/model-file.js';
import { REPO_ROOT } from './support.js';

const HOUSE: House = {
  bedrooms: 3,
  bathrooms: 2.25,
  floors: 1,
  sqft_living: 2000,
  sqft_basement: 500,
  sqft_lot: 6000,
  waterfront: false,
  view: 0,
  condition: 3,
  grade: 7,
  yr_built: 1965,
  yr_renovated: 1990,
  lat: 47.55,
  long: -122.25,
  sqft_living15: 1900,
  sqft_lot15: 6000,
};

/**
 * A tiny model: split on lat_plus_long (feature 2) then on waterfront (feature 1); price levels of four
 * months, 0.0625 at prices_as_of (2015-02), rising by 0.03125 a month over the last three.
 */
function tinyModel(): ModelFile {
  const real = parseModelFile(readFileSync(resolve(REPO_ROOT, REVIEWED_MODEL.path)));
  return {
    ...real,
    features: [
      { name: 'sqft_living', kind: 'input' },
      { name: 'waterfront', kind: 'input' },
      { name: 'lat_plus_long', kind: 'add_scaled', x: 'lat', y: 'long', c: 1 },
      { name: 'yr_last_work', kind: 'max', x: 'yr_built', y: 'yr_renovated' },
    ],
    baseline: 5,
    price_index: {
      months: [
        { month: '2014-11', level: -0.03125, sales: 10 },
        { month: '2014-12', level: 0, sales: 10 },
        { month: '2015-01', level: 0.03125, sales: 10 },
        { month: '2015-02', level: 0.0625, sales: 10 },
      ],
      as_of_month: '2015-02',
      extrapolation: { rule: 'the last three months trend', trend_months: 3, max_months_past_data: 3 },
    },
    trees: [
      {
        feature: [2, -1, 1, -1, -1],
        threshold: [-74.7, 0, 0.5, 0, 0],
        missing_go_to_left: [1, 0, 0, 0, 0],
        left: [1, 0, 3, 0, 0],
        right: [2, 0, 4, 0, 0],
        is_leaf: [0, 1, 0, 1, 1],
        value: [0, -0.25, 0, 0.125, 0.5],
        count: [100, 40, 60, 25, 35],
      },
      {
        feature: [3, -1, -1],
        threshold: [1980.5, 0, 0],
        missing_go_to_left: [0, 0, 0],
        left: [1, 0, 0],
        right: [2, 0, 0],
        is_leaf: [0, 1, 1],
        value: [0, 0.01, 0.02],
        count: [100, 70, 30],
      },
    ],
  };
}

describe('house model evaluator', () => {
  it('computes the features as in training', () => {
    const e = createEvaluator(tinyModel());
    expect(Array.from(e.features(HOUSE))).toEqual([2000, 0, 47.55 + -122.25, 1990]);
    expect(Array.from(e.features({ ...HOUSE, waterfront: true, yr_renovated: 0 }))).toEqual([2000, 1, 47.55 + -122.25, 1965]);
  });

  it("walks the trees and sums (baseline + the level of prices_as_of) + tree0 + tree1", () => {
    const e = createEvaluator(tinyModel());
    // lat + long = -74.7 exactly? 47.55 + -122.25 = -74.7 in float64 -> goes left
    expect(47.55 + -122.25 <= -74.7).toBe(true);
    expect(e.asOfLevel).toBe(0.0625);
    expect(e.predictRaw(HOUSE)).toBe(0 + (5 + 0.0625) + -0.25 + 0.02);
    const east = { ...HOUSE, long: -122.2 };
    expect(e.predictRaw(east)).toBe(5 + 0.0625 + 0.125 + 0.02);
    expect(e.predictRaw({ ...east, waterfront: true, yr_renovated: 0 })).toBe(5 + 0.0625 + 0.5 + 0.01);
    const p = e.predict(HOUSE);
    expect(p.estimate).toBe(Math.exp(p.raw) * 2000);
  });

  it('sends a missing value the way missing_go_to_left says', () => {
    const e = createEvaluator(tinyModel());
    expect(e.predictRaw({ ...HOUSE, lat: Number.NaN })).toBe(5 + 0.0625 + -0.25 + 0.02);
  });

  it('adds the level given to the baseline, one house or several', () => {
    const e = createEvaluator(tinyModel());
    expect(e.predictRaw(HOUSE, -0.03125)).toBe(0 + (5 + -0.03125) + -0.25 + 0.02);
    expect(e.predictMany([HOUSE, HOUSE], -0.03125).map((p) => p.raw)).toEqual([e.predictRaw(HOUSE, -0.03125), e.predictRaw(HOUSE, -0.03125)]);
    expect(e.predictMany([HOUSE]).map((p) => p.raw)).toEqual([e.predictRaw(HOUSE)]);
  });

  it('answers in whole dollars with the range from the rounded estimate', () => {
    expect(dollarAnswer(412345.5, { low_factor: 0.832, high_factor: 1.218 })).toEqual({
      estimate_usd: 412346,
      range_usd: { low: Math.round(412346 * 0.832), high: Math.round(412346 * 1.218) },
    });
  });

  it('estimates a typical house with the shipped model in a plausible range', () => {
    const model = parseModelFile(readFileSync(resolve(REPO_ROOT, REVIEWED_MODEL.path)));
    const e = createEvaluator(model);
    expect(e.treeCount).toBe(model.trees.length);
    const { estimate } = e.predict(HOUSE);
    expect(estimate).toBeGreaterThan(200_000);
    expect(estimate).toBeLessThan(1_500_000);
  });
});
