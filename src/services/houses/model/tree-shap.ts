/**
 * Exact path-dependent TreeSHAP (Lundberg, Erion and Lee 2018, "Consistent Individualized Feature
 * Attribution for Tree Ensembles", Algorithm 2) over the model file's trees: for one input vector, the
 * SHAP value of each model feature, such that expectedValue + sum(values) equals the trees' raw sum
 * (to float64 rounding). The values are those of the `shap` package's TreeExplainer with
 * feature_perturbation="tree_path_dependent" (checked on every house of the CSV by
 * test/houses/model/parity.python.test.ts): an "absent" feature follows both sides of its splits, weighted
 * by the training samples that went each way (the nodes' `count`).
 *
 * The formula. Algorithm 2 computes, for each leaf, the Shapley weights of the distinct features on
 * the leaf's path. Each such feature j has a zero fraction z_j (the product, over the path's splits on
 * j, of count(child on the path) / count(node)) and a one fraction o_j (1 when x follows every split on
 * j of the path, else 0). With d distinct features and F(t) = prod_j (z_j (1 - t) + o_j t), the leaf's
 * value v adds to feature j
 *   v * (o_j - z_j) * integral_0^1 F(t) / (z_j (1 - t) + o_j t) dt,
 * which is Algorithm 2's EXTEND / UNWIND / UNWOUND_SUM (the integral of t^k (1 - t)^(d-1-k) is the
 * Shapley weight k! (d - 1 - k)! / d!). The integrand is a polynomial of degree d - 1, integrated
 * exactly by the Gauss-Legendre rule of ceil(d / 2) points (as in Linear TreeShap, Yu et al. 2022).
 * For j with o_j = 0 it is -v * integral F(t) / (1 - t): the same for every such feature of the leaf.
 *
 * Leaves are taken by their parent split ("units"). A split on feature g with one or two leaf
 * children A and B: above the split the two paths are one, so for the unit's other features
 * F_A(t) = Q(t) q_A(t) and F_B(t) = Q(t) q_B(t), where Q is the product over the features other than
 * g and q_X(t) = z_g,X (1 - t) + o_g,X t. Both leaves together then add
 *   to j != g: (o_j - z_j) integral Q(t) M(t) / (z_j (1 - t) + o_j t) dt, M = v_A q_A + v_B q_B,
 *   to g:      (v_A (o_g,A - z_g,A) + v_B (o_g,B - z_g,B)) integral Q(t) dt,
 * one product and one set of sums for both leaves (a lone leaf child is a unit with v_B = 0). The
 * shipped model's 14,250 leaves are 10,143 units.
 *
 * What runs per explanation: one pass over the splits (deciding each for x and passing down, as bits
 * of the path's slots, the features on which x left the path), then one over the units: those with
 * at most TABULATED_MAX_DISTINCT distinct features by one lookup in a table of every case computed at
 * load, those with up to 8 (a 4-point rule) by a kernel that keeps the rule's four values in locals,
 * and the few deeper ones by the general code. Typed arrays throughout, nothing allocated. The units
 * are cut into SHAP_CHUNKS chunks, summed in order, so that two threads can share an explanation
 * (shared-tree-shap.ts) with the same values to the bit.
 * Measured CPU per explanation: bench/tree-shap.ts (bench/README.md, "Explained estimates").
 */
import type { ModelFile, TreeArrays } from './model-file.js';

export interface TreeShap {
  /** shap's expected_value: baseline + each tree's mean leaf value weighted by the training counts. */
  readonly expectedValue: number;
  readonly featureCount: number;
  /** Writes the SHAP values of the input vector `x` (the model's features) into `out`. */
  shapValues(x: Float64Array, out: Float64Array): void;
  /**
   * The same in parts, for two threads sharing one explanation: decideSplits(x) once per thread, then
   * addChunk(c, out) writes the contributions of the units of chunk c (0 to SHAP_CHUNKS - 1) into
   * out (written, not added). shapValues is the sum of the chunks in order, so either way the values
   * are the same to the last bit.
   */
  decideSplits(x: Float64Array): void;
  addChunk(chunk: number, out: Float64Array): void;
}

/** How many chunks the units are cut into (each of the three kinds of unit in equal parts). */
export const SHAP_CHUNKS = 8;

