/**
 * Exact path-dependent TreeSHAP (Lundberg, Erion and Lee 2018, "Consistent Individualized Feature
 * Attribution for Tree Ensembles", Algorithm 2) over the model file's trees: for one input vector, the
 * SHAP value of each model feature, such that expectedValue + sum(values) equals the trees' raw sum
 * (to float64 rounding). The values are those of the `shap` package's TreeExplainer with
 * feature_perturbation="tree_path_dependent" (checked on every house of the CSV by
 * test/houses/model/explanation-parity.test.ts): an "absent" feature follows both sides of its
 * splits, weighted by the training samples that went each way (the nodes' `count`).
 *
 * Algorithm 2 computes, for each leaf, the Shapley weights of the distinct features on the leaf's
 * path. Each such feature j has a zero fraction z_j (the product, over the path's splits on j, of
 * count(child on the path) / count(node)) and a one fraction o_j (1 when x follows every split on j
 * of the path, else 0). With d distinct features, O the features with o_j = 1, Z the others, and
 * P(t) = prod_{j in Z} z_j * prod_{j in O} (z_j + t), the leaf's value v adds
 *   for i in Z: -v * sum_k c(d, k) [t^k] P(t)
 *   for i in O: v * (1 - z_i) * sum_k c(d, k) [t^k] (P(t) / (z_i + t)),
 * where c(d, k) = k! (d - 1 - k)! / d! (the Shapley weight of a coalition of k of the other d - 1).
 * This is what Algorithm 2's EXTEND / UNWIND / UNWOUND_SUM compute along the recursion. Here the
 * per-leaf paths (distinct features and zero fractions) are precomputed once at load, and for the
 * leaves with at most TABULATED_MAX_DISTINCT distinct features (53% of the shipped model's) the
 * contributions of every possible set O are tabulated too (2.2 MB of float64 for the shipped model;
 * a larger table was slower, its lookups missing the cache).
 * An explanation is then one pass over the splits (deciding each for x and passing down, as bits,
 * the features on which x left the path) and one over the leaves (look up, or compute the O(d^2)
 * polynomial for the few deep leaves), in typed arrays, allocating nothing.
 */
import type { ModelFile, TreeArrays } from './model-file.js';

export interface TreeShap {
  /** shap's expected_value: baseline + each tree's mean leaf value weighted by the training counts. */
  readonly expectedValue: number;
  readonly featureCount: number;
  /** Writes the SHAP values of the input vector `x` (the model's features) into `out`. */
  shapValues(x: Float64Array, out: Float64Array): void;
}

/** The training-count weighted mean of a tree's leaf values below `node` (shap's compute_expectations). */
function expectation(tree: TreeArrays, node: number): number {
  if (tree.is_leaf[node] === 1) return tree.value[node] as number;
  const l = tree.left[node] as number;
  const r = tree.right[node] as number;
  const wl = tree.count[l] as number;
  const wr = tree.count[r] as number;
  return (wl * expectation(tree, l) + wr * expectation(tree, r)) / (wl + wr);
}

interface LeafPath {
  value: number;
  /** Distinct features of the path, in order of first split, and their zero fractions. */
  features: number[];
  zeros: number[];
  /** The leaf's absolute node index. */
  node: number;
}

function leafPaths(tree: TreeArrays, offset: number): LeafPath[] {
  const leaves: LeafPath[] = [];
  const walk = (node: number, features: number[], zeros: number[]): void => {
    if (tree.is_leaf[node] === 1) {
      leaves.push({ value: tree.value[node] as number, features, zeros, node: offset + node });
      return;
    }
    const f = tree.feature[node] as number;
    const w = tree.count[node] as number;
    for (const child of [tree.left[node] as number, tree.right[node] as number]) {
      const ratio = (tree.count[child] as number) / w;
      const slot = features.indexOf(f);
      const nextFeatures = [...features];
      const nextZeros = [...zeros];
      if (slot < 0) {
        nextFeatures.push(f);
        nextZeros.push(ratio);
      } else {
        nextZeros[slot] = ratio * (nextZeros[slot] as number);
      }
      walk(child, nextFeatures, nextZeros);
    }
  };
  walk(0, [], []);
  return leaves;
}

