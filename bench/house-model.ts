/**
 * Benchmark of the house model evaluator: time per house for 1 house and for a batch of
 * 100 houses (the estimate in dollars, as the service computes it), median of many runs.
 *
 *   npx tsx bench/house-model.ts
 */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { REVIEWED_MODEL } from '../src/services/houses/model/index.js';
import type { House } from '../src/services/houses/house.js';
import { dollarAnswer } from '../src/services/houses/model/dollars.js';
import { createEvaluator } from '../src/services/houses/model/evaluator.js';
import { parseModelFile } from '../src/services/houses/model/model-file.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
let t = performance.now();
const model = parseModelFile(readFileSync(resolve(root, REVIEWED_MODEL.path)));
const parseMs = performance.now() - t;
t = performance.now();
const evaluator = createEvaluator(model);
const compileMs = performance.now() - t;

// 100 varied, valid houses inside the model area (deterministic pseudo-random).
let seed = 12345;
const rnd = (): number => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
const houses: House[] = Array.from({ length: 100 }, () => {
  const living = 600 + Math.round(rnd() * 4000);
  const built = 1900 + Math.floor(rnd() * 115);
  return {
    bedrooms: 1 + Math.floor(rnd() * 6),
    bathrooms: 0.25 * (2 + Math.floor(rnd() * 14)),
    floors: 0.5 * (2 + Math.floor(rnd() * 4)),
    sqft_living: living,
    sqft_basement: rnd() < 0.5 ? 0 : Math.round(living * 0.3),
    sqft_lot: 1000 + Math.round(rnd() * 20000),
    waterfront: rnd() < 0.02,
    view: Math.floor(rnd() * 5),
    condition: 1 + Math.floor(rnd() * 5),
    grade: 4 + Math.floor(rnd() * 8),
    yr_built: built,
    yr_renovated: rnd() < 0.1 ? Math.min(2015, built + 20) : 0,
    lat: 47.2 + rnd() * 0.55,
    long: -122.5 + rnd() * 0.8,
    sqft_living15: 800 + Math.round(rnd() * 3000),
    sqft_lot15: 1000 + Math.round(rnd() * 20000),
  };
});

let sink = 0;
function estimateOne(h: House): void {
  sink += dollarAnswer(evaluator.predict(h).estimate, model.range).estimate_usd;
}

/** Median over `runs` samples of the time per house (µs) for `batch` houses per call group. */
function measure(batch: number, runs: number): number {
  const inner = Math.max(1, Math.floor(2000 / batch)); // ~2000 evaluations per sample
  const samples: number[] = [];
  for (let r = 0; r < runs; r++) {
    const start = performance.now();
    for (let k = 0; k < inner; k++) {
      for (let i = 0; i < batch; i++) estimateOne(houses[(i + k) % houses.length] as House);
    }
    samples.push(((performance.now() - start) * 1000) / (inner * batch));
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)] as number;
}

function measureMany(runs: number): number {
  const samples: number[] = [];
  for (let r = 0; r < runs; r++) {
    const start = performance.now();
    for (let k = 0; k < 20; k++) {
      for (const p of evaluator.predictMany(houses)) sink += dollarAnswer(p.estimate, model.range).estimate_usd;
    }
    samples.push(((performance.now() - start) * 1000) / (20 * houses.length));
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)] as number;
}

function measureSingleCall(runs: number): number {
  // One house per timed call: many calls, the median of per-call times over groups of 200.
  const samples: number[] = [];
  for (let r = 0; r < runs; r++) {
    const h = houses[r % houses.length] as House;
    const start = performance.now();
    for (let k = 0; k < 200; k++) estimateOne(h);
    samples.push(((performance.now() - start) * 1000) / 200);
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)] as number;
}

measure(100, 50); // warm-up (JIT)
measureMany(20);
const one = measureSingleCall(2000);
const hundred = measure(100, 400);
const many = measureMany(200);
console.log(`model ${model.model_version}: ${model.trees.length} trees, ${model.features.length} features`);
console.log(`load: parse+check ${parseMs.toFixed(1)} ms, flatten ${compileMs.toFixed(1)} ms`);
console.log(`1 house:    ${one.toFixed(2)} µs per house (median)`);
console.log(`100 houses: ${hundred.toFixed(2)} µs per house, ${(hundred * 100).toFixed(0)} µs per batch (median)`);
console.log(`100 houses with predictMany (tree by tree): ${many.toFixed(2)} µs per house, ${(many * 100).toFixed(0)} µs per batch (median)`);
console.log(`node ${process.version}, ${process.arch}; checksum ${sink > 0 ? 'ok' : '?'}`);
