import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { NO_FILTERS, type ListFilters } from '../../src/services/requests/list-filters.js';
import type { ServiceRequestRecord } from '../../src/services/requests/store/service-request-store.js';
import { lateRowsAtMost, listLateClosings } from '../../src/services/requests/engine/late-closings.js';
import { forEachMatchingRow, ROWS_PER_INTERVAL, scanCount, scannedIntervals, scanPageSecondsWithin, type LateClosings } from '../../src/services/requests/engine/row-column-scan.js';
import { releaseRowColumns, rowColumnScanOf, type RowColumns } from '../../src/services/requests/engine/row-columns-memory.js';
import { loadSqliteRowColumns } from '../../src/services/requests/engine/sqlite-row-columns.js';
import { RowWalkPool } from '../../src/services/requests/engine/sqlite-row-walks.js';
import { SeededRandom } from '../../src/ingest/nyc311/seeded-random.js';
import { boundSeconds } from '../../src/snapshot/index.js';
import { byScan, matches, randomRows, sqliteStoreOfRows } from './support/random-rows.js';

/**
 * A closed_at range is read from the rows created shortly before it and from the few rows closed long
 * after they were created, which the row columns list by closed_at day when they are loaded
 * (late-closings.ts, scannedIntervals): checked here against every row read, for random ranges and
 * filters, on rows of two months most of which close within a day.
 */
const DAY_MS = 86_400_000;
const START_MS = Date.parse('2025-01-01T00:00:00Z');
const wallText = (ms: number): string => new Date(ms).toISOString().slice(0, 19);
const wallSeconds = (text: string): number => Date.parse(`${text}Z`) / 1000;

/** Rows created over 58 days: a fifth open, 3% closed 3 to 400 days later, the others within a day. */
function lateClosingRows(random: SeededRandom, count: number): ServiceRequestRecord[] {
  return randomRows(random, count)
    .map((row) => {
      const created = START_MS + random.int(0, 58 * 86_400 - 1) * 1000;
      const days = random.chance(0.2) ? null : random.chance(0.03) ? random.int(300, 40_000) / 100 : random.int(0, 99) / 100;
      return { ...row, created_at: wallText(created), closed_at: days === null ? null : wallText(created + Math.round(days * 100) * 864_000), days_to_close: days };
    })
    .sort((a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.id - b.id));
}

/** A closed_at range of an hour to 40 days (or open on one side) within the rows' closings, with some of the other filters. */
function closedRangeFilters(random: SeededRandom): ListFilters {
  const from = START_MS + random.int(0, 70 * 24) * 3_600_000 + (random.chance(0.3) ? random.int(0, 3599) * 1000 : 0);
  const hours = Math.round(Math.exp(random.next() * Math.log(40 * 24)));
  const side = random.int(0, 5);
  return {
    ...NO_FILTERS,
    closed_from: side === 0 ? null : wallText(from),
    closed_to: side === 1 ? null : wallText(from + hours * 3_600_000),
    closed: random.chance(0.1) ? random.chance(0.5) : null,
    borough: random.chance(0.3) ? ['brooklyn', null] : null,
    status: random.chance(0.2) ? ['closed', 'open'] : null,
    created_from: random.chance(0.2) ? wallText(START_MS + random.int(0, 40) * DAY_MS) : null,
  };
}

/** Every row a scan of the filters visits, in order. */
function visitedRows(columns: RowColumns, filters: ListFilters): number[] {
  const visited: number[] = [];
  forEachMatchingRow(columns, rowColumnScanOf(columns, 0, filters), (rows, count) => {
    for (let i = 0; i < count; i++) visited.push(rows[i] as number);
  });
  return visited;
}

