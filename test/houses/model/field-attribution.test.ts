import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createEvaluator } from '../../../src/services/houses/model/evaluator.js';
import { createFieldAttributor } from '../../../src/services/houses/model/field-attribution.js';
import { HOUSE_FIELD_INDEX, type House, type HouseField } from '../../../src/services/houses/house.js';
import { parseModelFile, type ModelFile, type TreeArrays } from '../../../src/services/houses/model/model-file.js';
import { createTreeShap } from '../../../src/services/houses/model/tree-shap.js';
import { REVIEWED_MODEL } from '../../../src/services/houses/model/index.js';
import { REPO_ROOT } from './support.js';

/**
 * TreeSHAP and the attribution rule on hand-made trees, against the definition: the Shapley values of
 * the path-dependent value function v(S) = the tree walked with the features of S known and every
 * other split averaged over both sides by the training counts (what Algorithm 2 computes).
 */
const real = parseModelFile(readFileSync(resolve(REPO_ROOT, REVIEWED_MODEL.path)));

// Features: 0 sqft_living, 1 grade, 2 lat_plus_half_long = lat + 0.5 long, 3 sqft_above, 4 yr_last_work.
const TREES: TreeArrays[] = [
  {
    // grade, then grade again (a repeated feature is unwound), lat_plus_half_long, sqft_above
    feature: [1, 1, 2, -1, -1, 3, -1, -1, -1],
    threshold: [7.5, 5.5, -13.6, 0, 0, 1500, 0, 0, 0],
    missing_go_to_left: [1, 1, 1, 0, 0, 1, 0, 0, 0],
    left: [1, 3, 5, 0, 0, 7, 0, 0, 0],
    right: [2, 4, 6, 0, 0, 8, 0, 0, 0],
    is_leaf: [0, 0, 0, 1, 1, 0, 1, 1, 1],
    value: [0, 0, 0, -0.3, -0.1, 0, 0.2, 0.05, 0.12],
    count: [100, 60, 40, 20, 40, 25, 15, 10, 15],
  },
  {
    feature: [4, 0, -1, -1, -1],
    threshold: [1990.5, 2500, 0, 0, 0],
    missing_go_to_left: [0, 0, 0, 0, 0],
    left: [1, 3, 0, 0, 0],
    right: [2, 4, 0, 0, 0],
    is_leaf: [0, 0, 1, 1, 1],
    value: [0, 0, 0.07, -0.02, 0.04],
    count: [100, 70, 30, 45, 25],
  },
];

const MODEL: ModelFile = {
  ...real,
  baseline: 5.5,
  features: [
    { name: 'sqft_living', kind: 'input' },
    { name: 'grade', kind: 'input' },
    { name: 'lat_plus_half_long', kind: 'add_scaled', x: 'lat', y: 'long', c: 0.5 },
    { name: 'sqft_above', kind: 'add_scaled', x: 'sqft_living', y: 'sqft_basement', c: -1 },
    { name: 'yr_last_work', kind: 'max', x: 'yr_built', y: 'yr_renovated' },
  ],
  trees: TREES,
};

function valueKnowing(tree: TreeArrays, x: Float64Array, known: Set<number>, node = 0): number {
  if (tree.is_leaf[node] === 1) return tree.value[node] as number;
  const f = tree.feature[node] as number;
  const l = tree.left[node] as number;
  const r = tree.right[node] as number;
  if (known.has(f)) return valueKnowing(tree, x, known, (x[f] as number) <= (tree.threshold[node] as number) ? l : r);
  const w = tree.count[node] as number;
  return ((tree.count[l] as number) * valueKnowing(tree, x, known, l) + (tree.count[r] as number) * valueKnowing(tree, x, known, r)) / w;
}

