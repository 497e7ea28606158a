/**
 * Evaluates the model file's trees for one house, in float64, exactly as scikit-learn's
 * HistGradientBoostingRegressor does: raw = 0 + baseline + tree0 + tree1 + ... (in that
 * order), each tree walked with `value <= threshold` going left and NaN following
 * missing_go_to_left. All trees are flattened into typed arrays once, at load; a
 * prediction allocates nothing per tree.
 */
import type { FeatureSpec, HouseInput, ModelFile, RequestField } from './model-file.js';
import { REQUEST_FIELDS } from './model-file.js';

export interface Prediction {
  /** The trees' sum, log(price / sqft_living). */
  raw: number;
  /** Estimated price in US dollars, float64, not rounded: exp(raw) * sqft_living. */
  estimate: number;
}

export interface DollarAnswer {
  estimate_usd: number;
  range_usd: { low: number; high: number };
}

export interface Evaluator {
  readonly featureCount: number;
  readonly treeCount: number;
  /** The model's input vector of a house (the derived features computed as in training). */
  features(house: HouseInput): Float64Array;
  predictRaw(house: HouseInput): number;
  predict(house: HouseInput): Prediction;
}

/** Round half up to whole dollars (Math.round); the service and the model card use this. */
export function roundDollars(x: number): number {
  return Math.round(x);
}

/**
 * The service's answer in whole dollars: estimate_usd = round(estimate), the range is
 * round(estimate_usd * low_factor) .. round(estimate_usd * high_factor). The model card's
 * figures and measured coverage are computed exactly this way.
 */
export function dollarAnswer(estimate: number, range: { low_factor: number; high_factor: number }): DollarAnswer {
  const estimateUsd = roundDollars(estimate);
  return {
    estimate_usd: estimateUsd,
    range_usd: { low: roundDollars(estimateUsd * range.low_factor), high: roundDollars(estimateUsd * range.high_factor) },
  };
}

const FIELD_INDEX: Record<RequestField, number> = Object.fromEntries(REQUEST_FIELDS.map((f, i) => [f, i])) as Record<
  RequestField,
  number
>;

function inputValue(house: HouseInput, f: RequestField): number {
  const v = house[f];
  return typeof v === 'boolean' ? (v ? 1 : 0) : v;
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
      x[i] = FIELD_INDEX[s.name];
    } else if (s.kind === 'add_scaled') {
      kind[i] = 1;
      x[i] = FIELD_INDEX[s.x];
      y[i] = FIELD_INDEX[s.y];
      c[i] = s.c;
    } else {
      kind[i] = 2;
      x[i] = FIELD_INDEX[s.x];
      y[i] = FIELD_INDEX[s.y];
    }
  });
  return { n, kind, x, y, c };
}

export function createEvaluator(model: ModelFile): Evaluator {
  const prog = compileFeatures(model.features);
  const nTrees = model.trees.length;
  let total = 0;
  for (const t of model.trees) total += t.feature.length;
  const roots = new Int32Array(nTrees);
  const feat = new Int32Array(total); // -1 on leaves
  const thr = new Float64Array(total);
  const left = new Int32Array(total); // absolute node indices
  const right = new Int32Array(total);
  const missLeft = new Uint8Array(total);
  const value = new Float64Array(total);
  let offset = 0;
  model.trees.forEach((t, ti) => {
    roots[ti] = offset;
    const n = t.feature.length;
    for (let i = 0; i < n; i++) {
      const k = offset + i;
      const leaf = t.is_leaf[i] === 1;
      feat[k] = leaf ? -1 : (t.feature[i] as number);
      thr[k] = t.threshold[i] as number;
      left[k] = offset + (t.left[i] as number);
      right[k] = offset + (t.right[i] as number);
      missLeft[k] = t.missing_go_to_left[i] as number;
      value[k] = t.value[i] as number;
    }
    offset += n;
  });
  const baseline = model.baseline;
  const fields = new Float64Array(REQUEST_FIELDS.length);
  const xs = new Float64Array(prog.n);

  function fill(house: HouseInput): Float64Array {
    for (let i = 0; i < REQUEST_FIELDS.length; i++) fields[i] = inputValue(house, REQUEST_FIELDS[i] as RequestField);
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

  function predictRaw(house: HouseInput): number {
    const x = fill(house);
    let sum = 0;
    sum += baseline;
    for (let t = 0; t < nTrees; t++) {
      let i = roots[t] as number;
      let f = feat[i] as number;
      while (f >= 0) {
        const v = x[f] as number;
        if (v <= (thr[i] as number)) i = left[i] as number;
        else if (v !== v) i = missLeft[i] === 1 ? (left[i] as number) : (right[i] as number);
        else i = right[i] as number;
        f = feat[i] as number;
      }
      sum += value[i] as number;
    }
    return sum;
  }

  return {
    featureCount: prog.n,
    treeCount: nTrees,
    features: (house) => Float64Array.from(fill(house)),
    predictRaw,
    predict(house) {
      const raw = predictRaw(house);
      return { raw, estimate: Math.exp(raw) * house.sqft_living };
    },
  };
}
