/**
 * Why a house got its raw value, field by field: the SHAP values of the model's features (tree-shap.ts)
 * attributed back to the 16 request fields they are computed from (docs/houses.md, "Explanations"):
 *
 * - an `input` feature is its field's;
 * - an `add_scaled` feature x + c * y (the turned coordinates, sqft_above) is split between x and y in
 *   proportion to their weights in the formula, 1 and |c|: x gets phi / (1 + |c|), y gets the rest,
 *   phi - phi / (1 + |c|) (so lat + long gives half to each, lat + 0.5 * long two thirds to lat, and
 *   sqft_above = sqft_living - sqft_basement half to each);
 * - a `max` feature max(x, y) (yr_last_work) is wholly the field whose value it took: x when x >= y
 *   (yr_built for a house never renovated, or renovated in the year it was built), otherwise y.
 *
 * Each feature's value is split into parts that add up to it, so baseline + the fields' contributions
 * is the raw value to float64 rounding, as baseline + the features' SHAP values is.
 */
import type { Evaluator } from './evaluator.js';
import { fieldAsNumber, HOUSE_FIELD_INDEX, HOUSE_FIELDS, type House, type HouseField } from '../house.js';
import type { ModelFile } from './model-file.js';
import { createSharedTreeShap } from './shared-tree-shap.js';

export interface FieldAttribution {
  /**
   * shap's expected value of the raw output (log of the price per square foot), with the price level
   * of the month the prices are as of (model/price-level.ts) as part of it.
   */
  baseline: number;
  /** The model's raw output for the house (the same number the estimate comes from). */
  raw: number;
  /** SHAP value of each model feature, in the model file's feature order. */
  features: Float64Array;
  /** Contribution of each request field, in the contract's field order (HOUSE_FIELDS). */
  fields: Float64Array;
}

export interface FieldAttributor {
  /** The expected value at the level of the file's prices_as_of. */
  readonly baseline: number;
  /** level: the price level of the month the prices are as of (default: the file's prices_as_of). */
  explain(house: House, level?: number): FieldAttribution;
  /** The same for several houses (their TreeSHAP shared with the worker thread house by house). */
  explainMany(houses: readonly House[], level?: number): FieldAttribution[];
  /** Stops TreeSHAP's worker thread (model/shared-tree-shap.ts). */
  close(): Promise<void>;
}

export function createFieldAttributor(model: ModelFile, evaluator: Evaluator): FieldAttributor {
  const shap = createSharedTreeShap(model);
  const asOfLevel = evaluator.asOfLevel;
  const n = model.features.length;
  // Per feature: kind 0 input / 1 add_scaled / 2 max, the fields x, y and x's share (add_scaled).
  const kind = new Uint8Array(n);
  const fx = new Int32Array(n);
  const fy = new Int32Array(n);
  const share = new Float64Array(n);
  model.features.forEach((spec, i) => {
    if (spec.kind === 'input') {
      fx[i] = HOUSE_FIELD_INDEX[spec.name];
      return;
    }
    fx[i] = HOUSE_FIELD_INDEX[spec.x];
    fy[i] = HOUSE_FIELD_INDEX[spec.y];
    if (spec.kind === 'add_scaled') {
      kind[i] = 1;
      share[i] = 1 / (1 + Math.abs(spec.c));
    } else {
      kind[i] = 2;
    }
  });

  /** The fields' shares of the features' SHAP values phi (the rules of this file's header). */
  function attribution(house: House, phi: Float64Array, level: number): FieldAttribution {
    const fields = new Float64Array(HOUSE_FIELDS.length);
    for (let i = 0; i < n; i++) {
      const p = phi[i] as number;
      const a = fx[i] as number;
      const b = fy[i] as number;
      if (kind[i] === 0) fields[a] = (fields[a] as number) + p;
      else if (kind[i] === 1) {
        const toX = p * (share[i] as number);
        fields[a] = (fields[a] as number) + toX;
        fields[b] = (fields[b] as number) + (p - toX);
      } else {
        const winner = fieldAsNumber(house, HOUSE_FIELDS[a] as HouseField) >= fieldAsNumber(house, HOUSE_FIELDS[b] as HouseField) ? a : b;
        fields[winner] = (fields[winner] as number) + p;
      }
    }
    return { baseline: shap.expectedValue + level, raw: evaluator.predictRaw(house, level), features: phi, fields };
  }

  return {
    baseline: shap.expectedValue + asOfLevel,
    explain(house: House, level = asOfLevel): FieldAttribution {
      const phi = new Float64Array(n);
      shap.shapValues(evaluator.features(house), phi);
      return attribution(house, phi, level);
    },
    explainMany(houses: readonly House[], level = asOfLevel): FieldAttribution[] {
      const phis = houses.map(() => new Float64Array(n));
      shap.shapValuesMany(
        houses.map((house) => evaluator.features(house)),
        phis,
      );
      return houses.map((house, i) => attribution(house, phis[i] as Float64Array, level));
    },
    close: () => shap.close(),
  };
}
