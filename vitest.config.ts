import { configDefaults, defineConfig } from 'vitest/config';

/**
 * The tests that need a PostgreSQL or Redis server, a browser or the Python environment of training/.
 * `npm test` (TEST_TIER=fast) leaves them out: the fast inner loop. `npm run test:all`, which CI
 * runs, runs them with everything else. A new test that needs one of them is added here.
 */
const NEEDS_SERVERS_BROWSER_OR_PYTHON = [
  'test/houses/model/parity.test.ts',
  'test/ingest/nyc311/fixture-snapshot.test.ts',
  'test/ingest/nyc311/synthetic-history.test.ts',
  'test/ingest/nyc311/synthetic-snapshot.test.ts',
  'test/platform/metrics.test.ts',
  'test/platform/rate-limit.test.ts',
  'test/reliability/database-fault.test.ts',
  'test/reliability/dependency-deadlines.test.ts',
  'test/requests/dashboard-page.test.ts',
  'test/requests/dashboard-queries.test.ts',
  'test/requests/database-unavailable.test.ts',
  'test/requests/hot-standby.test.ts',
  'test/requests/service-requests-api.test.ts',
  'test/requests/settings-and-cursor.test.ts',
  'test/requests/snapshot-refresh.test.ts',
  'test/requests/summary-exactness.test.ts',
];

const leftOut = [
  ...configDefaults.exclude,
  // The container tests build images and run podman: only through npm run test:containers
  // (scripts/test-containers.sh), which sets CONTAINER_TESTS.
  ...(process.env.CONTAINER_TESTS === undefined ? ['test/container/**'] : []),
  ...(process.env.TEST_TIER === 'fast' ? NEEDS_SERVERS_BROWSER_OR_PYTHON : []),
];

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: leftOut,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // The fast tier runs two files at once, even on 2 cores: most of its time is spent waiting on
    // sockets, child processes and timers, not on the CPU. The full run keeps Vitest's default (one
    // fewer than the cores), which leaves the load tests a core of their own.
    // It also shares the modules between the files of a worker (no isolation): the files leave no
    // state behind, and importing Fastify, the services and their schemas again for every file cost
    // more than half the tier's time.
    ...(process.env.TEST_TIER === 'fast' ? { maxWorkers: 2, isolate: false } : {}),
  },
});
