import type { HouseModel, RareValueGroup } from './house-model.js';
import { HOUSE_FIELDS, type House, type HouseField } from './schemas.js';

/**
 * TEMPORARY: parses a provisional layout of the model file until model/model-file.ts and
 * model/evaluator.ts (issue 3) land; then this file only joins those into a HouseModel.
 */
interface Node {
  feature?: number;
  threshold?: number;
  left?: number;
  right?: number;
  value?: number;
}

function fail(message: string): never {
  throw new Error(`model file: ${message}`);
}

export function parseHouseModel(bytes: Buffer): HouseModel {
  const file = JSON.parse(bytes.toString('utf8')) as Record<string, any>;
  if (!Array.isArray(file.trees)) fail('trees missing');
  const features = file.features as HouseField[];
  const trees = file.trees as { nodes: Node[] }[];
  const baseline = Number(file.baseline);
  const groups: RareValueGroup[] = (file.rare_value_thresholds as { fields: HouseField[]; above: Record<string, number> }[]).map((group) => ({
    fields: group.fields,
    isRare: (house: House) => group.fields.some((field) => Number(house[field]) > (group.above[field] ?? Infinity)),
  }));
  for (const feature of features) if (!HOUSE_FIELDS.includes(feature)) fail(`unknown feature ${feature}`);
  return {
    version: String(file.model_version),
    pricesAsOf: String(file.prices_as_of),
    area: file.model_area,
    rareValueGroups: groups,
    range: { lowFactor: file.range.low_factor, highFactor: file.range.high_factor },
    card: file.card,
    priceInDollars(house: House): number {
      const row = features.map((feature) => Number(house[feature]));
      let sum = baseline;
      for (const tree of trees) {
        let node = tree.nodes[0];
        while (node && node.value === undefined) {
          node = tree.nodes[(row[node.feature ?? 0] ?? 0) <= (node.threshold ?? 0) ? (node.left ?? 0) : (node.right ?? 0)];
        }
        sum += node?.value ?? 0;
      }
      return Math.exp(sum);
    },
  };
}
