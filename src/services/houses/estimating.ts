import type { House } from './house.js';
import { type HouseModel, type PriceExplanation, dollarAnswer, formatUsd, type PriceLevel } from './model/index.js';
import type { Estimate, ExplainedEstimate } from './schemas.js';
import { warningsFor } from './warnings.js';

/**
 * The answer for one valid house inside the model area (docs/houses.md, "Answers"), in whole dollars
 * through model/dollars.ts's dollarAnswer, the function the parity test checks the model card with:
 * estimate_usd = Math.round(model dollars);
 * range_usd.low = Math.round(estimate_usd x low_factor), range_usd.high = Math.round(estimate_usd x high_factor).
 * The prices are as of the month `at` (the as_of parameter; by default the model's prices_as_of): its
 * price level is added to the trees' baseline, and prices_as_of is its last day.
 */
export function estimateHouse(house: House, model: HouseModel, at: PriceLevel = model.levels.asOf): Estimate {
  return answerFor(house, model.priceInDollars(house, at.level), model, at);
}

/** The answers for several houses, in order; the trees are evaluated for all houses at once. */
export function estimateHouses(houses: readonly House[], model: HouseModel, at: PriceLevel = model.levels.asOf): Estimate[] {
  const dollars = model.pricesInDollars(houses, at.level);
  return houses.map((house, index) => answerFor(house, dollars[index] ?? NaN, model, at));
}

function answerFor(house: House, dollars: number, model: HouseModel, at: PriceLevel): Estimate {
  const { estimate_usd, range_usd } = dollarAnswer(dollars, model.range);
  return {
    estimate_usd,
    range_usd,
    model_version: model.version,
    prices_as_of: at.pricesAsOf,
    warnings: warningsFor(house, estimate_usd, model, at),
  };
}

/** The order of a house's fields in an explanation: largest |contribution| first, then the contract order. */
function byEffect(a: { contribution: number; index: number }, b: { contribution: number; index: number }): number {
  return Math.abs(b.contribution) - Math.abs(a.contribution) || a.index - b.index;
}

/**
 * The answer of POST /v1/estimates/explain for one valid house inside the model area: the same Estimate
 * as POST /v1/estimates, the explanation (docs/houses.md, "Explanations") and the comparable sales.
 */
export function explainHouse(house: House, model: HouseModel, at: PriceLevel = model.levels.asOf): ExplainedEstimate {
  return explainedAnswer(house, estimateHouse(house, model, at), model.explain(house, at.level));
}

/** The answers for several houses, in order (the estimates exactly as estimateHouses gives them). */
export function explainHouses(houses: readonly House[], model: HouseModel, at: PriceLevel = model.levels.asOf): ExplainedEstimate[] {
  const estimates = estimateHouses(houses, model, at);
  const whys = model.explainMany(houses, at.level);
  return houses.map((house, index) => explainedAnswer(house, estimates[index] as Estimate, whys[index] as PriceExplanation));
}

function explainedAnswer(house: House, estimate: Estimate, why: PriceExplanation): ExplainedEstimate {
  const baselineUsdPerSqft = Math.exp(why.baseline);
  const startingUsd = baselineUsdPerSqft * house.sqft_living;
  const fields = why.contributions
    .map(({ field, contribution }, index) => ({ field, contribution, index }))
    .sort(byEffect)
    .map(({ field, contribution }) => ({ field, value: house[field], contribution, price_factor: Math.exp(contribution) }));
  return {
    ...estimate,
    explanation: {
      baseline: why.baseline,
      raw: why.raw,
      baseline_usd_per_sqft: baselineUsdPerSqft,
      starting_usd: startingUsd,
      sqft_living_outside_trees:
        `The model predicts the price per square foot; the estimate is that times sqft_living (${house.sqft_living}). ` +
        `So the living area scales the estimate in proportion, outside the trees: ${formatUsd(startingUsd)} = ` +
        `${formatUsd(baselineUsdPerSqft)} per square foot x ${house.sqft_living}. sqft_living's price_factor below is only its ` +
        'effect on the price per square foot (larger houses usually cost less per square foot).',
      fields,
    },
    comparable_sales: why.comparableSales,
  };
}
