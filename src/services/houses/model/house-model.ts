import type { House, HouseField, ModelArea, RareValueGroup } from '../house.js';
import type { ComparableSale } from './comparable-sales.js';
import type { PriceLevels } from './price-level.js';

/**
 * What the service needs from a loaded model file, independent of the file's layout
 * (model/model-file.ts parses the file, model/evaluator.ts computes the trees; model-adapter.ts
 * joins them into this). The area and the rare-value groups are the file's own, in the one
 * vocabulary of house.ts.
 */
export interface HouseModel {
  version: string;
  pricesAsOf: string;
  area: ModelArea;
  rareValueGroups: readonly RareValueGroup[];
  /** Estimates at or above this many dollars get the high_value warning (the file's high_value_usd). */
  highValueUsd: number;
  /** The range factors of the file: range_usd = estimate_usd times these, rounded. */
  range: { low_factor: number; high_factor: number };
  /** The model card, as stored in the model file (GET /v1/model). */
  card: Record<string, unknown>;
  /** The price level of each month an answer's prices may be as of (the as_of parameter). */
  levels: PriceLevels;
  /**
   * The model's price for a valid house inside the area, in US dollars (not rounded), at a month's
   * price level (default: the model's prices_as_of).
   */
  priceInDollars(house: House, level?: number): number;
  /** The same for several houses at once (identical to priceInDollars on each, faster). */
  pricesInDollars(houses: readonly House[], level?: number): number[];
  /** Why the model gave its raw value, field by field, and the training sales most like the house. */
  explain(house: House, level?: number): PriceExplanation;
  /** The same for several houses (identical to explain on each, faster). */
  explainMany(houses: readonly House[], level?: number): PriceExplanation[];
  /** Releases what the model holds beyond memory (TreeSHAP's worker thread). */
  close(): Promise<void>;
}

/** docs/houses.md, "Explanations" and "Comparable sales". */
export interface PriceExplanation {
  /**
   * The model's expected raw value (log of the price per square foot), path-dependent TreeSHAP, the
   * price level of the month the prices are as of included.
   */
  baseline: number;
  /** The model's raw value for the house: baseline + the sum of the contributions. */
  raw: number;
  /** Each request field's contribution to the raw value, in the contract's field order. */
  contributions: { field: HouseField; contribution: number }[];
  comparableSales: ComparableSale[];
}
