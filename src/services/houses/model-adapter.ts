import type { HouseModel, RareValueGroup } from './house-model.js';
import { createComparableSalesFinder } from './model/comparable-sales.js';
import { createEvaluator } from './model/evaluator.js';
import { createFieldAttributor } from './model/field-attribution.js';
import { parseModelFile, REQUEST_FIELDS } from './model/model-file.js';
import type { House } from './schemas.js';

/**
 * Joins the model file parser (model/model-file.ts) and the tree evaluator (model/evaluator.ts)
 * into what the service uses. The parser refuses a malformed file with an Error (state unparseable).
 */
export function parseHouseModel(bytes: Buffer): HouseModel {
  const file = parseModelFile(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  const evaluator = createEvaluator(file);
  const attributor = createFieldAttributor(file, evaluator);
  const comparables = createComparableSalesFinder(file.comparable_sales);
  const rareValueGroups: RareValueGroup[] = file.rare_value_thresholds.map((group) => {
    const limits = group.fields.map((field) => [field, group.max[field] ?? Infinity] as const);
    return {
      fields: group.fields,
      isRare: (house: House) => limits.some(([field, max]) => Number(house[field]) > max),
    };
  });
  const { lat_min, lat_max, long_min, long_max } = file.model_area;
  return {
    version: file.model_version,
    pricesAsOf: file.prices_as_of,
    area: { lat: { min: lat_min, max: lat_max }, long: { min: long_min, max: long_max } },
    rareValueGroups,
    range: { lowFactor: file.range.low_factor, highFactor: file.range.high_factor },
    card: file.card,
    priceInDollars: (house: House) => evaluator.predict(house).estimate,
    pricesInDollars: (houses: readonly House[]) => evaluator.predictMany(houses).map((prediction) => prediction.estimate),
    explain(house: House) {
      const attribution = attributor.explain(house);
      return {
        baseline: attribution.baseline,
        raw: attribution.raw,
        contributions: REQUEST_FIELDS.map((field, i) => ({ field, contribution: attribution.fields[i] as number })),
        comparableSales: comparables.find(house),
      };
    },
  };
}
