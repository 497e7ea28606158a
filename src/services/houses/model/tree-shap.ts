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
 * This is what Algorithm 2's EXTEND / UNWIND / UNWOUND_SUM compute along the recursion. Since
 * c(d, k) is the integral over [0, 1] of t^k (1 - t)^(d-1-k), each sum is the integral of a polynomial
 * of degree d - 1, F(t) / (z_i (1 - t) + o_i t) with F(t) = prod_j (z_j (1 - t) + o_j t), computed
 * exactly by a Gauss-Legendre rule of ceil(d / 2) points (as in Linear TreeShap, Yu et al. 2022): no
 * polynomial division, one product per point. The per-leaf paths (distinct features and zero
 * fractions) are precomputed once at load, and for the leaves with at most TABULATED_MAX_DISTINCT
 * distinct features (53% of the shipped model's) the contributions of every possible set O are
 * tabulated too (2.2 MB of float64 for the shipped model; a larger table was slower, its lookups
 * missing the cache). An explanation is then one pass over the splits only (deciding each for x and
 * passing down, as bits of the path's slots, the features on which x left the path) and one over the
 * leaves, tabulated ones first (one lookup), in typed arrays, allocating nothing.
 * Measured CPU per explanation: bench/tree-shap.ts (bench/README.md).
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

/**
 * The leaves of one tree with their paths; `splitSlot[offset + node]` receives, for each split, the
 * position of its feature among the distinct features of the paths through it (order of first split).
 */
function leafPaths(tree: TreeArrays, offset: number, splitSlot: Uint8Array): LeafPath[] {
  const leaves: LeafPath[] = [];
  const walk = (node: number, features: number[], zeros: number[]): void => {
    if (tree.is_leaf[node] === 1) {
      leaves.push({ value: tree.value[node] as number, features, zeros, node: offset + node });
      return;
    }
    const f = tree.feature[node] as number;
    const w = tree.count[node] as number;
    const slot = features.indexOf(f);
    splitSlot[offset + node] = slot < 0 ? features.length : slot;
    for (const child of [tree.left[node] as number, tree.right[node] as number]) {
      const ratio = (tree.count[child] as number) / w;
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

/**
 * The Gauss-Legendre rule of `points` nodes on [0, 1]: pairs [t, w] such that sum w f(t) is the
 * integral of f over [0, 1] for any polynomial f of degree < 2 * points. Nodes by Newton's method on
 * the Legendre polynomial (to float64 precision).
 */
export function gaussLegendre(points: number): [number, number][] {
  const rule: [number, number][] = [];
  for (let i = 0; i < points; i++) {
    let x = Math.cos((Math.PI * (i + 0.75)) / (points + 0.5));
    let derivative = 1;
    for (let step = 0; step < 100; step++) {
      let p0 = 1;
      let p1 = x;
      for (let k = 2; k <= points; k++) [p0, p1] = [p1, ((2 * k - 1) * x * p1 - (k - 1) * p0) / k];
      derivative = (points * (x * p1 - p0)) / (x * x - 1);
      const next = x - p1 / derivative;
      const done = Math.abs(next - x) <= 1e-16;
      x = next;
      if (done) break;
    }
    rule.push([(1 - x) / 2, 1 / ((1 - x * x) * derivative * derivative)]);
  }
  return rule;
}

export function createTreeShap(model: ModelFile): TreeShap {
  const nFeatures = model.features.length;
  let totalNodes = 0;
  let totalSplits = 0;
  for (const t of model.trees) {
    totalNodes += t.feature.length;
    for (const leaf of t.is_leaf) if (leaf !== 1) totalSplits++;
  }
  const splitSlotOfNode = new Uint8Array(totalNodes);
  const paths: LeafPath[] = [];
  let expected = model.baseline;
  let offset = 0;
  for (const t of model.trees) {
    for (const path of leafPaths(t, offset, splitSlotOfNode)) if (path.features.length > 0) paths.push(path); // a one-leaf tree explains nothing
    expected += expectation(t, 0);
    offset += t.feature.length;
  }
  // The splits only, flattened in file order (a child always after its parent), with absolute children.
  const splitNode = new Int32Array(totalSplits);
  const splitFeature = new Int32Array(totalSplits);
  const splitThreshold = new Float64Array(totalSplits);
  const splitMissingLeft = new Uint8Array(totalSplits);
  /** The bit of the split's feature among the path's distinct features (1 << slot). */
  const splitBit = new Int32Array(totalSplits);
  const leftChild = new Int32Array(totalSplits);
  const rightChild = new Int32Array(totalSplits);
  let k = 0;
  offset = 0;
  for (const t of model.trees) {
    for (let i = 0; i < t.feature.length; i++) {
      if (t.is_leaf[i] === 1) continue;
      splitNode[k] = offset + i;
      splitFeature[k] = t.feature[i] as number;
      splitThreshold[k] = t.threshold[i] as number;
      splitMissingLeft[k] = t.missing_go_to_left[i] as number;
      splitBit[k] = 1 << (splitSlotOfNode[offset + i] as number);
      leftChild[k] = offset + (t.left[i] as number);
      rightChild[k] = offset + (t.right[i] as number);
      k++;
    }
    offset += t.feature.length;
  }
  /**
   * Per node, for the current x: the path's distinct features (as slot bits) on whose splits x left
   * the path to the node. Roots stay 0.
   */
  const leftPath = new Int32Array(totalNodes);

  // The leaves, flattened: first those whose contributions are tabulated, then the deeper ones.
  paths.sort((a, b) => Number(a.features.length > TABULATED_MAX_DISTINCT) - Number(b.features.length > TABULATED_MAX_DISTINCT));
  const nLeaves = paths.length;
  const nTabulated = paths.filter((p) => p.features.length <= TABULATED_MAX_DISTINCT).length;
  const leafNode = new Int32Array(nLeaves);
  const leafValue = new Float64Array(nLeaves);
  const leafDistinct = new Uint8Array(nLeaves);
  const leafSlots = new Int32Array(nLeaves); // offset into slotFeature / slotZero
  const leafTable = new Int32Array(nLeaves); // offset into table (tabulated leaves)
  let nSlots = 0;
  let nTable = 0;
  let maxDistinct = 0;
  for (const p of paths) {
    const d = p.features.length;
    nSlots += d;
    if (d <= TABULATED_MAX_DISTINCT) nTable += (1 << d) * d;
    maxDistinct = Math.max(maxDistinct, d);
  }
  if (maxDistinct > 30) throw new Error('TreeSHAP here handles at most 30 distinct features on a path (one bit each)');
  const slotFeature = new Int32Array(nSlots);
  const slotZero = new Float64Array(nSlots);
  let s = 0;
  paths.forEach((p, l) => {
    leafNode[l] = p.node;
    leafValue[l] = p.value;
    leafDistinct[l] = p.features.length;
    leafSlots[l] = s;
    p.features.forEach((f, j) => {
      slotFeature[s + j] = f;
      slotZero[s + j] = p.zeros[j] as number;
    });
    s += p.features.length;
  });

  // Gauss-Legendre rules on [0, 1] of 1 to maxPoints points, at [points * width + q]: the node t, 1 - t,
  // and the weight w, also divided by 1 - t (the zero side's integrand).
  const maxPoints = Math.ceil(maxDistinct / 2);
  const width = maxPoints + 1;
  const node = new Float64Array(width * width);
  const notNode = new Float64Array(width * width);
  const weight = new Float64Array(width * width);
  const zeroWeight = new Float64Array(width * width);
  for (let points = 1; points <= maxPoints; points++) {
    gaussLegendre(points).forEach(([t, w], q) => {
      node[points * width + q] = t;
      notNode[points * width + q] = 1 - t;
      weight[points * width + q] = w;
      zeroWeight[points * width + q] = w / (1 - t);
    });
  }
  /** F(t) = prod_j (z_j (1 - t) + o_j t) at the rule's nodes. */
  const product = new Float64Array(width);
  /** The contribution of leaf l to each of its slots. */
  const slotShare = new Float64Array(maxDistinct);

  /**
   * The contributions of leaf l for the slots x follows (bits of `ones`): with F as above (o_j = 1 for
   * the slots in `ones`), slot j gets value * (o_j - z_j) * integral_0^1 F(t) / (z_j (1 - t) + o_j t) dt,
   * a polynomial of degree d - 1 integrated exactly by the rule of ceil(d / 2) points. (The integral of
   * t^k (1 - t)^(d-1-k) is the Shapley weight k! (d - 1 - k)! / d! of Algorithm 2.)
   */
  function leafShares(l: number, ones: number): void {
    const d = leafDistinct[l] as number;
    const first = leafSlots[l] as number;
    const points = (d + 1) >> 1;
    const rule = points * width;
    for (let q = 0; q < points; q++) product[q] = 1;
    for (let j = 0; j < d; j++) {
      const z = slotZero[first + j] as number;
      const o = (ones >> j) & 1;
      for (let q = 0; q < points; q++) {
        product[q] = (product[q] as number) * (z * (notNode[rule + q] as number) + o * (node[rule + q] as number));
      }
    }
    const value = leafValue[l] as number;
    let zeroSide = 0;
    for (let q = 0; q < points; q++) zeroSide += (zeroWeight[rule + q] as number) * (product[q] as number);
    zeroSide = -value * zeroSide;
    for (let j = 0; j < d; j++) {
      if (!((ones >> j) & 1)) {
        slotShare[j] = zeroSide;
        continue;
      }
      const z = slotZero[first + j] as number;
      let integral = 0;
      for (let q = 0; q < points; q++) {
        integral += ((weight[rule + q] as number) * (product[q] as number)) / (z * (notNode[rule + q] as number) + (node[rule + q] as number));
      }
      slotShare[j] = value * (1 - z) * integral;
    }
  }

  // Leaves with few distinct features: every case of `ones` tabulated once, at [table + ones * d + j].
  const table = new Float64Array(nTable);
  let t = 0;
  for (let l = 0; l < nTabulated; l++) {
    const d = leafDistinct[l] as number;
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
      // Decide every split for x, passing down the path's features on which x left the path.
      for (let k = 0; k < totalSplits; k++) {
        const v = x[splitFeature[k] as number] as number;
        const goLeft = v !== v ? splitMissingLeft[k] === 1 : v <= (splitThreshold[k] as number);
        const here = leftPath[splitNode[k] as number] as number;
        const left = here | (splitBit[k] as number);
        leftPath[leftChild[k] as number] = goLeft ? here : left;
        leftPath[rightChild[k] as number] = goLeft ? left : here;
      }
      for (let l = 0; l < nLeaves; l++) {
        const d = leafDistinct[l] as number;
        const first = leafSlots[l] as number;
        const ones = ~(leftPath[leafNode[l] as number] as number) & ((1 << d) - 1);
        let shares = slotShare;
        let base = 0;
        if (l < nTabulated) {
          shares = table;
          base = (leafTable[l] as number) + ones * d;
        } else {
          leafShares(l, ones);
        }
        for (let j = 0; j < d; j++) {
          const f = slotFeature[first + j] as number;
          out[f] = (out[f] as number) + (shares[base + j] as number);
        }
      }
    },
  };
}
