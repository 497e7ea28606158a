import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  CLOSED_SECONDS,
  CODED_COLUMNS,
  CREATED_SECONDS,
  DAY_SECONDS,
  DAYS_TO_CLOSE_HUNDREDTHS,
  LATITUDE_DEGREES,
  LONGITUDE_DEGREES,
  NOT_CLOSED_SECONDS,
  NULL_HUNDREDTHS,
  ROW_COLUMN_CHUNK,
  type CodedColumn,
  type SummaryUnit,
} from '../../src/snapshot/index.js';
import { RowColumnsAssembly, releaseRowColumns, type RowColumns, type StoredChunk } from '../../src/services/requests/engine/row-columns-memory.js';
import { firstRowFrom, readDegrees, readRows, readSeconds, scanBuckets, scanCount, type RowColumnScan, type StoredArray } from '../../src/services/requests/engine/row-column-scan.js';
import { PERIOD_KEY_OF } from '../../src/services/requests/engine/group-walk.js';
import { PACKED_FIELDS, scanGroups } from '../../src/services/requests/engine/group-scan.js';
import { COUNTED_BY_VALUE, RECORDED } from './support/group-scan-ways.js';
import { GROUP_PERIODS, type GroupScan } from '../../src/services/requests/engine/group-query.js';
import { bucketSummaryOf, unpackBuckets } from '../../src/services/requests/engine/period-stats.js';
import type { BucketSummary } from '../../src/services/requests/store/service-request-store.js';
import { SeededRandom } from '../../src/ingest/nyc311/seeded-random.js';
import { bucketOfDay } from './support/expected.js';

/**
 * The row columns in memory hold created_at and days_to_close in two bytes a row (row-column-scan.ts):
 * a row's second of its day (less 65,536 from 18:12:16 on) with the first row of each day and of its
 * late part, and hundredths up to 655.33 days with the others listed apart. Here, over stored chunks
 * of 150,000 rows (three chunks, days across their edges, days without rows), the narrowed columns
 * answer every bound and bucket as the stored wall seconds and hundredths do, whatever order the
 * chunks come in; in a file of their own (the default) and in shared memory (where no file can be
 * written) alike.
 */
const ROWS = 150_000;
const random = new SeededRandom(20);
const START = Date.UTC(2024, 0, 1) / 1000;

/** Sorted wall seconds: mostly a few seconds apart, some at 18:12:15, 18:12:16, midnight or 23:59:59, and gaps of days. */
const seconds = new Uint32Array(ROWS);
let at = START;
for (let row = 0; row < ROWS; row++) {
  const day = Math.floor(at / DAY_SECONDS) * DAY_SECONDS;
  const step = random.int(0, 40);
  if (step === 0) at = Math.max(at, day + random.pick([65_535, 65_536, 86_399]));
  else if (step === 1 && random.chance(0.01)) at = day + DAY_SECONDS * random.int(2, 4);
  else at += random.int(0, 60);
  seconds[row] = at;
}
/** The codes of the first coded column (0 to 4); the others' are 0. */
const firstCodes = Uint8Array.from({ length: ROWS }, () => random.int(0, 4));
/** Hundredths: none, 0 to 655.33 days, and now and then more, less than 0 (closed before created) or the edges of two bytes; for code 4 of the first column, as often as not. */
const hundredths = Int32Array.from({ length: ROWS }, (_, row) =>
  random.chance(0.3) ? NULL_HUNDREDTHS : random.chance(firstCodes[row] === 4 ? 0.5 : 0.02) ? random.pick([65_533, 65_534, 65_535, 65_536, random.int(65_537, 300_000), -1, random.int(-90_000, -2)]) : random.int(0, 65_533),
);

