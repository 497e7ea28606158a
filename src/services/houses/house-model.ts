import type { ComparableSale } from './model/comparable-sales.js';
import type { House, HouseField } from './schemas.js';

/**
 * What the service needs from a loaded model file, independent of the file's layout
 * (model/model-file.ts parses the file, model/evaluator.ts computes the trees; model-adapter.ts
 * joins them into this).
 */
export interface ModelArea {
  lat: { min: number; max: number };
  long: { min: number; max: number };
}

/** A group of fields judged together: one rare_value warning when any of them is unusual. */
export interface RareValueGroup {
  fields: readonly HouseField[];
  /** True when the house's values of this group are unusual for the training sales. */
  isRare(house: House): boolean;
}

export interface RangeFactors {
  lowFactor: number;
  highFactor: number;
}

export interface HouseModel {
  version: string;
  pricesAsOf: string;
  area: ModelArea;
  rareValueGroups: readonly RareValueGroup[];
  range: RangeFactors;
  /** The model card, as stored in the model file (GET /v1/model). */
  card: Record<string, unknown>;
  /** The model's price for a valid house inside the area, in US dollars (not rounded). */
  priceInDollars(house: House): number;
  /** The same for several houses at once (identical to priceInDollars on each, faster). */
  pricesInDollars(houses: readonly House[]): number[];
  /** Why the model gave its raw value, field by field, and the training sales most like the house. */
  explain(house: House): PriceExplanation;
}

/** docs/houses.md, "Explanations" and "Comparable sales". */
export interface PriceExplanation {
  /** The model's expected raw value (log of the price per square foot), path-dependent TreeSHAP. */
  baseline: number;
  /** The model's raw value for the house: baseline + the sum of the contributions. */
  raw: number;
  /** Each request field's contribution to the raw value, in the contract's field order. */
  contributions: { field: HouseField; contribution: number }[];
  comparableSales: ComparableSale[];
}
