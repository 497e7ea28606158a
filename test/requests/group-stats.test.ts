import { describe, expect, it } from 'vitest';
import { SeededRandom } from '../../src/ingest/nyc311/seeded-random.js';
import { p90Rank, selectRank } from '../../src/services/requests/engine/group-scan.js';
import { describeGroupStats } from './support/group-stats-suite.js';

describeGroupStats('sqlite');

describe('the selections of the groups', () => {
  it('the nearest rank of the 90th percentile is ceil(0.9 n) in integers', () => {
    expect([1, 2, 9, 10, 11, 70, 100, 101].map(p90Rank)).toEqual([1, 2, 9, 9, 10, 63, 90, 91]);
  });

  it('selectRank finds the value of each rank, as a sort does, with many equal values', () => {
    const random = new SeededRandom(3);
    for (let i = 0; i < 300; i += 1) {
      const n = random.int(1, 200);
      const values = Int32Array.from({ length: n }, () => random.int(0, random.pick([3, 1000])));
      const sorted = values.slice().sort();
      const k = random.int(0, n - 1);
      expect(selectRank(values.slice(), 0, n, k)).toBe(sorted[k]);
    }
  });
});
