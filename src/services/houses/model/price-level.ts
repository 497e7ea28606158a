/**
 * The market's drift (the model file's price_index, training/drift.py): the level of the month an
 * estimate's prices are as of, added to the trees' baseline. A month of the data has its own level;
 * up to max_months_past_data months past the last month of the data the level carries on the trend of
 * the last trend_months months, with the float64 operations of training/drift.py:
 *
 *   level(last + k) = level(last) + k * ((level(last) - level(last - trend_months)) / trend_months)
 */
import type { ModelFile } from './model-file.js';

/** The level of one month, and what the answer says of it. */
export interface PriceLevel {
  /** `YYYY-MM`. */
  month: string;
  /** Added to the baseline: log of the price change against the index's reference. */
  level: number;
  /** How many months past the last month of the data (0 inside the data); past it the level is carried on from the trend. */
  monthsPastData: number;
  /** The answer's prices_as_of: the last day of the month (`YYYY-MM-DD`). */
  pricesAsOf: string;
}

export interface PriceLevels {
  /** The first and the last month an as_of may name (`YYYY-MM`). */
  readonly firstMonth: string;
  readonly lastMonth: string;
  /** The last month of the data (past it the levels are extrapolated). */
  readonly lastDataMonth: string;
  /** The level of the model's own prices_as_of, the answer when no as_of is given. */
  readonly asOf: PriceLevel;
  /** The level of a `YYYY-MM` month, or undefined outside firstMonth..lastMonth. */
  at(month: string): PriceLevel | undefined;
}

/** `YYYY-MM`, month 01 to 12. */
export const MONTH = /^\d{4}-(0[1-9]|1[0-2])$/;

const monthNumber = (month: string): number => Number(month.slice(0, 4)) * 12 + Number(month.slice(5, 7)) - 1;
const monthText = (n: number): string => `${String(Math.floor(n / 12)).padStart(4, '0')}-${String((n % 12) + 1).padStart(2, '0')}`;

/** The last day of a month, `YYYY-MM-DD`. */
function lastDay(n: number): string {
  const days = new Date(Date.UTC(Math.floor(n / 12), (n % 12) + 1, 0)).getUTCDate();
  return `${monthText(n)}-${String(days).padStart(2, '0')}`;
}

export function createPriceLevels(index: ModelFile['price_index'], pricesAsOf: string): PriceLevels {
  const months = index.months;
  const first = monthNumber((months[0] as { month: string }).month);
  const lastLevel = (months[months.length - 1] as { level: number }).level;
  const last = first + months.length - 1;
  const { trend_months: trendMonths, max_months_past_data: maxPast } = index.extrapolation;
  const trend = (lastLevel - (months[months.length - 1 - trendMonths] as { level: number }).level) / trendMonths;
  const levelOf = (n: number): PriceLevel => {
    const k = n - last;
    const level = k <= 0 ? (months[n - first] as { level: number }).level : lastLevel + k * trend;
    return { month: monthText(n), level, monthsPastData: Math.max(k, 0), pricesAsOf: lastDay(n) };
  };
  const asOf = levelOf(monthNumber(index.as_of_month));
  return {
    firstMonth: monthText(first),
    lastMonth: monthText(last + maxPast),
    lastDataMonth: monthText(last),
    asOf: { ...asOf, pricesAsOf },
    at(month: string): PriceLevel | undefined {
      if (!MONTH.test(month)) return undefined;
      const n = monthNumber(month);
      return n >= first && n <= last + maxPast ? levelOf(n) : undefined;
    },
  };
}