/** The training-count weighted mean of a tree's leaf values below `node` (shap's compute_expectations). */
function expectation(tree: TreeArrays, node: number): number {
  if (tree.is_leaf[node] === 1) return tree.value[node] as number;
  const l = tree.left[node] as number;
  const r = tree.right[node] as number;
  const wl = tree.count[l] as number;
  const wr = tree.count[r] as number;
  return (wl * expectation(tree, l) + wr * expectation(tree, r)) / (wl + wr);
}

/** A split with one or two leaf children, as the explanation uses it. */
interface Unit {
  /** Distinct features of the leaves' path, in order of first split, and their zero fractions above the split. */
  features: number[];
  zeros: number[];
  /** The slot of the split's feature g among `features`. */
  g: number;
  /** Absolute node, value and zero fraction of g of leaf A and of leaf B (node -1 and value 0 when there is none). */
  nodeA: number;
  valueA: number;
  zeroA: number;
  nodeB: number;
  valueB: number;
  zeroB: number;
}

/**
 * The units of one tree; `splitSlot[offset + node]` receives, for each split, the position of its
 * feature among the distinct features of the paths through it (order of first split).
 */
function treeUnits(tree: TreeArrays, offset: number, splitSlot: Uint8Array): Unit[] {
  const units: Unit[] = [];
  const walk = (node: number, features: number[], zeros: number[]): void => {
    const f = tree.feature[node] as number;
    const w = tree.count[node] as number;
    const known = features.indexOf(f);
    const g = known < 0 ? features.length : known;
    splitSlot[offset + node] = g;
    const nextFeatures = known < 0 ? [...features, f] : features;
    const zeroOf = (child: number): number => ((tree.count[child] as number) / w) * (known < 0 ? 1 : (zeros[known] as number));
    const leaves: [number, number, number][] = [];
    for (const child of [tree.left[node] as number, tree.right[node] as number]) {
      if (tree.is_leaf[child] === 1) {
        leaves.push([offset + child, tree.value[child] as number, zeroOf(child)]);
      } else {
        const nextZeros = [...zeros];
        nextZeros[g] = zeroOf(child);
        walk(child, nextFeatures, nextZeros);
      }
    }
    const [a, b] = leaves;
    if (a === undefined) return;
    const [nodeB, valueB, zeroB] = b ?? [-1, 0, 0];
    units.push({ features: nextFeatures, zeros: [...zeros, ...(known < 0 ? [1] : [])], g, nodeA: a[0], valueA: a[1], zeroA: a[2], nodeB, valueB, zeroB });
  };
  if (tree.is_leaf[0] !== 1) walk(0, [], []); // a one-leaf tree explains nothing
  return units;
}

/** Units with at most this many distinct path features get their contributions tabulated at load. */
const TABULATED_MAX_DISTINCT = 4;
/** Units with at most this many distinct features (and more than the above) use the 4-point kernel. */
const KERNEL_MAX_DISTINCT = 8;

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

/** What a TreeSHAP needs of the model file. */
export type ShapModel = Pick<ModelFile, 'baseline' | 'features' | 'trees'>;