/** closed_at: the created second plus the hundredths' seconds, or none. */
const closedSeconds = Uint32Array.from(hundredths, (h, row) => (h === NULL_HUNDREDTHS ? NOT_CLOSED_SECONDS : (seconds[row] as number) + Math.max(0, h) * 864));
/** Locations with every decimal, or none (NaN). */
const latitudes = Float64Array.from({ length: ROWS }, () => (random.chance(0.1) ? Number.NaN : 40.5 + random.next() * 0.4));
const longitudes = Float64Array.from(latitudes, (latitude) => (Number.isNaN(latitude) ? Number.NaN : -74.2 + random.next() * 0.5));

function chunksOf(): (StoredChunk & { data: Buffer })[] {
  const chunks: (StoredChunk & { data: Buffer })[] = [];
  for (let chunk = 0; chunk * ROW_COLUMN_CHUNK < ROWS; chunk++) {
    const from = chunk * ROW_COLUMN_CHUNK;
    const rowCount = Math.min(ROW_COLUMN_CHUNK, ROWS - from);
    const stored = (column_name: string, bytes_per_row: number, data: Buffer): StoredChunk & { data: Buffer } => ({ column_name, chunk, row_count: rowCount, bytes_per_row, data });
    for (const column of CODED_COLUMNS) chunks.push(stored(column, 1, column === CODED_COLUMNS[0] ? Buffer.from(firstCodes.slice(from, from + rowCount)) : Buffer.alloc(rowCount)));
    chunks.push(stored(CREATED_SECONDS, 4, Buffer.from(seconds.slice(from, from + rowCount).buffer)));
    chunks.push(stored(DAYS_TO_CLOSE_HUNDREDTHS, 4, Buffer.from(hundredths.slice(from, from + rowCount).buffer)));
    chunks.push(stored(CLOSED_SECONDS, 4, Buffer.from(closedSeconds.slice(from, from + rowCount).buffer)));
    chunks.push(stored(LATITUDE_DEGREES, 8, Buffer.from(latitudes.slice(from, from + rowCount).buffer)));
    chunks.push(stored(LONGITUDE_DEGREES, 8, Buffer.from(longitudes.slice(from, from + rowCount).buffer)));
  }
  return chunks;
}

/** The row columns from the chunks copied in this order (the listing of the chunks is in order, as its query sorts it), with their bytes in `directory`. */
function assembled(chunks: (StoredChunk & { data: Buffer })[], directory: string): RowColumns {
  const assembly = RowColumnsAssembly.begin([], chunksOf(), Number.POSITIVE_INFINITY, directory) as RowColumnsAssembly;
  for (const chunk of chunks) expect(assembly.copy(chunk)).toBe(true);
  return assembly.finish();
}

/** Every row of a stored column. */
const allRows = (columns: RowColumns, array: StoredArray): number[] => Array.from(readRows(columns.bytes, array, 0, columns.rows, 0));

