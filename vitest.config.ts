import { configDefaults, defineConfig } from 'vitest/config';
import { OUTSIDE_THE_FAST_TIER } from './test/support/test-tiers.js';

/**
 * The tiers are declared by the test files' names (test/support/test-tiers.ts): `*.server.test.ts`
 * needs PostgreSQL or Redis, `*.browser.test.ts` Chromium, `*.python.test.ts` the Python environment
 * of training/, `*.process.test.ts` starts a process of its own, `*.machine.test.ts` floods that need
 * the machine to themselves. `npm test` (TEST_TIER=fast) runs every other file: the fast inner loop,
 * in process and on loopback, guarded (test/support/fast-tier-setup.ts) so that a test that reaches
 * further fails there with the suffix its file needs. `npm run test:all`, which CI runs, runs them all.
 */
const fast = process.env.TEST_TIER === 'fast';

const leftOut = [
  ...configDefaults.exclude,
  // The container tests build images and run podman: only through npm run test:containers
  // (scripts/test-containers.sh), which sets CONTAINER_TESTS.
  ...(process.env.CONTAINER_TESTS === undefined ? ['test/container/**'] : []),
  ...(fast ? [OUTSIDE_THE_FAST_TIER] : []),
];

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: leftOut,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // The fast tier's guard (active only when TEST_TIER=fast): a test there that reaches a server, a
    // browser, Python or a process of its own fails, naming the suffix its file needs.
    setupFiles: ['test/support/fast-tier-setup.ts'],
    // The fast tier runs two files at once, even on 2 cores: most of its time is spent waiting on
    // sockets and timers, not on the CPU. The full run keeps Vitest's default (one fewer than the
    // cores), which leaves the floods (`*.machine.test.ts`) a core of their own.
    // It also shares the modules between the files of a worker (no isolation): the files leave no
    // state behind, and importing Fastify, the services and their schemas again for every file is
    // the largest cost the tier can drop.
    // It keeps the transformed modules on disk between runs (node_modules/.experimental-vitest-cache,
    // keyed by each file's content): a run after an edit transforms the edited files only.
    ...(fast ? { maxWorkers: 2, isolate: false, experimental: { fsModuleCache: true } } : {}),
  },
});