export function createTreeShap(model: ShapModel): TreeShap {
  const nFeatures = model.features.length;
  let totalNodes = 0;
  let totalSplits = 0;
  for (const t of model.trees) {
    totalNodes += t.feature.length;
    for (const leaf of t.is_leaf) if (leaf !== 1) totalSplits++;
  }
  const splitSlotOfNode = new Uint8Array(totalNodes);
  const units: Unit[] = [];
  let expected = model.baseline;
  let offset = 0;
  for (const t of model.trees) {
    units.push(...treeUnits(t, offset, splitSlotOfNode));
    expected += expectation(t, 0);
    offset += t.feature.length;
  }
  // The splits only, flattened in file order (a child always after its parent), with absolute children.
  const splitFeature = new Int32Array(totalSplits);
  const splitThreshold = new Float64Array(totalSplits);
  const splitMissingRight = new Uint8Array(totalSplits);
  const splitNode = new Int32Array(totalSplits);
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
      splitMissingRight[k] = 1 - (t.missing_go_to_left[i] as number);
      splitBit[k] = 1 << (splitSlotOfNode[offset + i] as number);
      leftChild[k] = offset + (t.left[i] as number);
      rightChild[k] = offset + (t.right[i] as number);
      k++;
    }
    offset += t.feature.length;
  }
  /**
   * Per node, for the current x: the path's distinct features (as slot bits) on whose splits x left
   * the path to the node. Roots stay 0; the extra last entry, all bits, stands for a missing leaf B.
   */
  const leftPath = new Int32Array(totalNodes + 1);
  leftPath[totalNodes] = -1;

  // The units, flattened: tabulated, then the kernel's, then the rest.
  const group = (u: Unit): number => (u.features.length <= TABULATED_MAX_DISTINCT ? 0 : u.features.length <= KERNEL_MAX_DISTINCT ? 1 : 2);
  units.sort((a, b) => group(a) - group(b));
  const nUnits = units.length;
  const nTabulated = units.filter((u) => group(u) === 0).length;
  const kernelEnd = nTabulated + units.filter((u) => group(u) === 1).length;
  const maxDistinct = units.reduce((most, u) => Math.max(most, u.features.length), 1);
  if (maxDistinct > 30) throw new Error('TreeSHAP here handles at most 30 distinct features on a path (one bit each)');

  const unitDistinct = new Uint8Array(nUnits);
  const unitG = new Uint8Array(nUnits);
  const unitSlots = new Int32Array(nUnits); // offset into slotFeature / slotZero
  const unitTable = new Int32Array(nUnits); // offset into table (tabulated units)
  const nodeA = new Int32Array(nUnits);
  const nodeB = new Int32Array(nUnits);
  const valueA = new Float64Array(nUnits);
  const valueB = new Float64Array(nUnits);
  const zeroA = new Float64Array(nUnits);
  const zeroB = new Float64Array(nUnits);
  /** v_A z_g,A + v_B z_g,B: M(t)'s (1 - t) coefficient. */
  const valueZero = new Float64Array(nUnits);
  /** The product of the zero fractions of the unit's features other than g. */
  const otherZeros = new Float64Array(nUnits);
  let nSlots = 0;
  for (const u of units) nSlots += u.features.length;
  const slotFeature = new Int32Array(nSlots);
  const slotZero = new Float64Array(nSlots);
  let s = 0;
  units.forEach((u, i) => {
    unitDistinct[i] = u.features.length;
    unitG[i] = u.g;
    unitSlots[i] = s;
    nodeA[i] = u.nodeA;
    nodeB[i] = u.nodeB < 0 ? totalNodes : u.nodeB;
    valueA[i] = u.valueA;
    valueB[i] = u.valueB;
    zeroA[i] = u.zeroA;
    zeroB[i] = u.zeroB;
    valueZero[i] = u.valueA * u.zeroA + u.valueB * u.zeroB;
    let product = 1;
    u.features.forEach((f, j) => {
      slotFeature[s + j] = f;
      slotZero[s + j] = u.zeros[j] as number;
      if (j !== u.g) product *= u.zeros[j] as number;
    });
    otherZeros[i] = product;
    s += u.features.length;
  });

  // Gauss-Legendre rules on [0, 1] of 1 to maxPoints points, at [points * width + q]: the node t, 1 - t,
  // the weight w, and w / (1 - t) (the integrand of a feature x does not follow).
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
  /** Q(t) and Q(t) M(t) at the rule's nodes. */
  const others = new Float64Array(width);
  const withLeaves = new Float64Array(width);
  /** The contribution of one unit to each of its slots. */
  const slotShare = new Float64Array(maxDistinct);

  /**
   * The contributions of unit i when x follows the slots in `onesA` (bits; bit g is leaf A's o_g) and
   * takes B's side of the split when `oB` is 1, into slotShare: the formulas of the header, integrated
   * by the rule of ceil(d / 2) points.
   */
  function unitShares(i: number, onesA: number, oB: number): void {
    const d = unitDistinct[i] as number;
    const g = unitG[i] as number;
    const first = unitSlots[i] as number;
    const rule = ((d + 1) >> 1) * width;
    const points = (d + 1) >> 1;
    const oA = (onesA >> g) & 1;
    const valueOne = (valueA[i] as number) * oA + (valueB[i] as number) * oB;
    for (let q = 0; q < points; q++) others[q] = 1;
    for (let j = 0; j < d; j++) {
      if (j === g) continue;
      const z = slotZero[first + j] as number;
      const o = (onesA >> j) & 1;
      for (let q = 0; q < points; q++) others[q] = (others[q] as number) * (z * (notNode[rule + q] as number) + o * (node[rule + q] as number));
    }
    let zeroSide = 0;
    let gIntegral = 0;
    for (let q = 0; q < points; q++) {
      withLeaves[q] = (others[q] as number) * ((valueZero[i] as number) * (notNode[rule + q] as number) + valueOne * (node[rule + q] as number));
      zeroSide -= (zeroWeight[rule + q] as number) * (withLeaves[q] as number);
      gIntegral += (weight[rule + q] as number) * (others[q] as number);
    }
    for (let j = 0; j < d; j++) {
      if (j === g) {
        slotShare[j] = ((valueA[i] as number) * (oA - (zeroA[i] as number)) + (valueB[i] as number) * (oB - (zeroB[i] as number))) * gIntegral;
      } else if ((onesA >> j) & 1) {
        const z = slotZero[first + j] as number;
        let integral = 0;
        for (let q = 0; q < points; q++) {
          integral += ((weight[rule + q] as number) * (withLeaves[q] as number)) / (z * (notNode[rule + q] as number) + (node[rule + q] as number));
        }
        slotShare[j] = (1 - z) * integral;
      } else {
        slotShare[j] = zeroSide;
      }
    }
  }

  // Tabulated units: every case at [table + (onesA | oB << d) * d + j] (oB is 0 for a lone leaf).
  let nTable = 0;
  for (let i = 0; i < nTabulated; i++) {
    const d = unitDistinct[i] as number;
    unitTable[i] = nTable;
    nTable += (nodeB[i] === totalNodes ? 1 << d : 2 << d) * d;
  }
  const table = new Float64Array(nTable);
  for (let i = 0; i < nTabulated; i++) {
    const d = unitDistinct[i] as number;
    const cases = nodeB[i] === totalNodes ? 1 << d : 2 << d;
    for (let c = 0; c < cases; c++) {
      unitShares(i, c & ((1 << d) - 1), c >> d);
      table.set(slotShare.subarray(0, d), (unitTable[i] as number) + c * d);
    }
  }

  // The 4-point rule, and its (1 - t)^c for c features x does not follow, for the kernel.
  const [[t0, w0], [t1, w1], [t2, w2], [t3, w3]] = gaussLegendre(4) as [[number, number], [number, number], [number, number], [number, number]];
  const [u0, u1, u2, u3] = [1 - t0, 1 - t1, 1 - t2, 1 - t3];
  const [zw0, zw1, zw2, zw3] = [w0 / u0, w1 / u1, w2 / u2, w3 / u3];
  const powers = (u: number): Float64Array => Float64Array.from({ length: KERNEL_MAX_DISTINCT }, (_, c) => u ** c);
  const [power0, power1, power2, power3] = [powers(u0), powers(u1), powers(u2), powers(u3)];

  /** The first unit of chunk c within the units [from, to). */
  const chunkStart = (from: number, to: number, chunk: number): number => from + Math.floor(((to - from) * chunk) / SHAP_CHUNKS);
  const chunkOut = new Float64Array(nFeatures);

  const treeShap: TreeShap = {
    expectedValue: expected,
    featureCount: nFeatures,
    shapValues(x: Float64Array, out: Float64Array): void {
      if (out.length !== nFeatures) throw new Error(`expected ${nFeatures} features`);
      treeShap.decideSplits(x);
      out.fill(0);
      for (let chunk = 0; chunk < SHAP_CHUNKS; chunk++) {
        treeShap.addChunk(chunk, chunkOut);
        for (let f = 0; f < nFeatures; f++) out[f] = (out[f] as number) + (chunkOut[f] as number);
      }
    },
    decideSplits(x: Float64Array): void {
      if (x.length !== nFeatures) throw new Error(`expected ${nFeatures} features`);
      // Decide every split for x, passing down the path's features on which x left the path.
      for (let k = 0; k < totalSplits; k++) {
        const v = x[splitFeature[k] as number] as number;
        // -1 when x goes right (above the threshold, or missing with missing values sent right), else 0.
        const right = -(Number(v > (splitThreshold[k] as number)) | (Number(v !== v) & (splitMissingRight[k] as number)));
        const here = leftPath[splitNode[k] as number] as number;
        const bit = splitBit[k] as number;
        leftPath[leftChild[k] as number] = here | (bit & right);
        leftPath[rightChild[k] as number] = here | (bit & ~right);
      }
    },
    addChunk(chunk: number, out: Float64Array): void {
      out.fill(0);
      // Tabulated units: one lookup each.
      for (let i = chunkStart(0, nTabulated, chunk); i < chunkStart(0, nTabulated, chunk + 1); i++) {
        const d = unitDistinct[i] as number;
        const first = unitSlots[i] as number;
        const mask = (1 << d) - 1;
        const oB = (~(leftPath[nodeB[i] as number] as number) >> (unitG[i] as number)) & 1;
        const base = (unitTable[i] as number) + ((~(leftPath[nodeA[i] as number] as number) & mask) | (oB << d)) * d;
        for (let j = 0; j < d; j++) {
          const f = slotFeature[first + j] as number;
          out[f] = (out[f] as number) + (table[base + j] as number);
        }
      }
      // Units of 5 to 8 features: unitShares with the 4-point rule in locals, Q(t) from the features x
      // follows only ((1 - t)^c times the zero fractions for the c others), every slot first given the
      // zero side's share, then each slot x follows the difference to its own.
      for (let i = chunkStart(nTabulated, kernelEnd, chunk); i < chunkStart(nTabulated, kernelEnd, chunk + 1); i++) {
        const d = unitDistinct[i] as number;
        const g = unitG[i] as number;
        const first = unitSlots[i] as number;
        const onesA = ~(leftPath[nodeA[i] as number] as number) & ((1 << d) - 1);
        const oA = (onesA >> g) & 1;
        const oB = (~(leftPath[nodeB[i] as number] as number) >> g) & 1;
        const ones = onesA & ~(1 << g);
        let q0 = 1;
        let q1 = 1;
        let q2 = 1;
        let q3 = 1;
        let followed = 1;
        let cold = d - 1;
        for (let hot = ones; hot !== 0; hot &= hot - 1) {
          const z = slotZero[first + 31 - Math.clz32(hot & -hot)] as number;
          followed *= z;
          cold--;
          q0 *= z * u0 + t0;
          q1 *= z * u1 + t1;
          q2 *= z * u2 + t2;
          q3 *= z * u3 + t3;
        }
        const notFollowed = (otherZeros[i] as number) / followed;
        q0 *= notFollowed * (power0[cold] as number);
        q1 *= notFollowed * (power1[cold] as number);
        q2 *= notFollowed * (power2[cold] as number);
        q3 *= notFollowed * (power3[cold] as number);
        const vA = valueA[i] as number;
        const vB = valueB[i] as number;
        const vz = valueZero[i] as number;
        const vo = vA * oA + vB * oB;
        const m0 = q0 * (vz * u0 + vo * t0);
        const m1 = q1 * (vz * u1 + vo * t1);
        const m2 = q2 * (vz * u2 + vo * t2);
        const m3 = q3 * (vz * u3 + vo * t3);
        const zeroSide = -(zw0 * m0 + zw1 * m1 + zw2 * m2 + zw3 * m3);
        for (let j = 0; j < d; j++) {
          const f = slotFeature[first + j] as number;
          out[f] = (out[f] as number) + zeroSide;
        }
        const fg = slotFeature[first + g] as number;
        const gShare = (vA * (oA - (zeroA[i] as number)) + vB * (oB - (zeroB[i] as number))) * (w0 * q0 + w1 * q1 + w2 * q2 + w3 * q3);
        out[fg] = (out[fg] as number) + (gShare - zeroSide);
        for (let hot = ones; hot !== 0; hot &= hot - 1) {
          const j = 31 - Math.clz32(hot & -hot);
          const z = slotZero[first + j] as number;
          const share = (1 - z) * ((w0 * m0) / (z * u0 + t0) + (w1 * m1) / (z * u1 + t1) + (w2 * m2) / (z * u2 + t2) + (w3 * m3) / (z * u3 + t3));
          const f = slotFeature[first + j] as number;
          out[f] = (out[f] as number) + (share - zeroSide);
        }
      }
      // The deepest units: the general code.
      for (let i = chunkStart(kernelEnd, nUnits, chunk); i < chunkStart(kernelEnd, nUnits, chunk + 1); i++) {
        const d = unitDistinct[i] as number;
        const first = unitSlots[i] as number;
        const g = unitG[i] as number;
        unitShares(i, ~(leftPath[nodeA[i] as number] as number) & ((1 << d) - 1), (~(leftPath[nodeB[i] as number] as number) >> g) & 1);
        for (let j = 0; j < d; j++) {
          const f = slotFeature[first + j] as number;
          out[f] = (out[f] as number) + (slotShare[j] as number);
        }
      }
    },
  };
  return treeShap;
}
