import { isRareFor, type House } from './house.js';
import { type HouseModel, formatUsd, type PriceLevel } from './model/index.js';
import type { EstimateWarning } from './schemas.js';

function listOfFields(fields: readonly string[]): string {
  if (fields.length <= 1) return fields.join('');
  return `${fields.slice(0, -1).join(', ')} and ${fields[fields.length - 1] ?? ''}`;
}

/**
 * The warnings of one estimate, in this order: one rare_value per group of fields of the model file's
 * thresholds that the house exceeds (sqft_lot and sqft_lot15 form one group, so one warning), then
 * high_value when the rounded estimate is the model file's high_value_usd ($1,000,000 for the shipped
 * model, house-prices.md) or more, then extrapolated_price_level when the prices are as of a month past
 * the data (the as_of parameter), whose price level is carried on from the trend, not measured.
 */
export function warningsFor(
  house: House,
  estimateUsd: number,
  model: Pick<HouseModel, 'rareValueGroups' | 'highValueUsd'>,
  at: Pick<PriceLevel, 'month' | 'monthsPastData' | 'pricesAsOf'>,
): EstimateWarning[] {
  const warnings: EstimateWarning[] = [];
  for (const group of model.rareValueGroups) {
    if (isRareFor(group, house)) {
      const fields = [...group.fields];
      warnings.push({
        code: 'rare_value',
        fields,
        message: `${listOfFields(fields)} ${fields.length > 1 ? 'are' : 'is'} unusual for the sales the model learned from: the estimate is less reliable`,
      });
    }
  }
  if (estimateUsd >= model.highValueUsd) {
    warnings.push({
      code: 'high_value',
      fields: [],
      message: `Estimates of ${formatUsd(model.highValueUsd)} or more are much less reliable`,
    });
  }
  if (at.monthsPastData > 0) {
    warnings.push({
      code: 'extrapolated_price_level',
      fields: [],
      message:
        `Prices as of ${at.pricesAsOf}, ${at.monthsPastData} month${at.monthsPastData > 1 ? 's' : ''} past the model's data: the price level of ` +
        `${at.month} carries on the last three months' trend, it was not measured`,
    });
  }
  return warnings;
}
