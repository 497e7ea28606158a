import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { House } from '../../../src/services/houses/house.js';
import { createEvaluator } from '../../../src/services/houses/model/evaluator.js';
import { parseModelFile } from '../../../src/services/houses/model/model-file.js';
import { createSharedTreeShap } from '../../../src/services/houses/model/shared-tree-shap.js';
import { createTreeShap, SHAP_CHUNKS } from '../../../src/services/houses/model/tree-shap.js';
import { REVIEWED_MODEL } from '../../../src/services/houses/model/index.js';
import { REPO_ROOT } from './support.js';

/**
 * TreeSHAP on two threads (model/shared-tree-shap.ts, the explained-estimates decisions' speed): whoever computes which chunk
 * of an explanation or which house of a batch, the values are those of the one-thread TreeSHAP to the
 * last bit; before the worker is ready and after it is stopped the service thread computes alone.
 */
const model = parseModelFile(readFileSync(resolve(REPO_ROOT, REVIEWED_MODEL.path)));
const evaluator = createEvaluator(model);
const golden = JSON.parse(readFileSync(resolve(REPO_ROOT, 'test/fixtures/houses/golden-houses.json'), 'utf8')) as { houses: { house: House }[] };
const inputs = golden.houses.map(({ house }) => evaluator.features(house));
const alone = createTreeShap(model);
const n = model.features.length;

const computed = new WeakMap<Float64Array, Float64Array>();

/** The one-thread values of an input, computed once per input. */
function expected(x: Float64Array): Float64Array {
  let out = computed.get(x);
  if (out === undefined) {
    out = new Float64Array(n);
    alone.shapValues(x, out);
    computed.set(x, out);
  }
  return out;
}

describe('TreeSHAP shared with a worker thread', () => {
  const shared = createSharedTreeShap(model);
  afterAll(() => shared.close());

  it('gives the one-thread values to the bit before its worker is ready', () => {
    const out = new Float64Array(n);
    shared.shapValues(inputs[0] as Float64Array, out); // starts the worker
    expect(out).toEqual(expected(inputs[0] as Float64Array));
  });

  it('the worker gets ready on a machine of two cores or more (never on one)', async () => {
    const twoCores = availableParallelism() >= 2;
    for (let waited = 0; twoCores && !shared.shared && waited < 20_000; waited += 50) {
      shared.shapValues(inputs[0] as Float64Array, new Float64Array(n));
      await new Promise((resolveWait) => setTimeout(resolveWait, 50));
    }
    expect(shared.shared).toBe(twoCores);
  });

  it(`one explanation, its ${SHAP_CHUNKS} chunks shared: the one-thread values to the bit, for every golden house, many times`, () => {
    const out = new Float64Array(n);
    for (let round = 0; round < 20; round++) {
      for (const x of inputs) {
        shared.shapValues(x, out);
        expect(out).toEqual(expected(x));
      }
    }
  });

  it('a batch of 100 houses shared house by house (and 130, in jobs of 100): the one-thread values to the bit', () => {
    for (const count of [100, 130, 1]) {
      const xs = Array.from({ length: count }, (_, i) => inputs[i % inputs.length] as Float64Array);
      const outs = xs.map(() => new Float64Array(n));
      shared.shapValuesMany(xs, outs);
      outs.forEach((out, i) => expect(out).toEqual(expected(xs[i] as Float64Array)));
    }
  });

  it('after close, the service thread computes alone, the same values', async () => {
    await shared.close();
    expect(shared.shared).toBe(false);
    const out = new Float64Array(n);
    shared.shapValues(inputs[1] as Float64Array, out);
    expect(out).toEqual(expected(inputs[1] as Float64Array));
    const outs = [new Float64Array(n)];
    shared.shapValuesMany([inputs[2] as Float64Array], outs);
    expect(outs[0]).toEqual(expected(inputs[2] as Float64Array));
  });
});
