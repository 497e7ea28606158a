/**
 * Evaluates the model file's trees for one house, in float64, exactly as scikit-learn's
 * HistGradientBoostingRegressor does: raw = 0 + (baseline + level) + tree0 + tree1 + ... (in that
 * order, level the price level of the month the prices are as of, model/price-level.ts: the
 * file's prices_as_of unless another is given), each tree walked with `value <= threshold` going left and NaN following
 * missing_go_to_left. All trees are flattened into typed arrays once, at load; a
 * prediction allocates nothing per tree.
 */
import { fieldAsNumber, HOUSE_FIELD_INDEX, HOUSE_FIELDS, type House, type HouseField } from '../house.js';
import type { FeatureSpec, ModelFile } from './model-file.js';
import { createPriceLevels } from './price-level.js';

export interface Prediction {
  /** baseline + level + the trees' sum, log(price / sqft_living). */
  raw: number;
  /** Estimated price in US dollars, float64, not rounded: exp(raw) * sqft_living. */
  estimate: number;
}

export interface Evaluator {
  readonly featureCount: number;
  readonly treeCount: number;
  /** The price level of the file's prices_as_of, the default level of every prediction. */
  readonly asOfLevel: number;
  /** The model's input vector of a house (the derived features computed as in training). */
  features(house: House): Float64Array;
  /** level: the price level of the month the prices are as of (default: the file's prices_as_of). */
  predictRaw(house: House, level?: number): number;
  predict(house: House, level?: number): Prediction;
  /**
   * Predictions of several houses, identical to predict() on each: the trees are walked
   * tree by tree over all houses (better cache use), each house's sum in the same order.
   */
  predictMany(houses: readonly House[], level?: number): Prediction[];
}

// Feature program: kind 0 input, 1 add_scaled (x + c * y), 2 max(x, y); x and y index the
// 16 request fields.
function compileFeatures(specs: FeatureSpec[]) {
  const n = specs.length;
  const kind = new Uint8Array(n);
  const x = new Int32Array(n);
  const y = new Int32Array(n);
  const c = new Float64Array(n);
  specs.forEach((s, i) => {
    if (s.kind === 'input') {
      kind[i] = 0;
      x[i] = HOUSE_FIELD_INDEX[s.name];
    } else if (s.kind === 'add_scaled') {
      kind[i] = 1;
      x[i] = HOUSE_FIELD_INDEX[s.x];
      y[i] = HOUSE_FIELD_INDEX[s.y];
      c[i] = s.c;
    } else {
      kind[i] = 2;
      x[i] = HOUSE_FIELD_INDEX[s.x];
      y[i] = HOUSE_FIELD_INDEX[s.y];
    }
  });
  return { n, kind, x, y, c };
}

