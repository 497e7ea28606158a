import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REVIEWED_MODEL } from '../../../src/services/houses/model/index.js';
import { parseModelFile } from '../../../src/services/houses/model/model-file.js';
import { REPO_ROOT } from './support.js';

const text = readFileSync(resolve(REPO_ROOT, REVIEWED_MODEL.path), 'utf8');
const shipped = JSON.parse(text) as Record<string, any>;

/**
 * The shipped file with one change, handed to the parser as parsed JSON (one of the forms it takes).
 * Only the top-level parts the change reads are copied (the file is 2 MB; the rest is shared, unchanged).
 */
function refuses(change: (doc: Record<string, any>) => void, message: RegExp): void {
  const doc: Record<string, any> = { ...shipped };
  const copied = new Set<string>();
  const copyOnRead = new Proxy(doc, {
    get(target, key) {
      if (typeof key === 'string' && !copied.has(key)) {
        copied.add(key);
        target[key] = structuredClone(shipped[key]);
      }
      return Reflect.get(target, key);
    },
  });
  change(copyOnRead);
  expect(() => parseModelFile(doc)).toThrow(message);
}

describe('model file parser', () => {
  it('accepts the shipped file, as text, bytes or parsed JSON', () => {
    const a = parseModelFile(text);
    expect(parseModelFile(Buffer.from(text))).toEqual(a);
    expect(parseModelFile(JSON.parse(text))).toEqual(a);
    expect(a.features.slice(0, 16).map((f) => f.name)).toContain('sqft_lot15');
  });

  it('refuses a malformed file with a clear message', () => {
    expect(() => parseModelFile('{"format_version": 1')).toThrow(/malformed model file: not JSON/);
    expect(() => parseModelFile('[]')).toThrow(/malformed model file: must be object/);
    expect(() => parseModelFile('{"format_version": 3}')).toThrow(/malformed model file: model_version, prices_as_of, features, .*comparable_sales: missing/);
    refuses((d) => (d.format_version = 1), /format_version: unsupported 1/);
    refuses((d) => (d.format_version = 2), /format_version: unsupported 2, expected 3/);
    refuses((d) => delete d.price_index, /malformed model file: price_index: missing/);
    refuses((d) => (d.price_index.months[1].month = '2014-07'), /price_index\.months\[1\]: expected the month after the previous one/);
    refuses((d) => (d.price_index.months[0].month = '2014-13'), /price_index\.months\[0\]\.month: /);
    refuses((d) => (d.price_index.as_of_month = '2015-01'), /price_index\.as_of_month: expected the month of prices_as_of, a month of the index/);
    refuses((d) => (d.price_index.months = d.price_index.months.slice(-3)), /price_index\.months: fewer months than the trend needs/);
    refuses((d) => (d.trees[2].count[1] = 0), /trees\[2\]\.count\[1\]: must be >= 1/);
    refuses((d) => (d.trees[2].count[0] = Number(d.trees[2].count[0]) + 1), /trees\[2\]\.node 0: count \d+ is not the sum of its children's \(\d+ \+ \d+\)/);
    refuses((d) => (d.trees[0].left[0] = d.trees[0].right[0]), /trees\[0\]\.node 0: a child of two splits/);
    refuses((d) => d.comparable_sales.columns.price.pop(), /comparable_sales\.columns\.price: expected \d+ items, got \d+/);
    refuses((d) => delete d.comparable_sales.columns.grade, /comparable_sales\.columns\.grade: missing/);
    refuses((d) => d.comparable_sales.date_runs.pop(), /comparable_sales\.date_runs: the runs count \d+ sales, expected \d+/);
    refuses((d) => delete d.trees, /malformed model file: trees: missing/);
    refuses((d) => (d.trees = []), /trees: must not have fewer than 1 items/);
    refuses((d) => (d.trees[3].left[0] = 0), /trees\[3\]\.node 0: child index out of range/);
    refuses((d) => (d.trees[0].threshold = d.trees[0].threshold.slice(1)), /trees\[0\]\.threshold: expected \d+ items, got \d+/);
    refuses((d) => (d.trees[0].feature[0] = 99), /trees\[0\]\.node 0: feature index 99 outside 0\.\.21/);
    refuses((d) => (d.trees[0].value[1] = 'x'), /trees\[0\]\.value\[1\]: must be number/);
    refuses((d) => (d.features[0].name = 'zipcode'), /features\[0\]\.name: expected one of "bedrooms", .*"sqft_lot15"/);
    refuses((d) => (d.features[16].kind = 'log'), /features\[16\]: expected \{kind: "input", name: a request field\}, \{kind: "add_scaled", name, x, y, c\} or \{kind: "max", name, x, y\}/);
    refuses((d) => (d.target_transform.name = 'sqrt'), /target_transform\.name: expected "log_price_per_sqft_living"/);
    refuses((d) => (d.baseline = null), /baseline: must be number/);
    refuses((d) => (d.high_value_usd = '1e6'), /high_value_usd: must be number/);
    refuses((d) => (d.range.low_factor = 1.5), /range\.low_factor: must be <= 1/);
    refuses((d) => (d.model_area.lat_max = 0), /model_area: empty area/);
    refuses((d) => delete d.rare_value_thresholds[0].max.sqft_lot15, /rare_value_thresholds\[0\]\.max\.sqft_lot15: missing/);
    refuses((d) => (d.card.not_for = ['anything']), /card\.not_for: must state: not for lending/);
    refuses((d) => delete d.card.test.mape_pct, /card\.test\.mape_pct: missing/);
    refuses((d) => (d.card.model_version = 'other'), /card: model_version \/ prices_as_of differ/);
  });
});
