import { configDefaults, defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';
import { OUTSIDE_THE_FAST_TIER, TIERS_BESIDE_THE_MACHINE } from './test/support/test-tiers.js';

/**
 * The tiers are declared by the test files' names (test/support/test-tiers.ts): `*.server.test.ts`
 * needs PostgreSQL or Redis, `*.browser.test.ts` Chromium, `*.python.test.ts` the Python environment
 * of training/, `*.process.test.ts` starts a process of its own, `*.machine.test.ts` floods that need
 * the machine to themselves. `npm test` (TEST_TIER=fast) runs every other file: the fast inner loop,
 * in process and on loopback, guarded (test/support/fast-tier-setup.ts) so that a test that reaches
 * further fails there with the suffix its file needs. `npm run test:all`, which CI runs, runs them
 * all, as the projects below one after the other (`sequence.groupOrder`), each as parallel as its
 * files allow.
 */
const fast = process.env.TEST_TIER === 'fast';

/** The container tests build images and run podman: only through npm run test:containers
 * (scripts/test-containers.sh), which sets CONTAINER_TESTS. */
const CONTAINER_TESTS = 'test/container/**/*.test.ts';
const leftOut = [...configDefaults.exclude, CONTAINER_TESTS];

/**
 * The fast tier: two files at once, even on 2 cores (most of its time is spent waiting on sockets
 * and timers, not on the CPU), sharing the modules between the files of a worker (no isolation: the
 * files leave no state behind, and importing Fastify, the services and their schemas again for
 * every file is the largest cost the tier can drop).
 */
const fastTier: TestProjectInlineConfiguration = {
  extends: true,
  test: {
    name: 'fast',
    include: ['test/**/*.test.ts'],
    exclude: [...leftOut, OUTSIDE_THE_FAST_TIER],
    maxWorkers: 2,
    isolate: false,
    sequence: { groupOrder: 0 },
  },
};

/**
 * The files that need a server, a browser, Python or a process of their own: two at once (they
 * wait on those more than they compute), each in a fresh module graph.
 */
const besideTheMachine: TestProjectInlineConfiguration = {
  extends: true,
  test: {
    name: 'servers, browser, Python, processes',
    include: [TIERS_BESIDE_THE_MACHINE],
    exclude: leftOut,
    maxWorkers: 2,
    sequence: { groupOrder: 1 },
  },
};

/** The floods, after the rest and one at a time: their bounds hold only with the machine to themselves. */
const machineTier: TestProjectInlineConfiguration = {
  extends: true,
  test: { name: 'machine', include: ['test/**/*.machine.test.ts'], exclude: leftOut, maxWorkers: 1, sequence: { groupOrder: 2 } },
};

/** The container tests, one at a time: an image build, then the compose set. */
const containers: TestProjectInlineConfiguration = {
  extends: true,
  test: { name: 'containers', include: [CONTAINER_TESTS], maxWorkers: 1, sequence: { groupOrder: 3 } },
};

function projects(): TestProjectInlineConfiguration[] {
  if (process.env.CONTAINER_TESTS !== undefined) return [containers];
  return fast ? [fastTier] : [fastTier, besideTheMachine, machineTier];
}

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // The fast tier's guard (active only when TEST_TIER=fast): a test there that reaches a server, a
    // browser, Python or a process of its own fails, naming the suffix its file needs.
    setupFiles: ['test/support/fast-tier-setup.ts'],
    projects: projects(),
    // The fast tier keeps the transformed modules on disk between runs
    // (node_modules/.experimental-vitest-cache, keyed by each file's content): a run after an edit
    // transforms the edited files only.
    ...(fast ? { experimental: { fsModuleCache: true } } : {}),
  },
});
