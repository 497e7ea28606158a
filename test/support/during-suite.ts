import { afterAll, beforeAll } from 'vitest';

/**
 * The set-up that many suites repeat: something (an app, a fixture database) is made before the
 * suite's first test and torn down after its last. Returns a stand-in that forwards every property to
 * what `setUp` made, so that the suite's tests use it as they would the thing itself
 * (`app.inject(...)`, `fixture.databaseUrl`). Call it in the suite's body, in the order of set-up:
 * teardowns run in the reverse order (vitest's default, `sequence.hooks: 'stack'`). `setUpTimeoutMs`:
 * for a set-up longer than the hooks' default timeout.
 */
export function duringSuite<T extends object>(setUp: () => T | Promise<T>, tearDown: (made: T) => unknown, setUpTimeoutMs?: number): T {
  let made: T | undefined;
  beforeAll(async () => {
    made = await setUp();
  }, setUpTimeoutMs);
  afterAll(async () => {
    if (made !== undefined) await tearDown(made);
    made = undefined;
  });
  return new Proxy({} as T, {
    get(_stand, property) {
      if (made === undefined) throw new Error(`duringSuite: ${String(property)} read outside the suite's tests`);
      const value: unknown = Reflect.get(made, property, made);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(made) : value;
    },
  });
}

/** A service's app built and readied before the suite, closed after it. */
export function appDuringSuite<T extends { ready(): PromiseLike<unknown>; close(): PromiseLike<unknown> }>(build: () => Promise<T>): T {
  return duringSuite(
    async () => {
      const app = await build();
      await app.ready();
      return app;
    },
    (app) => app.close(),
  );
}