const directory = mkdtempSync(join(tmpdir(), 'row-columns-test-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));
/** A directory where no file can be written: the bytes are held in shared memory. */
const UNWRITABLE = join(directory, 'missing', 'directory');

describe('where the row columns are held', () => {
  it('in a file without a name: nothing is left in the directory, and the descriptor is closed when released', () => {
    const columns = assembled(chunksOf(), directory);
    expect('fd' in columns.bytes).toBe(true);
    expect(readdirSync(directory)).toEqual([]);
    releaseRowColumns(columns.bytes);
    expect(() => readRows(columns.bytes, columns.created.secondsLow, 0, 1, 0)).toThrow();
  });

  it('in shared memory where no file can be written, with the same bytes', () => {
    const inMemory = assembled(chunksOf(), UNWRITABLE);
    const inFile = assembled(chunksOf(), directory);
    expect('memory' in inMemory.bytes).toBe(true);
    expect(allRows(inMemory, inMemory.created.secondsLow)).toEqual(allRows(inFile, inFile.created.secondsLow));
    expect(allRows(inMemory, inMemory.daysToClose.hundredths)).toEqual(allRows(inFile, inFile.daysToClose.hundredths));
    releaseRowColumns(inFile.bytes);
  });

  it('a load that stops leaves no file and no descriptor open', () => {
    const assembly = RowColumnsAssembly.begin([], chunksOf(), Number.POSITIVE_INFINITY, directory) as RowColumnsAssembly;
    assembly.abandon();
    expect(readdirSync(directory)).toEqual([]);
  });
});

/** The first row whose stored second is at least `bound` (the stored seconds are sorted: a binary search). */
function firstRowOfStored(bound: number): number {
  let [low, high] = [0, ROWS];
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((seconds[middle] as number) < bound) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** Each row's day, as text. */
const dayOfStored = Array.from(seconds, (second) => new Date(Math.floor(second / DAY_SECONDS) * DAY_SECONDS * 1000).toISOString().slice(0, 10));
/** Each row's bucket of each unit, found once per day. */
const bucketOfStored = new Map<SummaryUnit, string[]>();
function bucketsOfRows(unit: SummaryUnit): string[] {
  const known = bucketOfStored.get(unit);
  if (known !== undefined) return known;
  const ofDay = new Map<string, string>();
  const buckets = dayOfStored.map((day) => ofDay.get(day) ?? ofDay.set(day, bucketOfDay(unit, day)).get(day)!);
  bucketOfStored.set(unit, buckets);
  return buckets;
}

function bucketsOfStored(from: number, to: number, unit: SummaryUnit): Map<string, BucketSummary> {
  const groups = new Map<string, { opened: number; closeDays: number[] }>();
  const bucketOfRow = bucketsOfRows(unit);
  for (let row = from; row < to; row++) {
    const key = bucketOfRow[row] as string;
    const group = groups.get(key) ?? { opened: 0, closeDays: [] };
    groups.set(key, group);
    group.opened += 1;
    if (hundredths[row] !== NULL_HUNDREDTHS) group.closeDays.push((hundredths[row] as number) / 100);
  }
  return new Map([...groups].map(([key, group]) => [key, bucketSummaryOf(group.opened, Float64Array.from(group.closeDays))]));
}

describe.each([
  ['a file', directory],
  ['shared memory', UNWRITABLE],
])('created_at and days_to_close in two bytes a row, in %s', (_, where) => {
  const inOrder = assembled(chunksOf(), where);

  it('the chunks give the same columns in any order (a binary COPY has no order)', () => {
    const reversed = assembled(chunksOf().reverse(), where);
    expect(reversed.created.dayStarts).toEqual(inOrder.created.dayStarts);
    expect(reversed.created.lateStarts).toEqual(inOrder.created.lateStarts);
    expect(allRows(reversed, reversed.created.secondsLow)).toEqual(allRows(inOrder, inOrder.created.secondsLow));
    expect(allRows(reversed, reversed.daysToClose.hundredths)).toEqual(allRows(inOrder, inOrder.daysToClose.hundredths));
    expect(reversed.daysToClose.outsideRows).toEqual(inOrder.daysToClose.outsideRows);
    expect(reversed.daysToClose.outsideHundredths).toEqual(inOrder.daysToClose.outsideHundredths);
    expect(inOrder.daysToClose.outsideRows.length).toBeGreaterThan(0);
    releaseRowColumns(reversed.bytes);
  });

  it('a bound finds the first row of its second: on a row, between rows, at 18:12:15 and 18:12:16, at midnight, on a day without rows, before and after every row', () => {
    const bounds = [Number.NEGATIVE_INFINITY, 0, START - 1, START, Number.POSITIVE_INFINITY, 2 ** 32, (seconds[ROWS - 1] as number) + 1];
    for (let i = 0; i < 300; i++) {
      const row = random.int(0, ROWS - 1);
      const day = Math.floor((seconds[row] as number) / DAY_SECONDS) * DAY_SECONDS;
      bounds.push(seconds[row] as number, (seconds[row] as number) + 1, day, day + 65_535, day + 65_536, day + 65_537, day + DAY_SECONDS, day + 2 * DAY_SECONDS + 3_600);
    }
    for (const bound of bounds) expect(firstRowFrom(inOrder, bound), `bound ${bound}`).toBe(firstRowOfStored(bound));
  });

  it('counts and the numbers per day, week and month of a range are those of the stored rows (days_to_close above 655.33 included)', () => {
    for (let i = 0; i < 20; i++) {
      const from = random.chance(0.2) ? null : (seconds[random.int(0, ROWS - 1)] as number) + random.pick([0, 1, 65_536]);
      const to = random.chance(0.2) ? null : (seconds[random.int(0, ROWS - 1)] as number) + random.pick([0, 1, 30_000]);
      const scan: RowColumnScan = { columns: 1, filters: [], from, to };
      const start = from === null ? 0 : firstRowOfStored(from);
      const end = Math.max(start, to === null ? ROWS : firstRowOfStored(to));
      expect(scanCount(inOrder, scan)).toBe(end - start);
      for (const unit of ['day', 'week', 'month'] as const) expect(unpackBuckets(scanBuckets(inOrder, scan, unit)), unit).toEqual(bucketsOfStored(start, end, unit));
    }
  });

  it('closed_at and the location are kept as stored, to the last bit, in any order of the chunks', () => {
    const reversed = assembled(chunksOf().reverse(), where);
    const bytesOf = (array: Uint32Array | Float64Array): Buffer => Buffer.from(array.buffer, array.byteOffset, array.byteLength);
    for (const columns of [inOrder, reversed]) {
      expect(bytesOf(readSeconds(columns.bytes, columns.closed, 0, ROWS, 0)).equals(bytesOf(closedSeconds))).toBe(true);
      expect(bytesOf(readDegrees(columns.bytes, columns.latitude, 0, ROWS, 0)).equals(bytesOf(latitudes))).toBe(true);
      expect(bytesOf(readDegrees(columns.bytes, columns.longitude, 0, ROWS, 0)).equals(bytesOf(longitudes))).toBe(true);
    }
    releaseRowColumns(reversed.bytes);
  });

  it('a map box scan counts the rows whose stored location lies in it, edges included; rows without a location never', () => {
    for (let i = 0; i < 20; i++) {
      // Edges on stored locations (inclusive) or anywhere.
      const [a, b] = [random.int(0, ROWS - 1), random.int(0, ROWS - 1)];
      const onRows = random.chance(0.5) && !Number.isNaN(latitudes[a]) && !Number.isNaN(latitudes[b]);
      const box = onRows
        ? {
            minLatitude: Math.min(latitudes[a] as number, latitudes[b] as number),
            maxLatitude: Math.max(latitudes[a] as number, latitudes[b] as number),
            minLongitude: Math.min(longitudes[a] as number, longitudes[b] as number),
            maxLongitude: Math.max(longitudes[a] as number, longitudes[b] as number),
          }
        : { minLatitude: 40.6, maxLatitude: 40.6 + random.next() * 0.3, minLongitude: -74.1, maxLongitude: -74.1 + random.next() * 0.3 };
      const from = random.chance(0.5) ? null : (seconds[random.int(0, ROWS - 1)] as number);
      const start = from === null ? 0 : firstRowOfStored(from);
      let expected = 0;
      for (let row = start; row < ROWS; row++) {
        const [y, x] = [latitudes[row] as number, longitudes[row] as number];
        if (y >= box.minLatitude && y <= box.maxLatitude && x >= box.minLongitude && x <= box.maxLongitude) expected += 1;
      }
      expect(scanCount(inOrder, { columns: 1, filters: [], from, to: null, box })).toBe(expected);
    }
  });

  /** The day of each row (as the scan keys periods), made once. */
  const days: string[] = [];
  const dayOf = (row: number): string => (days[row] ??= new Date((seconds[row] as number) * 1000).toISOString().slice(0, 10));

  it('the groups of a scan, by a column and any period, recorded or counted by value, have the counts, middles and p90 of the stored hundredths (those two bytes do not hold included, below 0 too), the groups left out too', () => {
    const column = CODED_COLUMNS[0] as CodedColumn;
    for (const period of [null, ...GROUP_PERIODS]) {
      // The stored hundredths of each period, by code.
      const stored = new Map<string, number[][]>();
      // Opened, closed and closed within 14 days (a value below 0 included) of each period, by code.
      const counted = new Map<string, number[][]>();
      for (let row = 0; row < ROWS; row++) {
        const value = hundredths[row] as number;
        const key = period === null ? '' : PERIOD_KEY_OF[period](dayOf(row));
        let counts = counted.get(key);
        if (counts === undefined) counted.set(key, (counts = Array.from({ length: 5 }, () => [0, 0, 0])));
        const codeCounts = counts[firstCodes[row] as number] as number[];
        codeCounts[0] = (codeCounts[0] as number) + 1;
        if (value === NULL_HUNDREDTHS) continue;
        codeCounts[1] = (codeCounts[1] as number) + 1;
        if (value <= 1_400) codeCounts[2] = (codeCounts[2] as number) + 1;
        let byCode = stored.get(key);
        if (byCode === undefined) stored.set(key, (byCode = [[], [], [], [], []]));
        byCode[firstCodes[row] as number]?.push(value);
      }
      for (const [order, byteCounted] of (['opened', 'median_days_to_close', 'p90_days_to_close'] as const).flatMap((order) => [RECORDED, COUNTED_BY_VALUE].map((way) => [order, way] as const))) {
        const limit = random.int(1, 3);
        const query: GroupScan = { by: [column], period, order, descending: random.chance(0.5), limit, ranks: [Uint32Array.of(0, 1, 2, 3, 4)] };
        const packed = scanGroups(inOrder, { columns: 1, filters: [], from: null, to: null }, query, undefined, undefined, byteCounted);
        const periods = packed.periods.split('\n');
        const keptCodes = new Set(packed.codes);
        const leftOut = (key: string): number[] => (stored.get(key) ?? []).flatMap((values, code) => (keptCodes.has(code) ? [] : values));
        const middles = (values: number[] | undefined): number[] => {
          const sorted = Int32Array.from(values ?? []).sort();
          const n = sorted.length;
          return n === 0 ? [Number.NaN, Number.NaN, Number.NaN] : ([sorted[n % 2 === 1 ? n >> 1 : (n >> 1) - 1], sorted[n >> 1], sorted[Math.floor((9 * n + 9) / 10) - 1]] as number[]);
        };
        const rowsOf = (numbers: Float64Array): number[][] => Array.from({ length: numbers.length / PACKED_FIELDS }, (_, r) => [...numbers.subarray(r * PACKED_FIELDS, (r + 1) * PACKED_FIELDS)]);
        rowsOf(packed.numbers).forEach((numbers, r) => {
          const key = period === null ? '' : (periods[numbers[0] as number] as string);
          expect(numbers.slice(1, 4), `counts ${packed.codes[r]} ${key}`).toEqual(counted.get(key)?.[packed.codes[r] as number]);
          expect(numbers.slice(4), `${packed.codes[r]} ${key}`).toEqual(middles(stored.get(key)?.[packed.codes[r] as number]));
        });
        expect(new Set(packed.codes).size).toBe(limit);
        const others = rowsOf(packed.others);
        expect(others.length).toBeGreaterThan(0);
        for (const numbers of others) {
          const key = period === null ? '' : (periods[numbers[0] as number] as string);
          const leftOutCounts = (counted.get(key) ?? []).filter((_, code) => !keptCodes.has(code)).reduce((sum, counts) => sum.map((n, f) => n + (counts[f] as number)), [0, 0, 0]);
          expect(numbers.slice(1, 4), `others' counts ${key}`).toEqual(leftOutCounts);
          expect(numbers.slice(4), `others ${key}`).toEqual(middles(leftOut(key)));
        }
      }
    }
  });
});
