import { describe, expect, it } from 'vitest';
import { CLOSED_SECONDS, CODED_COLUMNS, CREATED_SECONDS, DAY_SECONDS, DAYS_TO_CLOSE_HUNDREDTHS, LATITUDE_DEGREES, LONGITUDE_DEGREES, ROW_COLUMN_CHUNK } from '../../src/snapshot/index.js';
import { RowColumnsAssembly, releaseRowColumns, type RowColumns, type StoredChunk } from '../../src/services/requests/engine/row-columns-memory.js';
import { expectedScanRows, expectedScanWork } from '../../src/services/requests/engine/expected-work.js';
import type { RowColumnScan } from '../../src/services/requests/engine/row-column-scan.js';
import type { GroupScan } from '../../src/services/requests/engine/group-query.js';

/**
 * What the walk pool expects of a planned scan, to run the cheapest waiting one first
 * (expected-work.ts): the rows of its created_at range, exact to the day, and of those the rows that
 * match, guessed from the codes' rows counted on every 8th row at the load. Over 200,000 rows, 1,000 a
 * day from 2024-01-01, whose first coded column holds code 1 on the first 8 rows of every 32 and code 2 on
 * the others.
 */
const ROWS = 200_000;
const PER_DAY = 1_000;
const FIRST_DAY = Date.UTC(2024, 0, 1) / 1000 / DAY_SECONDS;
const [COLUMN] = CODED_COLUMNS;

function rowColumns(): RowColumns {
  const chunks: (StoredChunk & { data: Buffer })[] = [];
  for (let chunk = 0; chunk * ROW_COLUMN_CHUNK < ROWS; chunk++) {
    const from = chunk * ROW_COLUMN_CHUNK;
    const rowCount = Math.min(ROW_COLUMN_CHUNK, ROWS - from);
    const stored = (column_name: string, bytes_per_row: number, data: Buffer): StoredChunk & { data: Buffer } => ({ column_name, chunk, row_count: rowCount, bytes_per_row, data });
    const codes = Buffer.from(Uint8Array.from({ length: rowCount }, (_, i) => (Math.floor((from + i) / 8) % 4 === 0 ? 1 : 2)));
    for (const column of CODED_COLUMNS) chunks.push(stored(column, 1, column === COLUMN ? codes : Buffer.alloc(rowCount)));
    const seconds = Uint32Array.from({ length: rowCount }, (_, i) => (FIRST_DAY + Math.floor((from + i) / PER_DAY)) * DAY_SECONDS + ((from + i) % PER_DAY));
    chunks.push(stored(CREATED_SECONDS, 4, Buffer.from(seconds.buffer)));
    for (const name of [DAYS_TO_CLOSE_HUNDREDTHS, CLOSED_SECONDS]) chunks.push(stored(name, 4, Buffer.alloc(rowCount * 4)));
    for (const name of [LATITUDE_DEGREES, LONGITUDE_DEGREES]) chunks.push(stored(name, 8, Buffer.alloc(rowCount * 8)));
  }
  const values = [1, 2].map((code) => ({ column_name: COLUMN, code, value: `value ${code}` }));
  const assembly = RowColumnsAssembly.begin(values, chunks) as RowColumnsAssembly;
  for (const chunk of chunks) expect(assembly.copy(chunk)).toBe(true);
  return assembly.finish();
}

const columns = rowColumns();
const dayBound = (day: number): number => (FIRST_DAY + day) * DAY_SECONDS;
const scanOf = (parts: Partial<RowColumnScan>): RowColumnScan => ({ columns: 1, filters: [], from: null, to: null, ...parts });
const grouping = (period: GroupScan['period']): GroupScan => ({ by: [COLUMN], period, order: 'opened', descending: true, limit: 20, ranks: [new Uint32Array(3)] });

