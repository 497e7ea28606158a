/**
 * The test tiers, declared by the name of each test file (docs/decisions.md, "Test tiers by file
 * name"): a file that needs more than the test's own process and loopback says so by a suffix, and
 * vitest.config.ts leaves the suffixed files out of the fast tier (`npm test`) by these names alone.
 * A plain `*.test.ts` file is the fast tier: in process, loopback only, quick; the fast tier's guard
 * (fast-tier-guard.ts) fails such a file's test that reaches further.
 */
export const TIER_SUFFIXES = {
  /** Needs a PostgreSQL or Redis server (TEST_DATABASE_URL, TEST_REDIS_URL, or one of its own). */
  server: 'needs a server',
  /** Needs Chromium (the dashboard page). */
  browser: 'needs a browser',
  /** Needs the Python environment of training/. */
  python: 'needs Python',
  /** Starts a service, a command or a compiler as a process of its own. */
  process: 'starts a process of its own',
  /** Floods a service, with bounds that hold only when it has the machine to itself. */
  machine: 'needs the machine to itself',
} as const;

export type Tier = keyof typeof TIER_SUFFIXES;

/** The files of every tier but the fast one, as a glob from the repository's root. */
export const OUTSIDE_THE_FAST_TIER = `test/**/*.{${Object.keys(TIER_SUFFIXES).join(',')}}.test.ts`;

/** The files of every tier that needs more than its own process but not the machine to itself. */
export const TIERS_BESIDE_THE_MACHINE = `test/**/*.{${Object.keys(TIER_SUFFIXES)
  .filter((tier) => tier !== 'machine')
  .join(',')}}.test.ts`;

/** What a test of the fast tier that reaches `tier` is told. */
export function belongsElsewhere(tier: Tier): string {
  return `this test ${TIER_SUFFIXES[tier]}: name its file *.${tier}.test.ts`;
}
