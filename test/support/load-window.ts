/**
 * How long a load test holds its load. The full run (`npm run test:all`, which CI runs) holds it for
 * the whole window the test names; the fast tier (`npm test`, TEST_TIER=fast) for a quarter of it:
 * the same load and the same assertions over a shorter watch, so that the inner loop stays under a
 * minute on 2 cores.
 */
export function loadWindowMs(fullWindowMs: number): number {
  return process.env.TEST_TIER === 'fast' ? Math.round(fullWindowMs / 4) : fullWindowMs;
}
