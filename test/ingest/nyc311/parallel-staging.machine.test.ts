import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, it } from 'vitest';
import { historiesOnThreads } from './parallel-staging-checks.js';

/**
 * The staging on worker threads against the staging on one thread, over synthetic histories of some
 * thousands of requests cut into pieces (the fast tier stages about a thousand, with the other
 * checks of the staging on threads: parallel-staging.test.ts).
 */
const stageRoot = mkdtempSync(join(tmpdir(), 'parallel-staging-test-'));
afterAll(() => rmSync(stageRoot, { recursive: true, force: true }));

describe('staging on worker threads gives the staging on one thread, at length', () => {
  const history = historiesOnThreads(stageRoot, { pieces: 4_000, layouts: 3_000 });
  it(history.pieces.name, history.pieces.check, 60_000);
  it(history.layouts.name, history.layouts.check, 60_000);
});
