import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolve } from 'node:path';
import { ensureDefaultSnapshot } from '../../src/services/requests/default-snapshot.js';
import { REPO_ROOT } from '../support/http.js';
import { FLOOD_ROUTES, flood, startFloodTarget, type FloodService, type FloodTarget } from './flood.js';

/**
 * A flood of one route never starves the others (docs/reliability.md, "Work budgets"): for each route
 * kind of each service, 20 connections send it as fast as it is answered for a few seconds while
 * /health and the service's cheapest /v1 route are timed. The targets are /health at most 250 ms and
 * the cheap route's median under 20 ms. The machine these tests run on is shared (2 cores, often a
 * load of 10 from other work): the assertions allow a margin of 4 times the targets, and the real
 * figures of a run are in bench/README.md ("Floods", from bench/flood.ts). Before the work budgets,
 * floods of exports, explanation batches or statistics held /health for 2 to 7 s.
 * Every answer of the flooded route is a 200 or a 503 overloaded, never a failure.
 */
const KEY = 'flood-test-key-0123';
const SECONDS = 2;
const HEALTH_TARGET_MS = 250;
const CHEAP_TARGET_MS = 20;
/** The margin for a shared, loaded machine (see above). */
const MARGIN = 4;

const SNAPSHOT = resolve(REPO_ROOT, 'data/service-requests.sqlite');

for (const service of ['tickets', 'houses', 'requests'] as const satisfies readonly FloodService[]) {
  describe(`${service}: a flood of one route leaves /health and the cheap route answering`, () => {
    let target: FloodTarget | undefined;
    beforeAll(async () => {
      if (service === 'requests') await ensureDefaultSnapshot(SNAPSHOT);
      target = await startFloodTarget(REPO_ROOT, service, { API_KEY: KEY, DATABASE_URL: SNAPSHOT });
    }, 120_000);
    afterAll(async () => target?.stop());

    const routes = FLOOD_ROUTES.filter((route) => route.service === service);
    it.each(routes.map((route) => [route.name, route] as const))('%s', async (_name, route) => {
      const result = await flood(target!.baseUrl, route, KEY, route.seconds ?? SECONDS);
      expect(result.unexpected, 'answers other than 200 and 503 overloaded').toBe(0);
      expect(result.probeFailures, '/health and the cheap route answer 200').toBe(0);
      expect(result.ok + result.overloaded).toBeGreaterThan(0);
      expect(result.healthMaxMs).toBeLessThan(HEALTH_TARGET_MS * MARGIN);
      expect(result.cheapP50Ms).toBeLessThan(CHEAP_TARGET_MS * MARGIN);
    }, 60_000);
  });
}