/** Shapley values by the definition: every subset of the other features. */
function bruteForceShap(model: ModelFile, x: Float64Array): number[] {
  const m = model.features.length;
  const fact = (n: number): number => (n <= 1 ? 1 : n * fact(n - 1));
  const v = (known: Set<number>) => model.trees.reduce((sum, tree) => sum + valueKnowing(tree, x, known), 0);
  const phi = new Array<number>(m).fill(0);
  for (let i = 0; i < m; i++) {
    for (let mask = 0; mask < 1 << m; mask++) {
      if (mask & (1 << i)) continue;
      const known = new Set<number>();
      for (let j = 0; j < m; j++) if (mask & (1 << j)) known.add(j);
      const weight = (fact(known.size) * fact(m - known.size - 1)) / fact(m);
      const without = v(known);
      known.add(i);
      phi[i] = (phi[i] as number) + weight * (v(known) - without);
    }
  }
  return phi;
}

const HOUSE: House = {
  bedrooms: 3,
  bathrooms: 2,
  floors: 1,
  sqft_living: 2400,
  sqft_basement: 600,
  sqft_lot: 5000,
  waterfront: false,
  view: 0,
  condition: 3,
  grade: 8,
  yr_built: 1960,
  yr_renovated: 2000,
  lat: 47.6,
  long: -122.3,
  sqft_living15: 2000,
  sqft_lot15: 5000,
};

describe('TreeSHAP on hand-made trees', () => {
  it('equals the Shapley values of the path-dependent value function, for houses on every path', () => {
    const evaluator = createEvaluator(MODEL);
    const shap = createTreeShap(MODEL);
    const variants: Partial<House>[] = [{}, { grade: 5 }, { grade: 6 }, { lat: 47.2, long: -121.9 }, { sqft_basement: 1200 }, { yr_renovated: 0, sqft_living: 2600 }];
    for (const change of variants) {
      const x = evaluator.features({ ...HOUSE, ...change });
      const out = new Float64Array(x.length);
      shap.shapValues(x, out);
      const expected = bruteForceShap(MODEL, x);
      expected.forEach((v, i) => expect(Math.abs(v - (out[i] as number))).toBeLessThan(1e-14));
      // expected value: the empty coalition
      const empty = MODEL.baseline + MODEL.trees.reduce((s, t) => s + valueKnowing(t, x, new Set()), 0);
      expect(Math.abs(shap.expectedValue - empty)).toBeLessThan(1e-14);
    }
  });
});

describe('attribution to the 16 request fields', () => {
  const attributor = createFieldAttributor(MODEL, createEvaluator(MODEL));
  const field = (a: Float64Array, name: HouseField) => a[HOUSE_FIELD_INDEX[name]] as number;

  it('x + c * y gives x 1 / (1 + |c|) and y the rest; max(x, y) goes wholly to the field it took', () => {
    const e = attributor.explain(HOUSE);
    const [living, , turned, above, lastWork] = e.features as unknown as number[];
    expect(field(e.fields, 'lat')).toBeCloseTo((turned as number) / 1.5, 15);
    expect(field(e.fields, 'long')).toBeCloseTo((turned as number) - (turned as number) / 1.5, 15);
    expect(field(e.fields, 'sqft_basement')).toBe((above as number) - (above as number) / 2);
    expect(field(e.fields, 'sqft_living')).toBe((living as number) + (above as number) / 2);
    expect(field(e.fields, 'yr_renovated')).toBe(lastWork);
    expect(field(e.fields, 'yr_built')).toBe(0);
    const never = attributor.explain({ ...HOUSE, yr_renovated: 0 });
    expect(field(never.fields, 'yr_built')).toBe(never.features[4]);
    expect(field(never.fields, 'yr_renovated')).toBe(0);
  });

  it('additivity: baseline + the fields = baseline + the features = the raw value', () => {
    for (const change of [{}, { grade: 5 }, { yr_renovated: 0 }, { lat: 47.2, long: -121.9 }]) {
      const e = attributor.explain({ ...HOUSE, ...change });
      const byFields = e.fields.reduce((s, v) => s + v, e.baseline);
      const byFeatures = e.features.reduce((s, v) => s + v, e.baseline);
      expect(Math.abs(byFields - e.raw)).toBeLessThan(1e-14);
      expect(Math.abs(byFeatures - e.raw)).toBeLessThan(1e-14);
    }
  });
});
