import { afterEach } from 'vitest';
import { failOnFastTierViolations, installFastTierGuard } from './fast-tier-guard.js';

/**
 * The set-up file of every test file (vitest.config.ts); in the fast tier (TEST_TIER=fast) only, the
 * guard against tests that reach a server, a browser, Python or a process of their own, and a check
 * after every test of what it stopped, so that a test whose code swallowed the refused connection
 * fails too.
 */
if (process.env.TEST_TIER === 'fast') {
  installFastTierGuard();
  afterEach(failOnFastTierViolations);
}