/** Leaves with at most this many distinct path features get their contributions tabulated at load. */
const TABULATED_MAX_DISTINCT = 4;

export function createTreeShap(model: ModelFile): TreeShap {
  const nFeatures = model.features.length;
  if (nFeatures > 31) throw new Error('TreeSHAP here handles at most 31 model features (one bit each)');
  let totalNodes = 0;
  for (const t of model.trees) totalNodes += t.feature.length;
  // Every node of every tree, flattened in file order (a child always after its parent).
  const splitFeature = new Int32Array(totalNodes).fill(-1);
  const splitThreshold = new Float64Array(totalNodes);
  const splitMissingLeft = new Uint8Array(totalNodes);
  const leftChild = new Int32Array(totalNodes);
  const rightChild = new Int32Array(totalNodes);
  /** Per node, for the current x: the features on whose splits x left the path to the node (bits). */
  const leftPath = new Int32Array(totalNodes);
  const paths: LeafPath[] = [];
  const leafNodes: number[] = [];
  let expected = 0;
  expected += model.baseline;
  let offset = 0;
  for (const t of model.trees) {
    for (let i = 0; i < t.feature.length; i++) {
      if (t.is_leaf[i] === 1) continue;
      splitFeature[offset + i] = t.feature[i] as number;
      splitThreshold[offset + i] = t.threshold[i] as number;
      splitMissingLeft[offset + i] = t.missing_go_to_left[i] as number;
      leftChild[offset + i] = offset + (t.left[i] as number);
      rightChild[offset + i] = offset + (t.right[i] as number);
    }
    for (const path of leafPaths(t, offset)) {
      paths.push(path);
      leafNodes.push(path.node);
    }
    expected += expectation(t, 0);
    offset += t.feature.length;
  }

  // The leaves, flattened.
  const nLeaves = paths.length;
  const leafNode = Int32Array.from(leafNodes);
  const leafValue = new Float64Array(nLeaves);
  const leafDistinct = new Uint8Array(nLeaves);
  const leafSlots = new Int32Array(nLeaves); // offset into slotFeature / slotZero
  const leafTable = new Int32Array(nLeaves).fill(-1); // offset into table, -1: computed per explanation
  let nSlots = 0;
  let nTable = 0;
  let maxDistinct = 0;
  for (const p of paths) {
    const d = p.features.length;
    nSlots += d;
    if (d <= TABULATED_MAX_DISTINCT) nTable += (1 << d) * d;
    maxDistinct = Math.max(maxDistinct, d);
  }
  const slotFeature = new Int32Array(nSlots);
  const slotZero = new Float64Array(nSlots);
  let s = 0;
  paths.forEach((p, l) => {
    leafValue[l] = p.value;
    leafDistinct[l] = p.features.length;
    leafSlots[l] = s;
    p.features.forEach((f, k) => {
      slotFeature[s + k] = f;
      slotZero[s + k] = p.zeros[k] as number;
    });
    s += p.features.length;
  });

  // c(d, k) = k! (d - 1 - k)! / d!, at [d * width + k].
  const width = maxDistinct + 1;
  const shapleyWeight = new Float64Array(width * width);
  const factorial = (n: number): number => (n <= 1 ? 1 : n * factorial(n - 1));
  for (let d = 1; d <= maxDistinct; d++) {
    for (let k = 0; k < d; k++) shapleyWeight[d * width + k] = (factorial(k) * factorial(d - 1 - k)) / factorial(d);
  }
  const poly = new Float64Array(width + 1);
  const quotient = new Float64Array(width + 1);
  /** The contribution of leaf l to each of its slots, for the slots x follows (bits of `ones`). */
  const slotShare = new Float64Array(width);

  function leafShares(l: number, ones: number): void {
    const d = leafDistinct[l] as number;
    const first = leafSlots[l] as number;
    // P(t) = prod_{Z} z_j * prod_{O} (z_j + t), coefficients poly[0..m].
    poly[0] = 1;
    let m = 0;
    for (let j = 0; j < d; j++) {
      const z = slotZero[first + j] as number;
      if ((ones >> j) & 1) {
        poly[m + 1] = poly[m] as number;
        for (let k = m; k > 0; k--) poly[k] = z * (poly[k] as number) + (poly[k - 1] as number);
        poly[0] = z * (poly[0] as number);
        m++;
      } else {
        for (let k = 0; k <= m; k++) poly[k] = z * (poly[k] as number);
      }
    }
    const value = leafValue[l] as number;
    const row = d * width;
    let zeroSide = 0;
    if (m < d) {
      for (let k = 0; k <= m; k++) zeroSide += (shapleyWeight[row + k] as number) * (poly[k] as number);
      zeroSide = -value * zeroSide;
    }
    for (let j = 0; j < d; j++) {
      if (!((ones >> j) & 1)) {
        slotShare[j] = zeroSide;
        continue;
      }
      // P(t) / (z_j + t), by synthetic division from the top coefficient.
      const z = slotZero[first + j] as number;
      quotient[m - 1] = poly[m] as number;
      for (let k = m - 1; k > 0; k--) quotient[k - 1] = (poly[k] as number) - z * (quotient[k] as number);
      let w = 0;
      for (let k = 0; k < m; k++) w += (shapleyWeight[row + k] as number) * (quotient[k] as number);
      slotShare[j] = value * (1 - z) * w;
    }
  }

  // Leaves with few distinct features: every case of `ones` tabulated once, at [table + ones * d + j].
  const table = new Float64Array(nTable);
  let t = 0;
  for (let l = 0; l < nLeaves; l++) {
    const d = leafDistinct[l] as number;
    if (d > TABULATED_MAX_DISTINCT) continue;
    leafTable[l] = t;
    for (let ones = 0; ones < 1 << d; ones++) {
      leafShares(l, ones);
      for (let j = 0; j < d; j++) table[t + ones * d + j] = slotShare[j] as number;
    }
    t += (1 << d) * d;
  }

  return {
    expectedValue: expected,
    featureCount: nFeatures,
    shapValues(x: Float64Array, out: Float64Array): void {
      if (x.length !== nFeatures || out.length !== nFeatures) throw new Error(`expected ${nFeatures} features`);
      out.fill(0);
      // Decide every split for x, passing down the features on which x left the path.
      for (let n = 0; n < totalNodes; n++) {
        const f = splitFeature[n] as number;
        if (f < 0) continue;
        const v = x[f] as number;
        const goLeft = v !== v ? splitMissingLeft[n] === 1 : v <= (splitThreshold[n] as number);
        const here = leftPath[n] as number;
        const bit = 1 << f;
        leftPath[leftChild[n] as number] = goLeft ? here : here | bit;
        leftPath[rightChild[n] as number] = goLeft ? here | bit : here;
      }
      for (let l = 0; l < nLeaves; l++) {
        const d = leafDistinct[l] as number;
        if (d === 0) continue; // a tree that is one leaf explains nothing
        const first = leafSlots[l] as number;
        const left = leftPath[leafNode[l] as number] as number;
        let ones = 0;
        for (let j = 0; j < d; j++) if (!((left >> (slotFeature[first + j] as number)) & 1)) ones |= 1 << j;
        const at = leafTable[l] as number;
        if (at >= 0) {
          const base = at + ones * d;
          for (let j = 0; j < d; j++) {
            const f = slotFeature[first + j] as number;
            out[f] = (out[f] as number) + (table[base + j] as number);
          }
        } else {
          leafShares(l, ones);
          for (let j = 0; j < d; j++) {
            const f = slotFeature[first + j] as number;
            out[f] = (out[f] as number) + (slotShare[j] as number);
          }
        }
      }
    },
  };
}
