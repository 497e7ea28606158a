import type { HouseModel, RareValueGroup } from './house-model.js';
import { HOUSE_FIELDS, type House, type HouseField } from './schemas.js';

/**
 * TEMPORARY: reads the model file format of training/train.py (format_version 1) until
 * model/model-file.ts and model/evaluator.ts (issue 3) land; then this file only joins those into
 * a HouseModel.
 */
interface FeatureSpec {
  name: string;
  kind: 'input' | 'add_scaled' | 'max';
  x?: HouseField;
  y?: HouseField;
  c?: number;
}
interface TreeArrays {
  feature: number[];
  threshold: number[];
  missing_go_to_left: number[];
  left: number[];
  right: number[];
  is_leaf: number[];
  value: number[];
}
interface ModelFileV1 {
  format_version: number;
  model_version: string;
  prices_as_of: string;
  features: FeatureSpec[];
  baseline: number;
  trees: TreeArrays[];
  range: { low_factor: number; high_factor: number };
  model_area: { lat_min: number; lat_max: number; long_min: number; long_max: number };
  rare_value_thresholds: { fields: HouseField[]; max: Record<string, number> }[];
  card: Record<string, unknown>;
}

const inputValue = (house: House, field: HouseField): number => {
  const value = house[field];
  return typeof value === 'boolean' ? (value ? 1 : 0) : value;
};

export function parseHouseModel(bytes: Buffer): HouseModel {
  const file = JSON.parse(bytes.toString('utf8')) as ModelFileV1;
  if (file.format_version !== 1 || !Array.isArray(file.trees) || !Array.isArray(file.features)) {
    throw new Error('not a model file of format_version 1');
  }
  for (const spec of file.features) {
    for (const field of [spec.kind === 'input' ? spec.name : spec.x, ...(spec.kind === 'input' ? [] : [spec.y])]) {
      if (!HOUSE_FIELDS.includes(field as HouseField)) throw new Error(`unknown field in feature ${spec.name}`);
    }
  }
  const row = new Float64Array(file.features.length);
  const rareValueGroups: RareValueGroup[] = file.rare_value_thresholds.map((group) => ({
    fields: group.fields,
    isRare: (house: House) => group.fields.some((field) => inputValue(house, field) > (group.max[field] ?? Infinity)),
  }));
  return {
    version: file.model_version,
    pricesAsOf: file.prices_as_of,
    area: {
      lat: { min: file.model_area.lat_min, max: file.model_area.lat_max },
      long: { min: file.model_area.long_min, max: file.model_area.long_max },
    },
    rareValueGroups,
    range: { lowFactor: file.range.low_factor, highFactor: file.range.high_factor },
    card: file.card,
    priceInDollars(house: House): number {
      file.features.forEach((spec, index) => {
        if (spec.kind === 'input') row[index] = inputValue(house, spec.name as HouseField);
        else {
          const x = inputValue(house, spec.x as HouseField);
          const y = inputValue(house, spec.y as HouseField);
          row[index] = spec.kind === 'max' ? (x >= y ? x : y) : x + (spec.c ?? 0) * y;
        }
      });
      let raw = 0;
      raw += file.baseline;
      for (const tree of file.trees) {
        let node = 0;
        while (tree.is_leaf[node] === 0) {
          const value = row[tree.feature[node] ?? 0] ?? 0;
          node = (value <= (tree.threshold[node] ?? 0) ? tree.left[node] : tree.right[node]) ?? 0;
        }
        raw += tree.value[node] ?? 0;
      }
      return Math.exp(raw) * house.sqft_living;
    },
  };
}
