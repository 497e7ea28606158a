import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The container tests build images and run podman: only through npm run test:containers
    // (scripts/test-containers.sh), which sets CONTAINER_TESTS.
    exclude: process.env.CONTAINER_TESTS === undefined ? [...configDefaults.exclude, 'test/container/**'] : configDefaults.exclude,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
