import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createEvaluator } from '../src/services/houses/model/evaluator.js';
import { parseModelFile } from '../src/services/houses/model/model-file.js';
import type { createTreeShap as CreateTreeShap } from '../src/services/houses/model/tree-shap.js';
import { CSV_PATH, readSales } from '../test/houses/model/support.js';
import { REPO_ROOT } from './support.js';

/**
 * TreeSHAP alone (src/services/houses/model/tree-shap.ts) on the shipped model: CPU µs per
 * explanation (shapValues of one house's feature vector), over the houses of kc_house_data.csv in
 * turn, after a warm-up; the least of 5 rounds. With other module paths as arguments (e.g. an earlier
 * version written out by `git show REV:src/services/houses/model/tree-shap.ts > /tmp/before.ts`), each
 * is measured in the same run, rounds interleaved, and its values compared with the first module's
 * (largest absolute difference).
 * Usage: npx tsx bench/tree-shap.ts [module.ts ...]; about 20 s per module.
 */
const modules = process.argv.length > 2 ? process.argv.slice(2).map((path) => resolve(path)) : [resolve(REPO_ROOT, 'src/services/houses/model/tree-shap.ts')];
const model = parseModelFile(readFileSync(resolve(REPO_ROOT, 'models/kc-hgb-drift-2015-02.json')));
const evaluator = createEvaluator(model);
const inputs = readSales(CSV_PATH).map((sale) => Float64Array.from(evaluator.features(sale.house)));
const n = model.features.length;

const explainers = await Promise.all(
  modules.map(async (path) => {
    const { createTreeShap } = (await import(pathToFileURL(path).href)) as { createTreeShap: typeof CreateTreeShap };
    const started = process.cpuUsage();
    const shap = createTreeShap(model);
    const used = process.cpuUsage(started);
    return { path, shap, loadMs: (used.user + used.system) / 1000, best: Infinity };
  }),
);

/** CPU µs per explanation over `count` houses. */
function round(shap: ReturnType<typeof CreateTreeShap>, count: number): number {
  const out = new Float64Array(n);
  const started = process.cpuUsage();
  for (let i = 0; i < count; i++) shap.shapValues(inputs[i % inputs.length] as Float64Array, out);
  const used = process.cpuUsage(started);
  return (used.user + used.system) / count;
}

const COUNT = 4000;
for (const e of explainers) round(e.shap, 2000); // warm-up
for (let r = 0; r < 5; r++) for (const e of explainers) e.best = Math.min(e.best, round(e.shap, COUNT));

// Largest difference from the first module's values, over every house of the CSV.
const reference = explainers[0]!.shap;
const a = new Float64Array(n);
const b = new Float64Array(n);
console.log('| module | CPU µs per explanation (least of 5 rounds of 4000) | build at load, ms | max abs difference from the first |\n|---|---:|---:|---:|');
for (const e of explainers) {
  let worst = 0;
  for (const x of inputs) {
    reference.shapValues(x, a);
    e.shap.shapValues(x, b);
    for (let i = 0; i < n; i++) worst = Math.max(worst, Math.abs((a[i] as number) - (b[i] as number)));
  }
  console.log(`| ${e.path.replace(`${REPO_ROOT}/`, '')} | ${e.best.toFixed(1)} | ${e.loadMs.toFixed(0)} | ${worst.toExponential(1)} |`);
}
console.log(`\n${inputs.length} houses; node ${process.version}; load average ${(await import('node:os')).loadavg()[0]?.toFixed(1)}`);
