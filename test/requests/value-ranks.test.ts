import { describe, expect, it } from 'vitest';
import { SeededRandom } from '../../src/ingest/nyc311/seeded-random.js';
import { OUTSIDE } from '../../src/services/requests/engine/row-column-scan.js';
import { p90Rank } from '../../src/snapshot/index.js';
import { grownValues, middlesAndP90, scanValues, selectRank } from '../../src/services/requests/engine/value-ranks.js';

describe('the ranks of two-byte values (groups, period numbers)', () => {
  it('the nearest rank of the 90th percentile is ceil(0.9 n) in integers', () => {
    expect([1, 2, 9, 10, 11, 70, 100, 101].map(p90Rank)).toEqual([1, 2, 9, 9, 10, 63, 90, 91]);
  });

  it('selectRank finds the value of each rank, as a sort does, with many equal values', () => {
    const random = new SeededRandom(3);
    for (let i = 0; i < 300; i += 1) {
      const n = random.int(1, 200);
      const values = Uint16Array.from({ length: n }, () => random.int(0, random.pick([3, 1000])));
      const sorted = values.slice().sort();
      const k = random.int(0, n - 1);
      expect(selectRank(values.slice(), 0, n, k)).toBe(sorted[k]);
    }
  });

  /** Values as a scan lays them: two bytes each, OUTSIDE for those two bytes do not hold (negative, or 655.34 days and more), which are listed apart. */
  const laidOut = (values: Int32Array): { twoBytes: Uint16Array; outside: Int32Array } => ({
    twoBytes: Uint16Array.from(values, (value) => (value >= 0 && value < OUTSIDE ? value : OUTSIDE)),
    outside: values.filter((value) => value < 0 || value >= OUTSIDE).sort(),
  });
  const expected = (values: Int32Array): number[] => {
    const sorted = values.slice().sort();
    const n = sorted.length;
    const middle = n >> 1;
    return [sorted[n % 2 === 1 ? middle : middle - 1], sorted[middle], sorted[p90Rank(n) - 1]] as number[];
  };
  const someValues = (random: SeededRandom, n: number): Int32Array => {
    const top = random.pick([300, 70_000, 400_000]);
    const bottom = random.pick([0, 0, -500]);
    return Int32Array.from({ length: n }, () => random.int(bottom, top));
  };

  it('the middles and p90 of a group, small (selected), at the bound of 128 values or large (counted), are those of the sorted values, values two bytes do not hold (negative, 655.34 days and more) included', () => {
    const random = new SeededRandom(5);
    for (let i = 0; i < 120; i += 1) {
      const values = someValues(random, random.pick([random.int(1, 40), random.int(120, 136), random.int(2_000, 12_000)]));
      const { twoBytes, outside } = laidOut(values);
      const found = new Float64Array(3);
      middlesAndP90(twoBytes, { ranges: Float64Array.of(0, values.length), rangeCount: 1, inPlace: true, outside, outsideFrom: 0, outsideTo: outside.length }, found, 0);
      expect([...found]).toEqual(expected(values));
    }
  });

  it('the middles and p90 of several groups together (a key over its periods, the groups left out) are those of their sorted values, and leave each group\'s values where they were', () => {
    const random = new SeededRandom(9);
    for (let i = 0; i < 80; i += 1) {
      const all = someValues(random, random.pick([random.int(2, 60), random.int(120, 136), random.int(2_000, 9_000)]));
      const { twoBytes } = laidOut(all);
      // Some ranges of the values, not all: their set is what is ranked.
      const cuts = [...new Set([0, all.length, ...Array.from({ length: 6 }, () => random.int(0, all.length))])].sort((x, y) => x - y);
      const ranges: number[] = [];
      const chosen: number[] = [];
      for (let c = 0; c + 1 < cuts.length; c++) {
        if (c % 2 === 1 && c + 2 < cuts.length) continue;
        ranges.push(cuts[c] as number, cuts[c + 1] as number);
        chosen.push(...all.subarray(cuts[c], cuts[c + 1]));
      }
      const chosenOutside = Int32Array.from(chosen.filter((value) => value < 0 || value >= OUTSIDE)).sort();
      const before = twoBytes.slice();
      const found = new Float64Array(3);
      middlesAndP90(twoBytes, { ranges: Float64Array.from(ranges), rangeCount: ranges.length / 2, inPlace: false, outside: chosenOutside, outsideFrom: 0, outsideTo: chosenOutside.length }, found, 0);
      expect([...found]).toEqual(expected(Int32Array.from(chosen)));
      expect(twoBytes).toEqual(before);
    }
  });

  it('a scan\'s array grows to hold n values, its laid values kept; past 8,388,608 values it is the scan\'s own, the kept one left as it was', () => {
    const first = scanValues(4);
    first.set([7, 8, 9, 10]);
    const grown = grownValues(first, 100_000, 3);
    expect(grown.length).toBe(100_000);
    expect([...grown.subarray(0, 3)]).toEqual([7, 8, 9]);
    // The kept array: the next scan's.
    expect(scanValues(10).buffer).toBe(grown.buffer);
    const own = grownValues(grown, 9_000_000, 3);
    expect(own.length).toBe(9_000_000);
    expect([...own.subarray(0, 3)]).toEqual([7, 8, 9]);
    expect(own.buffer).not.toBe(grown.buffer);
    expect(scanValues(10).buffer).toBe(grown.buffer);
    expect(scanValues(8_388_608).length).toBe(8_388_608);
    expect(scanValues(8_388_609).buffer).not.toBe(scanValues(8_388_608).buffer);
  });
});