describe('late closings: a closed_at range reads the rows created shortly before it and the rows closed long after they were created', () => {
  const random = new SeededRandom(2026);
  const rows = lateClosingRows(random, 12_000);
  const sqlite = sqliteStoreOfRows(rows, { scanRows: 2_048, indexRows: 512 });
  let columns: RowColumns | null = null;
  const loaded = (): RowColumns => {
    if (columns === null) throw new Error('the row columns are loaded before the tests');
    return columns;
  };
  beforeAll(async () => {
    const database = new Database(sqlite.path, { readonly: true });
    try {
      columns = await loadSqliteRowColumns(database, () => true);
    } finally {
      database.close();
    }
  });
  afterAll(() => {
    if (columns !== null) releaseRowColumns(columns.bytes);
  });
  const lateness = rows.map((row) => (row.closed_at === null ? null : wallSeconds(row.closed_at) - wallSeconds(row.created_at)));

  it('the load lists the rows closed at least the fewest whole days after they were created that keep them to about a 32nd of the rows (4,096 at least; counted on every 8th row), by closed_at day then row', async () => {
    const columns = loaded();
    for (const atMost of [lateRowsAtMost(rows.length), 100, 20]) {
      const late = atMost === lateRowsAtMost(rows.length) ? (columns.lateClosings as LateClosings) : ((await listLateClosings(columns, rows.length, atMost)) as LateClosings);
      const listedAt = (days: number): number[] => lateness.flatMap((seconds, row) => (seconds !== null && seconds >= days * 86_400 ? [row] : []));
      // The days are chosen on every 8th row, each counting for 8.
      const guessedAt = (days: number): number => 8 * listedAt(days).filter((row) => row % 8 === 0).length;
      let fewest = 1;
      while (guessedAt(fewest) > atMost) fewest += 1;
      expect(late.days).toBe(fewest);
      const byDay = listedAt(late.days).sort((a, b) => Math.floor(wallSeconds(rows[a]!.closed_at!) / 86_400) - Math.floor(wallSeconds(rows[b]!.closed_at!) / 86_400) || a - b);
      expect([...late.rows]).toEqual(byDay);
      expect([...late.seconds]).toEqual(byDay.map((row) => wallSeconds(rows[row]!.closed_at!)));
      expect(late.earliestClose).toBe(Math.min(...lateness.flatMap((seconds) => (seconds === null ? [] : [seconds]))));
    }
    expect(lateRowsAtMost(10_000_000)).toBe(312_500);
  });

  it('every row a scan of a random closed_at range visits is one it visits without the list, in the same order, and the count is the matching rows (200 ranges, three sizes of the list)', async () => {
    const columns = loaded();
    const lists = [columns.lateClosings, await listLateClosings(columns, rows.length, 100), await listLateClosings(columns, rows.length, 20)];
    const without = { ...columns, lateClosings: null };
    let skipped = 0;
    for (let i = 0; i < 200; i++) {
      const filters = closedRangeFilters(random);
      const expected = visitedRows(without, filters);
      expect(expected.length).toBe(rows.filter((row) => matches(row, filters)).length);
      for (const lateClosings of lists) {
        const listed = { ...columns, lateClosings };
        const scan = rowColumnScanOf(listed, 0, filters);
        expect(visitedRows(listed, filters), JSON.stringify(filters)).toEqual(expected);
        expect(scanCount(listed, scan)).toBe(expected.length);
        const read = scannedIntervals(listed, scan).reduce((sum, bound, at) => sum + (at % 2 === 0 ? -bound : bound), 0);
        if (read < rows.length / 2) skipped += 1;
      }
    }
    // Most narrow ranges read less than half the rows.
    expect(skipped).toBeGreaterThan(150);
  });

  it('a closed_at range of a day reads its listed rows on their own and the rows created from the list\'s days before it; a range that holds many listed rows reads every row before', () => {
    const columns = loaded();
    const late = columns.lateClosings as LateClosings;
    // The first day from February 10 on which a row closed that was created more than the list's days before it.
    const closedOn = (i: number): number => Math.floor((late.seconds[i] as number) / 86_400);
    const day = [...late.rows.keys()].map(closedOn).find((d, i) => d * 86_400 >= wallSeconds('2025-02-10T00:00:00') && wallSeconds(rows[late.rows[i] as number]!.created_at) < (d - late.days) * 86_400) as number;
    const from = wallText(day * DAY_MS);
    const to = wallText((day + 1) * DAY_MS);
    const scan = rowColumnScanOf(columns, 0, { ...NO_FILTERS, closed_from: from, closed_to: to });
    const intervals = scannedIntervals(columns, scan);
    const start = rows.findIndex((row) => wallSeconds(row.created_at) >= wallSeconds(from) - late.days * 86_400);
    const end = rows.findIndex((row) => row.created_at >= to);
    expect(intervals.slice(-2)).toEqual([start, end]);
    const listedBefore = [...late.rows].filter((row, i) => row < start && (late.seconds[i] as number) >= wallSeconds(from) && (late.seconds[i] as number) < wallSeconds(from) + 86_400);
    expect(intervals.length).toBeGreaterThan(2);
    for (const row of listedBefore) expect(intervals.some((bound, at) => at % 2 === 0 && row >= bound && row < (intervals[at + 1] as number))).toBe(true);
    expect(intervals.slice(0, -2).reduce((sum, bound, at) => sum + (at % 2 === 0 ? -bound : bound), 0)).toBeLessThan(listedBefore.length * ROWS_PER_INTERVAL);
    // Every listed row closed in the range: too many to read on their own.
    const wide = rowColumnScanOf(columns, 0, { ...NO_FILTERS, closed_from: '2025-01-02T00:00:00' });
    expect(scannedIntervals(columns, wide)).toEqual([0, rows.length]);
  });

  it('the first page of a closed_at range of a day is found on the event loop within its first 2,048 rows read, and the same page without the list would read more', async () => {
    const columns = loaded();
    const filters: ListFilters = { ...NO_FILTERS, closed_from: '2025-02-20T00:00:00', closed_to: '2025-02-21T00:00:00', borough: ['brooklyn', 'queens', null] };
    const page = { after: null, fetch: 51 };
    expect(scanPageSecondsWithin(columns, { ...rowColumnScanOf(columns, 0, filters), page }, 2_048)).not.toBeNull();
    expect(scanPageSecondsWithin({ ...columns, lateClosings: null }, { ...rowColumnScanOf(columns, 0, filters), page }, 2_048)).toBeNull();
    const run = vi.spyOn(RowWalkPool.prototype, 'run');
    try {
      expect(await sqlite.store.listIds({ filters, after: null, fetch: 51 })).toEqual(byScan(rows, filters, null, 51));
      expect(run.mock.calls.map(([kind]) => kind)).toEqual([]);
    } finally {
      run.mockRestore();
    }
  });

  it('a listed row read on its own counts as 1,024 rows against a scan\'s reach (a page\'s rows read on the event loop)', () => {
    const columns = loaded();
    const window = { from: wallSeconds('2025-02-25T00:00:00'), to: wallSeconds('2025-02-26T00:00:00') };
    // Five rows listed as closed in the range, far apart, before the rows created 10 days before it.
    const listed = [100, 2_000, 4_000, 6_000, 8_000];
    const lateClosings: LateClosings = { days: 10, earliestClose: 0, seconds: Uint32Array.from(listed, () => window.from + 60), rows: Int32Array.from(listed) };
    const scan = rowColumnScanOf(columns, 0, { ...NO_FILTERS, closed_from: wallText(window.from * 1000), closed_to: wallText(window.to * 1000) });
    const fake = { ...columns, lateClosings };
    expect(scannedIntervals(fake, scan).slice(0, 10)).toEqual(listed.flatMap((row) => [row, row + 1]));
    expect(forEachMatchingRow(fake, scan, () => false, { rowsAtMost: 4 * ROWS_PER_INTERVAL })).toBe(false);
    expect(forEachMatchingRow(fake, scan, () => false, { rowsAtMost: 5 * ROWS_PER_INTERVAL + rows.length })).toBe(true);
  });

  it('a closed_to bound ends the range at the rows created after it (plus the earliest close, none earlier than created here)', () => {
    const columns = loaded();
    const scan = rowColumnScanOf(columns, 0, { ...NO_FILTERS, closed_to: '2025-01-20T06:00:00' });
    expect((columns.lateClosings as LateClosings).earliestClose).toBeGreaterThanOrEqual(0);
    expect(scannedIntervals(columns, scan)).toEqual([0, rows.findIndex((row) => wallSeconds(row.created_at) >= boundSeconds('2025-01-20T06:00:00') - (columns.lateClosings as LateClosings).earliestClose)]);
  });
});
