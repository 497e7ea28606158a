/**
 * The numbers of `GET /v1/stats/groups` against a recount of the rows the list serves with the same
 * filters (group-stats-suite.ts's `recount`), on snapshots other than the suites' fixture: the
 * synthetic snapshot of 109,915 requests (the default one) and each real export of
 * ../shared/data/nyc311/real built with the filters off (2011 to 2025, every layout; said and skipped
 * when the folder is absent: SHARED_DATA_DIR). Whole-snapshot walks: the machine tier.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildSnapshot } from '../../src/ingest/nyc311/build-snapshot.js';
import { SeededRandom } from '../../src/ingest/nyc311/seeded-random.js';
import { REAL_EXPORTS_DIR, realExportFiles } from '../ingest/nyc311/real-exports.js';
import { sharedSyntheticSnapshot } from '../support/shared-synthetic-snapshot.js';
import { recount, servedRows } from './support/group-stats-suite.js';
import { json, startTestApp, type TestApp } from './support/requests-app.js';

type Answer = ReturnType<typeof recount>;

const COLUMNS = ['borough', 'complaint_type', 'descriptor', 'status', 'channel', 'council_district', 'incident_zip', 'location_type', 'community_board'] as const;
const ORDERS = ['opened', '-opened', '-median_days_to_close', 'p90_days_to_close', '-share_closed_within_14_days', 'closed'] as const;
const FILTERS = ['', '', 'borough=brooklyn', 'status=closed', 'closed=true&not_borough=queens', 'q=street', 'channel=phone&channel=online'];

/** `count` random groupings of the service, each equal to the recount of the rows the list serves with its filters. */
async function expectRecounts(service: TestApp, seed: number, count: number): Promise<void> {
  const random = new SeededRandom(seed);
  for (let i = 0; i < count; i += 1) {
    const by = random.chance(0.6) ? [random.pick(COLUMNS)] : [random.pick(COLUMNS), random.pick(COLUMNS)].filter((c, at, all) => all.indexOf(c) === at);
    const period = random.pick([null, 'day', 'week', 'month', 'year']);
    const order = random.pick(ORDERS);
    // Days over fifteen years times 100 keys would pass the answer's bound of rows (a 422 of its own test).
    const limit = period === 'day' ? random.pick([1, 5, 20]) : random.pick([1, 5, 20, 100]);
    const filters = random.pick(FILTERS);
    const rows = await servedRows(service, filters);
    const query = `by=${by.join(',')}${period === null ? '' : `&period=${period}`}&order=${encodeURIComponent(order)}&limit=${limit}${filters === '' ? '' : `&${filters}`}`;
    const response = await service.get(`/v1/stats/groups?${query}`);
    expect(response.statusCode, response.body).toBe(200);
    expect(json<Answer>(response), query).toEqual(recount(rows, by, period, order, limit));
  }
}

describe('the groups recounted on the synthetic snapshot (109,915 requests)', () => {
  it('random groupings, filters and periods: each answer equals the recount of the rows the list serves', async () => {
    const service = await startTestApp(await sharedSyntheticSnapshot());
    try {
      await expectRecounts(service, 11, 6);
    } finally {
      await service.app.close();
    }
  }, 600_000);
});

const files = realExportFiles();
const directory = mkdtempSync(join(tmpdir(), 'group-recounts-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

describe.skipIf(files.length === 0)('the groups recounted on each real export (filters off)', () => {
  it.each(files)('%s: random groupings, each equal to the recount of the rows the list serves', async (file) => {
    const path = join(directory, `${file}.sqlite`);
    await buildSnapshot({ kind: 'file', path: join(REAL_EXPORTS_DIR, file) }, { kind: 'sqlite', path }, { applyFilters: false });
    const service = await startTestApp(path);
    try {
      await expectRecounts(service, file.length, 12);
    } finally {
      await service.app.close();
    }
  }, 300_000);
});
