import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readServedSnapshot } from '../../src/snapshot/postgres-snapshot-pointer.js';
import { PostgresServiceRequestStore } from '../../src/services/requests/store/postgres-store.js';
import type { ServiceRequestRecord } from '../../src/services/requests/store/service-request-store.js';
import { REPO_ROOT } from '../support/http.js';
import { readFixtureRows, refreshFixture } from './support/fixture-database.js';
import { pageThroughRefresh, waitFor } from './support/paging-client.js';
import { json, startTestApp, type TestApp } from './support/requests-app.js';

/**
 * The service answering from a hot standby: a private primary and a standby streaming from it
 * (scripts/postgres-primary-and-standby.sh: pg_basebackup -R, free ports, temporary folders). The
 * snapshot command loads on the primary; the service reads the standby only; a new snapshot loaded on
 * the primary reaches the serving service through replication, without a restart and without a
 * failed request, while clients page and count throughout.
 */
const run = promisify(execFile);
const PAIR_SCRIPT = join(REPO_ROOT, 'scripts/postgres-primary-and-standby.sh');
const hasPostgres = existsSync('/usr/lib/postgresql') || process.env.PATH?.split(':').some((dir) => existsSync(join(dir, 'initdb')));
const SCHEMA = 'nyc311_standby';
const FIRST_ID = 'h0t5tandby000001';
const SECOND_ID = 'h0t5tandby000002';

describe.skipIf(!hasPostgres)('requests: served from a hot standby while the primary loads a new snapshot', () => {
  let folder: string | undefined;
  let primaryUrl: string;
  let standbyUrl: string;
  let service: TestApp | undefined;
  const first = readFixtureRows();
  const second: ServiceRequestRecord[] = first.slice(0, -5).map((row) => ({ ...row, descriptor: `${row.descriptor ?? 'none'} (v2)` }));

  beforeAll(async () => {
    folder = mkdtempSync(join(tmpdir(), 'requests-standby-'));
    const { stdout } = await run('bash', [PAIR_SCRIPT, 'start', folder], { timeout: 120_000 });
    [primaryUrl, standbyUrl] = stdout.trim().split(' ') as [string, string];
    await refreshFixture({ databaseUrl: `${primaryUrl}?schema=${SCHEMA}` }, first, FIRST_ID);
    // The standby has replayed the first load.
    const standby = new pg.Client({ connectionString: standbyUrl });
    await standby.connect();
    try {
      expect((await standby.query<{ recovering: boolean }>('SELECT pg_is_in_recovery() AS recovering')).rows[0]?.recovering).toBe(true);
      await waitFor(async () => (await readServedSnapshot(standby, SCHEMA).catch(() => null))?.snapshotId === FIRST_ID, 'the standby to replay the first snapshot');
    } finally {
      await standby.end();
    }
    const store = new PostgresServiceRequestStore({ url: standbyUrl, schema: SCHEMA, snapshotCheckMs: 100 });
    service = await startTestApp(`${standbyUrl}?schema=${SCHEMA}`, {}, { store });
  }, 180_000);

  afterAll(async () => {
    await service?.app.close();
    if (folder !== undefined) await run('bash', [PAIR_SCRIPT, 'stop', folder], { timeout: 60_000 });
  }, 60_000);

  it('a snapshot loaded on the primary reaches the service on the standby: no restart, no failed request, no mixed page', async () => {
    const served = async (): Promise<string> => json<{ snapshot_id: string }>(await service!.get('/v1/dataset')).snapshot_id;
    expect(await served()).toBe(FIRST_ID);
    let refreshed!: () => void;
    const done = new Promise<void>((resolve) => {
      refreshed = resolve;
    });
    const clients = [3, 5].map((limit) => pageThroughRefresh(service!.get, first, second, done, limit));
    // A client counting throughout: every count is one snapshot's.
    const counts: string[] = [];
    const counting = (async () => {
      const state = { stopped: false };
      void done.then(() => (state.stopped = true));
      while (!state.stopped) {
        const response = await service!.get('/v1/service-requests/count');
        counts.push(response.statusCode === 200 ? String(json<{ count: number }>(response).count) : `${response.statusCode} ${response.body}`);
        // A kept answer is sent without a turn of the event loop (injected requests have no socket): the loop gives one.
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    await waitFor(() => clients.every((client) => client.record.pagesOfFirst >= 3), 'pages of the first snapshot');
    // Loaded twice on the primary: the second load drops the schemas older than the previous one.
    await refreshFixture({ databaseUrl: `${primaryUrl}?schema=${SCHEMA}` }, first, FIRST_ID);
    await refreshFixture({ databaseUrl: `${primaryUrl}?schema=${SCHEMA}` }, second, SECOND_ID);
    await waitFor(async () => (await served()) === SECOND_ID, 'the service on the standby to serve the second snapshot', 30_000);
    await waitFor(() => clients.every((client) => client.record.pagesOfSecond >= 3), 'pages of the second snapshot');
    refreshed();
    const records = await Promise.all(clients.map((client) => client.finished));
    await counting;

    for (const record of records) {
      expect(record.failures).toEqual([]);
      expect(record.mixedPages).toEqual([]);
    }
    expect(new Set(counts)).toEqual(new Set([String(first.length), String(second.length)]));
    expect(counts.at(-1)).toBe(String(second.length));
    expect((await service!.app.inject({ method: 'GET', url: '/ready' })).statusCode).toBe(200);
  }, 120_000);
});
