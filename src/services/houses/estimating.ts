import type { HouseModel } from './house-model.js';
import type { Estimate, House } from './schemas.js';
import { warningsFor } from './warnings.js';

/**
 * The answer for one valid house inside the model area (docs/houses.md, "Rounding and range"):
 * estimate_usd = Math.round(model dollars);
 * range_usd.low = Math.round(estimate_usd x low_factor), range_usd.high = Math.round(estimate_usd x high_factor).
 */
export function estimateHouse(house: House, model: HouseModel): Estimate {
  return answerFor(house, model.priceInDollars(house), model);
}

/** The answers for several houses, in order; the trees are evaluated for all houses at once. */
export function estimateHouses(houses: readonly House[], model: HouseModel): Estimate[] {
  const dollars = model.pricesInDollars(houses);
  return houses.map((house, index) => answerFor(house, dollars[index] ?? NaN, model));
}

function answerFor(house: House, dollars: number, model: HouseModel): Estimate {
  const estimateUsd = Math.round(dollars);
  return {
    estimate_usd: estimateUsd,
    range_usd: {
      low: Math.round(estimateUsd * model.range.lowFactor),
      high: Math.round(estimateUsd * model.range.highFactor),
    },
    model_version: model.version,
    prices_as_of: model.pricesAsOf,
    warnings: warningsFor(house, estimateUsd, model),
  };
}
