import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createGunzip } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedSyntheticSnapshot } from '../support/shared-synthetic-snapshot.js';
import { json, startTestApp, TEST_API_KEY, type TestApp } from './support/requests-app.js';
import { GROUP_EXAMPLE_QUERY } from '../../src/services/requests/routes/group-stats.js';
import { REQUEST_EXAMPLES } from '../../src/services/requests/openapi-examples.js';

/**
 * Over the embedded synthetic snapshot, as `npm run start:requests` builds it when absent (the build
 * the test files share: test/support/shared-synthetic-snapshot.ts).
 */

interface Page {
  items: { id: number; created_at: string; borough: string | null }[];
  next_cursor: string | null;
}

describe('the full synthetic snapshot (SQLite)', () => {
  let service: TestApp | undefined;
  beforeAll(async () => {
    service = await startTestApp(await sharedSyntheticSnapshot());
  }, 180_000);
  afterAll(async () => service?.app.close());

  async function walk(query: string): Promise<Page['items']> {
    const rows: Page['items'] = [];
    let cursor: string | null = null;
    do {
      const response = await service!.get(`/v1/service-requests?${query}&limit=1000${cursor ? `&cursor=${cursor}` : ''}`);
      expect(response.statusCode).toBe(200);
      const page = json<Page>(response);
      rows.push(...page.items);
      cursor = page.next_cursor;
    } while (cursor !== null);
    return rows;
  }

  it('109,915 requests, 181 days, and the numbers agree with the rows', async () => {
    const dataset = json<{ row_count: number; period: { start: string; end: string } }>(await service!.get('/v1/dataset'));
    expect(dataset.row_count).toBe(109_915);
    expect(dataset.period).toEqual({ start: '2025-01-01', end: '2025-06-30' });

    const all = await walk('');
    expect(all).toHaveLength(109_915);
    expect(new Set(all.map((row) => row.id)).size).toBe(109_915);
    const outOfOrder = all.findIndex((b, i) => {
      const a = all[i - 1];
      return a !== undefined && !(a.created_at < b.created_at || (a.created_at === b.created_at && a.id < b.id));
    });
    expect(outOfOrder, 'first row out of (created_at, id) order').toBe(-1);

    const daily = json<{ items: { date: string; opened: number }[] }>(await service!.get('/v1/stats/daily')).items;
    expect(daily).toHaveLength(181);
    expect(daily.reduce((sum, day) => sum + day.opened, 0)).toBe(109_915);
    const perDay = new Map<string, number>();
    for (const row of all) perDay.set(row.created_at.slice(0, 10), (perDay.get(row.created_at.slice(0, 10)) ?? 0) + 1);
    for (const day of daily) expect(day.opened, day.date).toBe(perDay.get(day.date) ?? 0);

    const statenIsland = await walk('borough=staten_island');
    expect(statenIsland.map((row) => row.id)).toEqual(all.filter((row) => row.borough === 'staten_island').map((row) => row.id));
    const statenDaily = json<{ items: { opened: number }[] }>(await service!.get('/v1/stats/daily?borough=staten_island')).items;
    expect(statenDaily.reduce((sum, day) => sum + day.opened, 0)).toBe(statenIsland.length);

    const types = json<{ items: { count: number }[] }>(await service!.get('/v1/complaint-types')).items;
    expect(types.reduce((sum, type) => sum + type.count, 0)).toBeLessThanOrEqual(109_915);
  });

  it('the 212 requests without a borough are reachable; the last 14 days are incomplete; the export holds every row', async () => {
    expect(json(await service!.get('/v1/service-requests/count?borough=none'))).toEqual({ count: 212 });
    const withoutBorough = await walk('borough=none');
    expect(withoutBorough).toHaveLength(212);
    expect(withoutBorough.every((row) => row.borough === null)).toBe(true);

    // snapshot date 2025-07-01: the days from 17 June on have their 14-day window past it
    const daily = json<{ items: { date: string; complete: boolean }[] }>(await service!.get('/v1/stats/daily')).items;
    expect(daily.filter((day) => !day.complete).map((day) => day.date)).toEqual(daily.filter((day) => day.date >= '2025-06-17').map((day) => day.date));
    expect(daily.filter((day) => !day.complete)).toHaveLength(14);
    const computed = json<{ items: unknown[] }>(await service!.get('/v1/stats/daily?borough=queens&borough=queens&status=open&status=closed&status=assigned&status=in_progress&status=pending')).items;
    // the numbers counted from the rows equal the snapshot's precomputed ones
    expect(computed).toEqual(json<{ items: unknown[] }>(await service!.get('/v1/stats/daily?borough=queens')).items);
    const monthly = json<{ items: { month: string; opened: number; complete: boolean }[] }>(await service!.get('/v1/stats/monthly')).items;
    expect(monthly.map((month) => [month.month, month.complete])).toEqual([
      ['2025-01', true], ['2025-02', true], ['2025-03', true], ['2025-04', true], ['2025-05', true], ['2025-06', false],
    ]);
    expect(monthly.reduce((sum, month) => sum + month.opened, 0)).toBe(109_915);

    const started = performance.now();
    const csv = await service!.get('/v1/exports/service-requests');
    const seconds = (performance.now() - started) / 1000;
    expect(csv.statusCode).toBe(200);
    expect(csv.body.split('\r\n')).toHaveLength(109_915 + 2); // header, rows, the empty rest after the last CRLF
    expect(seconds, 'the whole export (generous bound on a loaded machine; target 3 s, see bench/README.md)').toBeLessThan(30);
  });

  it('GET /v1/stats/groups: the documented example answers as sent, and the groups add up to the list', async () => {
    expect(json(await service!.get(GROUP_EXAMPLE_QUERY))).toEqual(REQUEST_EXAMPLES.groupStats);
    const groups = json<{ items: { key: { borough: string | null }; opened: number }[]; others: { opened: number }[] }>(await service!.get('/v1/stats/groups?by=borough,status&limit=3'));
    expect(groups.items).toHaveLength(3);
    expect([...groups.items, ...groups.others].reduce((sum, group) => sum + group.opened, 0)).toBe(109_915);
    const queens = await walk('borough=queens&status=closed');
    const queensClosed = json<{ items: { opened: number; closed: number }[] }>(await service!.get('/v1/stats/groups?by=borough,status&borough=queens&status=closed')).items;
    expect(queensClosed.map((group) => [group.opened, group.closed])).toEqual([[queens.length, queens.length]]);
  });

  it('the export streams with flat memory, plain and gzip (RSS growth under a generous bound)', async () => {
    await service!.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = service!.app.server.address() as AddressInfo;
    for (const encoding of ['identity', 'gzip']) {
      const rss = () => process.memoryUsage.rss() / 1024 / 1024;
      const before = rss();
      let peak = before;
      const sampler = setInterval(() => (peak = Math.max(peak, rss())), 20);
      const lines = await new Promise<number>((resolveLines, reject) => {
        const sent = request({ port, path: '/v1/exports/service-requests', headers: { 'x-api-key': TEST_API_KEY, 'accept-encoding': encoding } }, (response) => {
          expect(response.headers['content-encoding']).toBe(encoding === 'gzip' ? 'gzip' : undefined);
          const body = encoding === 'gzip' ? response.pipe(createGunzip()) : response;
          let count = 0;
          body.on('data', (chunk: Buffer) => {
            for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) count += 1;
          });
          body.on('end', () => resolveLines(count));
          body.on('error', reject);
        });
        sent.on('error', reject);
        sent.end();
      });
      clearInterval(sampler);
      console.log(`export (${encoding}): RSS ${before.toFixed(0)} MB -> peak ${peak.toFixed(0)} MB (+${(peak - before).toFixed(0)})`);
      expect(lines).toBe(109_915 + 1);
      // The measured growth is in bench/README.md ("Figures behind source comments"); it stays far under the export's size.
      expect(peak - before).toBeLessThan(80);
    }
  });
});
