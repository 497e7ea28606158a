import type { HouseModel } from './house-model.js';
import type { EstimateWarning, House } from './schemas.js';

/** Estimates at or above this many dollars get the high_value warning (house-prices.md). */
export const HIGH_VALUE_USD = 1_000_000;

function listOfFields(fields: readonly string[]): string {
  if (fields.length <= 1) return fields.join('');
  return `${fields.slice(0, -1).join(', ')} and ${fields[fields.length - 1] ?? ''}`;
}

/**
 * The warnings of one estimate, in this order: one rare_value per group of fields of the model file's
 * thresholds that the house exceeds (sqft_lot and sqft_lot15 form one group, so one warning), then
 * high_value when the rounded estimate is $1,000,000 or more.
 */
export function warningsFor(house: House, estimateUsd: number, model: HouseModel): EstimateWarning[] {
  const warnings: EstimateWarning[] = [];
  for (const group of model.rareValueGroups) {
    if (group.isRare(house)) {
      const fields = [...group.fields];
      warnings.push({
        code: 'rare_value',
        fields,
        message: `${listOfFields(fields)} ${fields.length > 1 ? 'are' : 'is'} unusual for the sales the model learned from: the estimate is less reliable`,
      });
    }
  }
  if (estimateUsd >= HIGH_VALUE_USD) {
    warnings.push({
      code: 'high_value',
      fields: [],
      message: 'Estimates of $1,000,000 or more are much less reliable',
    });
  }
  return warnings;
}
