/**
 * Whole dollars: the one rounding of the house-price service. The service answers through
 * dollarAnswer (estimating.ts), and the parity test recomputes the model card's figures and measured
 * coverage through the same function (test/houses/model/parity.python.test.ts), as the benchmark does.
 */

export interface DollarAnswer {
  estimate_usd: number;
  range_usd: { low: number; high: number };
}

/** Round half up to whole dollars (Math.round). */
function roundDollars(x: number): number {
  return Math.round(x);
}

/**
 * The answer in whole dollars: estimate_usd = round(estimate), the range is
 * round(estimate_usd * low_factor) .. round(estimate_usd * high_factor), i.e. computed from the rounded
 * estimate, as the model card's measured coverage is.
 */
export function dollarAnswer(estimate: number, range: { low_factor: number; high_factor: number }): DollarAnswer {
  const estimateUsd = roundDollars(estimate);
  return {
    estimate_usd: estimateUsd,
    range_usd: { low: roundDollars(estimateUsd * range.low_factor), high: roundDollars(estimateUsd * range.high_factor) },
  };
}

/** An amount as people read it: `$1,000,000` (rounded to whole dollars). */
export function formatUsd(x: number): string {
  return `$${roundDollars(x).toLocaleString('en-US')}`;
}
