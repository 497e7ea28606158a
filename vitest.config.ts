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

/**
 * The tests that start a service the way its start command does, in a process of its own (start
 * commands, refused settings, SIGTERM and the bounded shutdown): each start loads the service's
 * modules again, and together they cost the fast tier more CPU than every in-process test of the
 * services. The same behaviours are tested in process (app.inject, app.listen) in the fast tier.
 */
const START_A_SERVICE_PROCESS = [
  'test/houses/start-command.test.ts',
  'test/reliability/bounded-shutdown.test.ts',
  'test/reliability/settings-fail-closed.test.ts',
  'test/reliability/sigterm.test.ts',
  'test/requests/start-command.test.ts',
  'test/tickets/start-command.test.ts',
];

/**
 * The load tests: each floods a service (20 connections, hundreds of pipelined requests) and asserts
 * latency bounds on /health and the cheap routes meanwhile. Their bounds hold only when no other test
 * file runs beside them, and the fast tier runs two at a time: they run in the full run, which gives
 * them a core of their own (and their figures come from bench/, on a quiet machine).
 */
const HOLD_THE_MACHINE = ['test/reliability/flood.test.ts', 'test/reliability/pipelining.test.ts'];

const leftOut = [
  ...configDefaults.exclude,
  // The container tests build images and run podman: only through npm run test:containers
  // (scripts/test-containers.sh), which sets CONTAINER_TESTS.
  ...(process.env.CONTAINER_TESTS === undefined ? ['test/container/**'] : []),
  ...(process.env.TEST_TIER === 'fast' ? [...NEEDS_SERVERS_BROWSER_OR_PYTHON, ...START_A_SERVICE_PROCESS, ...HOLD_THE_MACHINE] : []),
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
    // state behind, and importing Fastify, the services and their schemas again for every file is
    // the largest cost the tier can drop.
    ...(process.env.TEST_TIER === 'fast' ? { maxWorkers: 2, isolate: false } : {}),
  },
});