export function createEvaluator(model: ModelFile): Evaluator {
  const prog = compileFeatures(model.features);
  const nTrees = model.trees.length;
  let total = 0;
  for (const t of model.trees) total += t.feature.length;
  // Flat layout, each tree re-laid breadth-first so that the right child always follows the
  // left one: a split moves to child[i] + (x > threshold), without an unpredictable branch.
  const roots = new Int32Array(nTrees);
  const feat = new Int32Array(total); // -1 on leaves
  const thr = new Float64Array(total);
  const child = new Int32Array(total); // absolute index of the left child; right = left + 1
  const missLeft = new Uint8Array(total);
  const value = new Float64Array(total);
  let offset = 0;
  model.trees.forEach((t, ti) => {
    roots[ti] = offset;
    const order: number[] = [0]; // original node index at each new position
    for (let k = 0; k < order.length; k++) {
      const i = order[k] as number;
      const pos = offset + k;
      if (t.is_leaf[i] === 1) {
        feat[pos] = -1;
        value[pos] = t.value[i] as number;
      } else {
        feat[pos] = t.feature[i] as number;
        thr[pos] = t.threshold[i] as number;
        missLeft[pos] = t.missing_go_to_left[i] as number;
        child[pos] = offset + order.length;
        order.push(t.left[i] as number, t.right[i] as number);
      }
    }
    offset += order.length;
  });
  const baseline = model.baseline;
  const asOfLevel = createPriceLevels(model.price_index, model.prices_as_of).asOf.level;
  const fields = new Float64Array(HOUSE_FIELDS.length);
  const xs = new Float64Array(prog.n);

  function fill(house: House): Float64Array {
    for (let i = 0; i < HOUSE_FIELDS.length; i++) fields[i] = fieldAsNumber(house, HOUSE_FIELDS[i] as HouseField);
    for (let i = 0; i < prog.n; i++) {
      const a = fields[prog.x[i] as number] as number;
      const k = prog.kind[i];
      if (k === 0) xs[i] = a;
      else {
        const b = fields[prog.y[i] as number] as number;
        xs[i] = k === 1 ? a + (prog.c[i] as number) * b : a >= b ? a : b;
      }
    }
    return xs;
  }

  function predictRaw(house: House, level = asOfLevel): number {
    const x = fill(house);
    let hasNaN = false;
    for (let k = 0; k < x.length; k++) if (Number.isNaN(x[k])) hasNaN = true;
    let sum = 0;
    sum += baseline + level;
    if (!hasNaN) {
      for (let t = 0; t < nTrees; t++) {
        let i = roots[t] as number;
        let f = feat[i] as number;
        while (f >= 0) {
          i = (child[i] as number) + ((x[f] as number) > (thr[i] as number) ? 1 : 0);
          f = feat[i] as number;
        }
        sum += value[i] as number;
      }
      return sum;
    }
    // A missing value follows missing_go_to_left (scikit-learn's rule); never the case for a
    // validated request, kept for fidelity.
    for (let t = 0; t < nTrees; t++) {
      let i = roots[t] as number;
      let f = feat[i] as number;
      while (f >= 0) {
        const v = x[f] as number;
        const goLeft = v !== v ? missLeft[i] === 1 : v <= (thr[i] as number);
        i = (child[i] as number) + (goLeft ? 0 : 1);
        f = feat[i] as number;
      }
      sum += value[i] as number;
    }
    return sum;
  }

  function predictMany(houses: readonly House[], level = asOfLevel): Prediction[] {
    const n = houses.length;
    const width = prog.n;
    const X = new Float64Array(n * width);
    const sums = new Float64Array(n);
    let hasNaN = false;
    const start = baseline + level;
    for (let h = 0; h < n; h++) {
      X.set(fill(houses[h] as House), h * width);
      sums[h] = 0 + start; // as predictRaw: 0, then += baseline + level
    }
    for (let k = 0; k < X.length; k++) if (Number.isNaN(X[k])) hasNaN = true;
    if (hasNaN) return houses.map((house) => predictOne(house, level));
    for (let t = 0; t < nTrees; t++) {
      const root = roots[t] as number;
      for (let h = 0; h < n; h++) {
        const base = h * width;
        let i = root;
        let f = feat[i] as number;
        while (f >= 0) {
          i = (child[i] as number) + ((X[base + f] as number) > (thr[i] as number) ? 1 : 0);
          f = feat[i] as number;
        }
        sums[h] = (sums[h] as number) + (value[i] as number);
      }
    }
    return houses.map((house, h) => {
      const raw = sums[h] as number;
      return { raw, estimate: Math.exp(raw) * house.sqft_living };
    });
  }

  function predictOne(house: House, level = asOfLevel): Prediction {
    const raw = predictRaw(house, level);
    return { raw, estimate: Math.exp(raw) * house.sqft_living };
  }

  return {
    featureCount: prog.n,
    treeCount: nTrees,
    asOfLevel,
    features: (house) => Float64Array.from(fill(house)),
    predictRaw,
    predict: predictOne,
    predictMany,
  };
}