describe('what a planned scan is expected to read and match', () => {
  it('the load counts each code on every 8th row', () => {
    expect(Array.from(columns.sampledCodeRows[COLUMN])).toEqual([0, ROWS / 32, (ROWS * 3) / 32]);
    expect(Array.from(columns.sampledCodeRows[CODED_COLUMNS[1]])).toEqual([ROWS / 8]);
  });

  it('every row without a range; the rows of the days of a range, a day cut by a bound counted whole; none past the rows', () => {
    expect(expectedScanRows(columns, scanOf({}))).toEqual({ rangeRows: ROWS, matchedRows: ROWS, rangeDays: ROWS / PER_DAY });
    expect(expectedScanRows(columns, scanOf({ from: dayBound(10), to: dayBound(15) }))).toMatchObject({ rangeRows: 5 * PER_DAY, rangeDays: 5 });
    expect(expectedScanRows(columns, scanOf({ from: dayBound(10) + 3_600, to: dayBound(15) - 3_600 }))).toMatchObject({ rangeRows: 5 * PER_DAY });
    expect(expectedScanRows(columns, scanOf({ from: dayBound(-50), to: dayBound(5) }))).toMatchObject({ rangeRows: 5 * PER_DAY });
    expect(expectedScanRows(columns, scanOf({ from: dayBound(500) }))).toMatchObject({ rangeRows: 0, matchedRows: 0 });
  });

  it('a closed_at range with the late closings listed: the rows created from its start less their days to its end less the earliest close', () => {
    const late = { ...columns, lateClosings: { days: 30, earliestClose: 0, seconds: new Uint32Array(0), rows: new Int32Array(0) } };
    expect(expectedScanRows(late, scanOf({ closedFrom: dayBound(100), closedTo: dayBound(101) }))).toMatchObject({ rangeRows: 31 * PER_DAY, rangeDays: 31 });
    expect(expectedScanRows(late, scanOf({ closedFrom: dayBound(100), from: dayBound(90) }))).toMatchObject({ rangeRows: 110 * PER_DAY });
    expect(expectedScanRows(late, scanOf({ closedTo: dayBound(10) }))).toMatchObject({ rangeRows: 10 * PER_DAY });
    expect(expectedScanRows(columns, scanOf({ closedFrom: dayBound(100), closedTo: dayBound(101) }))).toMatchObject({ rangeRows: ROWS });
  });

  it('an equality filter keeps the share of the rows its codes hold, whatever the share of the codes', () => {
    expect(expectedScanRows(columns, scanOf({ filters: [{ column: COLUMN, accepted: [1] }] })).matchedRows).toBe(ROWS / 4);
    expect(expectedScanRows(columns, scanOf({ filters: [{ column: COLUMN, accepted: [2] }] })).matchedRows).toBe((ROWS * 3) / 4);
    expect(expectedScanRows(columns, scanOf({ filters: [{ column: COLUMN, accepted: [1, 2] }], closed: true })).matchedRows).toBe(ROWS / 2);
    // A value no row holds: the least share, not none.
    expect(expectedScanRows(columns, scanOf({ filters: [{ column: COLUMN, accepted: [0] }] })).matchedRows).toBe(ROWS / 1000);
  });

  it('a map box keeps its share of the city', () => {
    const box = { minLongitude: -74.26, minLatitude: 40.49, maxLongitude: -73.975, maxLatitude: 40.92 };
    expect(expectedScanRows(columns, scanOf({ box })).matchedRows).toBeCloseTo(ROWS / 2, 6);
  });

  it('the work: more rows of the range, more checks, more matched rows and more groups are each more work', () => {
    const work = (kind: Parameters<typeof expectedScanWork>[0], parts: Partial<RowColumnScan>): number => {
      const scan = scanOf(parts);
      return expectedScanWork(kind, { ...scan, expected: expectedScanRows(columns, scan) });
    };
    const week = { from: dayBound(0), to: dayBound(7) };
    expect(work('count', week)).toBeLessThan(work('count', {}));
    expect(work('count', { filters: [{ column: COLUMN, accepted: [2] }] })).toBeLessThan(work('count', { filters: [{ column: COLUMN, accepted: [2] }], closed: true }));
    expect(work('count', { filters: [{ column: COLUMN, accepted: [1] }] })).toBeLessThan(work('count', { filters: [{ column: COLUMN, accepted: [2] }] }));
    expect(work('count', {})).toBeLessThan(work('groups', { groups: grouping(null) }));
    expect(work('groups', { groups: grouping('year') })).toBeLessThan(work('groups', { groups: grouping('day') }));
    expect(work('groups', { ...week, groups: grouping('day') })).toBeLessThan(work('count', {}));
    // A plan that expects nothing (a scan made by hand) is run after every other.
    expect(expectedScanWork('count', scanOf({}))).toBe(Number.POSITIVE_INFINITY);
  });

  it('the row columns are released', () => {
    releaseRowColumns(columns.bytes);
  });
});
