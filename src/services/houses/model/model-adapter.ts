import { HOUSE_FIELDS, type House } from '../house.js';
import type { HouseModel, PriceExplanation } from './house-model.js';
import { createComparableSalesFinder } from './comparable-sales.js';
import { createEvaluator } from './evaluator.js';
import { createFieldAttributor, type FieldAttribution } from './field-attribution.js';
import { parseModelFile } from './model-file.js';
import { createPriceLevels } from './price-level.js';

/**
 * Joins the model file parser (model/model-file.ts) and the tree evaluator (model/evaluator.ts)
 * into what the service uses. The parser refuses a malformed file with an Error (state unparseable).
 */
export function parseHouseModel(bytes: Buffer): HouseModel {
  const file = parseModelFile(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  const evaluator = createEvaluator(file);
  const attributor = createFieldAttributor(file, evaluator);
  const comparables = createComparableSalesFinder(file.comparable_sales);
  const { lat_min, lat_max, long_min, long_max } = file.model_area;
  const explanation = (house: House, attribution: FieldAttribution): PriceExplanation => ({
    baseline: attribution.baseline,
    raw: attribution.raw,
    contributions: HOUSE_FIELDS.map((field, i) => ({ field, contribution: attribution.fields[i] as number })),
    comparableSales: comparables.find(house),
  });
  return {
    version: file.model_version,
    pricesAsOf: file.prices_as_of,
    area: { lat_min, lat_max, long_min, long_max },
    rareValueGroups: file.rare_value_thresholds,
    highValueUsd: file.high_value_usd,
    range: file.range,
    card: file.card,
    levels: createPriceLevels(file.price_index, file.prices_as_of),
    priceInDollars: (house: House, level?: number) => evaluator.predict(house, level).estimate,
    pricesInDollars: (houses: readonly House[], level?: number) => evaluator.predictMany(houses, level).map((prediction) => prediction.estimate),
    explain: (house: House, level?: number) => explanation(house, attributor.explain(house, level)),
    explainMany(houses: readonly House[], level?: number) {
      const attributions = attributor.explainMany(houses, level);
      return houses.map((house, i) => explanation(house, attributions[i] as FieldAttribution));
    },
    close: () => attributor.close(),
  };
}
