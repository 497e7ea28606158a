/**
 * The scans of a walk worker over the row columns of a snapshot (the snapshot's row-columns.ts;
 * loaded by row-columns-memory.ts into a file of their own, or into shared memory where no file can
 * be written): count, facet counts and the buckets of the statistics of the rows that match equality
 * filters (as codes) and a created_at range. The rows are sorted by created_at, so the range is a row
 * interval found by binary search; the filters are checked a block of rows at a time, the first one
 * on every row of the block and each next one on the rows still selected. In a file, a block of each
 * column a scan reads is read into an array the thread reuses: the columns stay in the system's file
 * cache, outside the process's memory, whatever the rows.
 */
import { readSync } from 'node:fs';
import { boxCellIndex, CLOSED_WITHIN_DAYS, CODED_COLUMNS, DAY_SECONDS, NOT_CLOSED_SECONDS, type CodedColumn, type SummaryUnit } from '../../../snapshot/index.js';
import { greatCircleMeters } from '../great-circle.js';
import { BUCKET_KEY_OF, packBuckets, type PackedBuckets } from './period-stats.js';
import { grownValues, rangeMiddlesAndP90, scanValues } from './value-ranks.js';
import type { BucketSummary } from '../store/service-request-store.js';
import type { GroupScan } from './group-query.js';

export type CodeArray = Uint8Array | Uint16Array;

/** The days a created_at column covers: every day from 1970-01-01 that a wall second of 32 bits reaches. */
export const CREATED_DAYS = 49_711;
/** The seconds of a day that a row's two bytes hold as they are; a later second holds 65,536 less. */
const LATE_SECOND = 65_536;

/**
 * A column of one or two bytes a row (codes, or two bytes of a time), four (closed_at's wall seconds) or
 * eight (a degree of the location), stored from `offset` (a multiple of 8) of the row columns' bytes.
 */
export interface StoredArray {
  offset: number;
  bytesPerRow: 1 | 2 | 4 | 8;
}

/**
 * created_at of the rows (sorted), in two bytes a row: the row's second of its day, less 65,536 from
 * 18:12:16 on, and two short arrays per day that say where each day and its late part start. The
 * stored wall seconds took four bytes a row.
 */
export interface CreatedColumn {
  /** Each row's second of its day, modulo 65,536. */
  secondsLow: StoredArray;
  /** dayStarts[d]: the first row of day d (days since 1970-01-01) or of a later day; dayStarts[CREATED_DAYS]: the rows. */
  dayStarts: Int32Array;
  /** lateStarts[d]: the first row of day d from 18:12:16 on, or the first row of a later day. */
  lateStarts: Int32Array;
}

/** days_to_close hundredths of a row that is not closed. */
export const NOT_CLOSED = 65_535;
/** Hundredths of a row that two bytes do not hold: its value is in DaysToCloseColumn's `outside` arrays. */
export const OUTSIDE = 65_534;
/** The most hundredths of a request closed within 14 days (days_to_close <= 14). */
export const WITHIN_HUNDREDTHS = CLOSED_WITHIN_DAYS * 100;

/**
 * days_to_close of the rows in hundredths, two bytes a row (0 to 655.33 days, nearly every request);
 * the few others (OUTSIDE) listed apart, in row order.
 */
export interface DaysToCloseColumn {
  hundredths: StoredArray;
  outsideRows: Int32Array;
  outsideHundredths: Int32Array;
}

/**
 * Where the columns' bytes are: a file opened by the main thread (`fd`, read with positioned reads by
 * any thread; the file has no name left, so it goes when the descriptor is closed), or shared memory.
 */
export type RowColumnBytes = { fd: number } | { memory: SharedArrayBuffer };

/**
 * The row columns as the workers are sent them, once: their bytes and the short arrays per day and of
 * outside values. `closed`: each row's closed_at in wall seconds (four bytes, NOT_CLOSED_SECONDS without
 * one); `latitude` and `longitude`: the stored degrees (eight bytes each, NaN without a location).
 */
export interface SharedRowColumns {
  bytes: RowColumnBytes;
  codes: Record<CodedColumn, StoredArray>;
  created: CreatedColumn;
  daysToClose: DaysToCloseColumn;
  closed: StoredArray;
  latitude: StoredArray;
  longitude: StoredArray;
  /** The rows closed long after they were created (late-closings.ts); absent or null: a closed_at range reads its whole created_at range. */
  lateClosings?: LateClosings | null;
}

/**
 * The rows closed at least `days` days (of wall time) after they were created, by closed_at day:
 * every other row was closed sooner, so a closed_at range from `from` selects, besides the listed rows
 * it holds, only rows created after `from` less `days` days; and, as no row was closed more than
 * `earliestClose` seconds before it was created, none created at or after its end plus those seconds.
 * The scans of a closed_at range read only those rows (scannedIntervals).
 */
export interface LateClosings {
  days: number;
  /** The smallest closed_at less created_at of any closed row, in seconds (0 or more but for a clock change). */
  earliestClose: number;
  /** The listed rows' closed_at wall seconds, by closed_at day, then by row. */
  seconds: Uint32Array;
  /** Their rows, in the same order. */
  rows: Int32Array;
}

/** A box of the location, inclusive (the filters' `bbox`): a row without a location is outside. */
export interface ScanBox {
  minLongitude: number;
  minLatitude: number;
  maxLongitude: number;
  maxLatitude: number;
}

/** What a plan expects of its scan (expected-work.ts), for the walk pool's order of jobs. */
export interface ScanExpectation {
  /** The rows of the created_at range: each is checked by the filters. */
  rangeRows: number;
  /** The rows guessed to match every filter: each is counted, bucketed or grouped. */
  matchedRows: number;
  /** The days the range spans (the periods of a grouping). */
  rangeDays: number;
}

/**
 * A scan as a job states it: the shared row columns by the number they were sent with (a message
 * that carries shared memory costs milliseconds of the sender's thread, so a job names it instead),
 * the filters as codes.
 */
export interface RowColumnScan {
  columns: number;
  /** Each equality filter: its column and the codes it accepts. */
  filters: { column: CodedColumn; accepted: number[] }[];
  /** created_at bounds in wall seconds: from inclusive, to exclusive; null when open. */
  from: number | null;
  to: number | null;
  /** The map box the location lies in, when set. */
  box?: ScanBox;
  /** `q`: a row matches when any of these columns holds one of their codes (none: no row). */
  anyOf?: { column: CodedColumn; accepted: number[] }[];
  /** true: closed_at is set; false: it is not. */
  closed?: boolean;
  /** closed_at bounds in wall seconds: from inclusive, to exclusive; a row without closed_at never matches. */
  closedFrom?: number;
  closedTo?: number;
  /** days_to_close bounds in days, inclusive; a row not closed never matches. */
  daysMin?: number;
  daysMax?: number;
  /** `near`: the centre, the radius in metres, and a box that holds the circle (a cheaper test first). */
  near?: { latitude: number; longitude: number; radiusM: number; box: ScanBox };
  /** The facet's column (facets only). */
  facet?: CodedColumn;
  /** Grid cells across a cell of the counts per map cell (those only; map-cells.ts). */
  cells?: number;
  /** A page's seconds (those only, scanPageSeconds): its cursor's created_at wall second (null: a first page) and the rows it reads. */
  page?: { after: number | null; fetch: number };
  /** The grouping (groups only: group-scan.ts). */
  groups?: GroupScan;
  /** What the plan expects the scan to read and match (expected-work.ts): the walk pool runs the cheapest waiting scan first. */
  expected?: ScanExpectation;
}

/** Rows checked per block: the selected rows of a block are one reused array. */
const BLOCK = 65_536;
/** The rows of a page scan's first block (forEachMatchingRow, `reach`): a page of rows that many match finds them in it. */
const PAGE_FIRST_BLOCK = 1_024;

/**
 * The arrays a scan reads a file's blocks into, one per use (each filter, the facet, days_to_close),
 * kept for the next scan of the thread (a scan runs to its end before another starts).
 */
const blockArrays: ArrayBuffer[] = [];
export const FACET_USE = 64;
export const DAYS_TO_CLOSE_USE = 65;
const LATITUDE_USE = 66;
const LONGITUDE_USE = 67;
export const CLOSED_USE = 68;
/** The columns of `q` (anyOf), from this use on. */
const ANY_OF_USE = 69;
/** The arrays of the columns a grouping reads (group-scan.ts), after those of `q`. */
export const GROUP_USES = [ANY_OF_USE + CODED_COLUMNS.length, ANY_OF_USE + CODED_COLUMNS.length + 1] as const;

/** Rows [from, to) of a stored column of codes (or two bytes of a time): a view of shared memory, or read from the file into the array of `use`. */
export function readRows(bytes: RowColumnBytes, array: StoredArray, from: number, to: number, use: number): CodeArray {
  const [buffer, byteOffset] = readBytes(bytes, array, from, to, use);
  return array.bytesPerRow === 1 ? new Uint8Array(buffer, byteOffset, to - from) : new Uint16Array(buffer, byteOffset, to - from);
}

/** Rows [from, to) of closed_at's wall seconds, as readRows reads them. */
export function readSeconds(bytes: RowColumnBytes, array: StoredArray, from: number, to: number, use: number): Uint32Array {
  const [buffer, byteOffset] = readBytes(bytes, array, from, to, use);
  return new Uint32Array(buffer, byteOffset, to - from);
}

/** Rows [from, to) of a degree of the location, as readRows reads them. */
export function readDegrees(bytes: RowColumnBytes, array: StoredArray, from: number, to: number, use: number): Float64Array {
  const [buffer, byteOffset] = readBytes(bytes, array, from, to, use);
  return new Float64Array(buffer, byteOffset, to - from);
}

/** The buffer and offset of rows [from, to) of a stored column (a block read from the file lies at 0 of the array of `use`). */
function readBytes(bytes: RowColumnBytes, array: StoredArray, from: number, to: number, use: number): [ArrayBufferLike, number] {
  const length = to - from;
  const start = array.offset + from * array.bytesPerRow;
  let buffer: ArrayBufferLike;
  let byteOffset = 0;
  if ('memory' in bytes) {
    buffer = bytes.memory;
    byteOffset = start;
  } else {
    const byteLength = length * array.bytesPerRow;
    let into = blockArrays[use];
    if (into === undefined || into.byteLength < byteLength) into = blockArrays[use] = new ArrayBuffer(Math.max(byteLength, BLOCK * array.bytesPerRow));
    buffer = into;
    const target = new Uint8Array(into, 0, byteLength);
    for (let read = 0; read < byteLength; ) {
      const n = readSync(bytes.fd, target, read, byteLength - read, start + read);
      if (n === 0) throw new Error('the row columns file ended early');
      read += n;
    }
  }
  return [buffer, byteOffset];
}

/** The first row in [low, high) whose two bytes are at least `value` (they rise over that range), or high. */
function firstAtLeast(bytes: RowColumnBytes, values: StoredArray, value: number, low: number, high: number): number {
  // A range longer than a block is narrowed a row at a time first: what is read stays a block at most.
  while (high - low > BLOCK) {
    const middle = (low + high) >>> 1;
    if ((readRows(bytes, values, middle, middle + 1, FACET_USE)[0] as number) < value) low = middle + 1;
    else high = middle;
  }
  const base = low;
  const read = readRows(bytes, values, low, high, FACET_USE);
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((read[middle - base] as number) < value) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** The first row whose created_at wall second is at least `seconds`. */
export function firstRowFrom(columns: SharedRowColumns, seconds: number): number {
  const { secondsLow, dayStarts, lateStarts } = columns.created;
  if (!(seconds > 0)) return 0;
  const day = Math.floor(seconds / DAY_SECONDS);
  if (day >= CREATED_DAYS) return dayStarts[CREATED_DAYS] as number;
  const second = Math.ceil(seconds - day * DAY_SECONDS);
  const late = lateStarts[day] as number;
  return second < LATE_SECOND
    ? firstAtLeast(columns.bytes, secondsLow, second, dayStarts[day] as number, late)
    : firstAtLeast(columns.bytes, secondsLow, second - LATE_SECOND, late, dayStarts[day + 1] as number);
}

/** The day (since 1970-01-01) of a row. */
export function dayOfRow(created: CreatedColumn, row: number): number {
  const { dayStarts } = created;
  // The last day whose first row is at most `row`.
  let low = 0;
  let high = CREATED_DAYS - 1;
  while (low < high) {
    const middle = (low + high + 1) >>> 1;
    if ((dayStarts[middle] as number) <= row) low = middle;
    else high = middle - 1;
  }
  return low;
}

/** The days_to_close hundredths of a row stored as OUTSIDE. */
export function outsideHundredthsOf(daysToClose: DaysToCloseColumn, row: number): number {
  const { outsideRows, outsideHundredths } = daysToClose;
  let low = 0;
  let high = outsideRows.length - 1;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((outsideRows[middle] as number) < row) low = middle + 1;
    else high = middle;
  }
  return outsideHundredths[low] as number;
}

/** The rows of the created_at range: [start, end). */
export function rowRange(columns: SharedRowColumns, scan: RowColumnScan): [number, number] {
  const start = scan.from === null ? 0 : firstRowFrom(columns, scan.from);
  const end = scan.to === null ? (columns.created.dayStarts[CREATED_DAYS] as number) : firstRowFrom(columns, scan.to);
  return [start, Math.max(start, end)];
}

/**
 * What a listed late closing read on its own is worth in rows: a short interval costs a read of each
 * column the scan reads, about the time of checking this many rows of a block.
 */
export const ROWS_PER_INTERVAL = 1_024;

/**
 * The rows a scan reads, as intervals [from, to) in row order (a flat list of pairs): its created_at
 * range, narrowed by a closed_at range when the row columns list their late closings. The range then
 * ends before the rows created too late to be closed before closedTo, and starts at the rows created
 * late enough to be closed from closedFrom without being listed; the listed rows before that start
 * whose closed_at lies in the range are read on their own (those within ROWS_PER_INTERVAL rows of each
 * other as one interval), unless they are so many that reading every row before the start costs less.
 */
export function scannedIntervals(columns: SharedRowColumns, scan: RowColumnScan): number[] {
  const [start, end] = rowRange(columns, scan);
  const late = columns.lateClosings;
  const { closedFrom, closedTo } = scan;
  if (late == null || start >= end || (closedFrom === undefined && closedTo === undefined)) return [start, end];
  const to = closedTo === undefined ? end : Math.max(start, Math.min(end, firstRowFrom(columns, closedTo - late.earliestClose)));
  if (closedFrom === undefined) return [start, to];
  const from = Math.max(start, firstRowFrom(columns, closedFrom - late.days * DAY_SECONDS));
  // The listed rows that may lie before `from`: those closed on the days of the closed_at range.
  const lowEnd = Math.min(from, to);
  const { seconds, rows } = late;
  const first = firstListedOnDay(seconds, Math.floor(closedFrom / DAY_SECONDS));
  const last = closedTo === undefined ? seconds.length : firstListedOnDay(seconds, Math.floor((Math.ceil(closedTo) - 1) / DAY_SECONDS) + 1);
  if ((last - first) * ROWS_PER_INTERVAL >= lowEnd - start) return [start, to];
  const listed: number[] = [];
  for (let i = first; i < last; i++) {
    const row = rows[i] as number;
    const second = seconds[i] as number;
    if (row >= start && row < lowEnd && second >= closedFrom && (closedTo === undefined || second < closedTo)) listed.push(row);
  }
  listed.sort((a, b) => a - b);
  const intervals: number[] = [];
  for (const row of listed) {
    if (intervals.length > 0 && row - (intervals[intervals.length - 1] as number) < ROWS_PER_INTERVAL) intervals[intervals.length - 1] = row + 1;
    else intervals.push(row, row + 1);
  }
  if (from < to) intervals.push(from, to);
  return intervals;
}

/** The first listed late closing of day `day` (days since 1970-01-01) or later: the list is by closed_at day. */
function firstListedOnDay(seconds: Uint32Array, day: number): number {
  let low = 0;
  let high = seconds.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (Math.floor((seconds[middle] as number) / DAY_SECONDS) < day) low = middle + 1;
    else high = middle;
  }
  return low;
}

/**
 * The arrays a scan works in, kept for the next scan of the thread (a scan runs to its end before
 * another starts): a scan allocates nothing that grows with the rows, and leaves no garbage of
 * hundreds of kilobytes that the thread would hold until its next collection.
 */
const scratch = {
  selected: new Int32Array(BLOCK),
  /** Whether each selected row of a block passes a check (keepPassing). */
  passes: new Uint8Array(BLOCK),
  /** One mask per equality filter (1 for each accepted code), all zeros between scans. */
  masks: [] as Uint8Array[],
  /** One mask per column of `q`, all zeros between scans. */
  anyOfMasks: [] as Uint8Array[],
  /** Rows per code of a facet, all zeros between scans. */
  counts: new Float64Array(65_536),
};

/**
 * A check of the rows that the codes selected in a block [blockStart, blockEnd): keeps those that
 * pass at the front of `selected` and says how many.
 */
type RowCheck = (selected: Int32Array, count: number, blockStart: number, blockEnd: number) => number;

/**
 * Keeps the selected rows of a block whose place in `passes` holds 1 (0: dropped), without a branch:
 * each check of rowChecksOf first sets the places of its rows, in a loop of its own with no call and,
 * where it can, no branch (whether a row passes follows no pattern a processor could predict).
 */
function keepPassing(selected: Int32Array, count: number, passes: Uint8Array): number {
  let kept = 0;
  for (let s = 0; s < count; s++) {
    selected[kept] = selected[s] as number;
    kept += passes[s] as number;
  }
  return kept;
}

/** Whether a location lies in a box, edges included (NaN, no location, fails every comparison). */
const inBox = (box: ScanBox, latitude: number, longitude: number): boolean =>
  longitude >= box.minLongitude && longitude <= box.maxLongitude && latitude >= box.minLatitude && latitude <= box.maxLatitude;

/**
 * The checks of a scan besides the codes and the created_at range: one per filter set, each reading
 * its own columns. `anyOf` uses the masks of scratch.anyOfMasks, set by the caller.
 */
function rowChecksOf(columns: SharedRowColumns, scan: RowColumnScan, anyOfMasks: Uint8Array[]): RowCheck[] {
  const checks: RowCheck[] = [];
  const { bytes } = columns;
  const passes = scratch.passes;
  const { anyOf } = scan;
  if (anyOf !== undefined) {
    checks.push((selected, count, blockStart, blockEnd) => {
      passes.fill(0, 0, count);
      anyOf.forEach(({ column }, a) => {
        const codes = readRows(bytes, columns.codes[column], blockStart, blockEnd, ANY_OF_USE + a);
        const mask = anyOfMasks[a] as Uint8Array;
        for (let s = 0; s < count; s++) passes[s] = (passes[s] as number) | (mask[codes[(selected[s] as number) - blockStart] as number] as number);
      });
      return keepPassing(selected, count, passes);
    });
  }
  const { closed, closedFrom, closedTo } = scan;
  if (closed !== undefined || closedFrom !== undefined || closedTo !== undefined) {
    const from = closedFrom ?? Number.NEGATIVE_INFINITY;
    const to = closedTo ?? Number.POSITIVE_INFINITY;
    // 1 where any row passes the part of the check: closed or not when `closed` is not set, any closed_at when not ranged.
    const eitherClosed = closed === undefined ? 1 : 0;
    const wanted = closed === true ? 1 : 0;
    const notRanged = closedFrom === undefined && closedTo === undefined ? 1 : 0;
    checks.push((selected, count, blockStart, blockEnd) => {
      const seconds = readSeconds(bytes, columns.closed, blockStart, blockEnd, CLOSED_USE);
      for (let s = 0; s < count; s++) {
        const second = seconds[(selected[s] as number) - blockStart] as number;
        const isClosed = +(second !== NOT_CLOSED_SECONDS);
        passes[s] = (eitherClosed | +(isClosed === wanted)) & (notRanged | (isClosed & +(second >= from) & +(second < to)));
      }
      return keepPassing(selected, count, passes);
    });
  }
  const { daysMin, daysMax } = scan;
  if (daysMin !== undefined || daysMax !== undefined) {
    const min = daysMin ?? Number.NEGATIVE_INFINITY;
    const max = daysMax ?? Number.POSITIVE_INFINITY;
    checks.push((selected, count, blockStart, blockEnd) => {
      const hundredths = readRows(bytes, columns.daysToClose.hundredths, blockStart, blockEnd, DAYS_TO_CLOSE_USE);
      for (let s = 0; s < count; s++) {
        const row = selected[s] as number;
        const stored = hundredths[row - blockStart] as number;
        // hundredths / 100 is the stored number itself (row-columns.ts): compared as SQL compares it.
        const days = (stored === OUTSIDE ? outsideHundredthsOf(columns.daysToClose, row) : stored) / 100;
        passes[s] = +(stored !== NOT_CLOSED) & +(days >= min) & +(days <= max);
      }
      return keepPassing(selected, count, passes);
    });
  }
  const { box, near } = scan;
  if (box !== undefined || near !== undefined) {
    checks.push((selected, count, blockStart, blockEnd) => {
      const latitudes = readDegrees(bytes, columns.latitude, blockStart, blockEnd, LATITUDE_USE);
      const longitudes = readDegrees(bytes, columns.longitude, blockStart, blockEnd, LONGITUDE_USE);
      for (let s = 0; s < count; s++) {
        const i = (selected[s] as number) - blockStart;
        const latitude = latitudes[i] as number;
        const longitude = longitudes[i] as number;
        // The distance is measured only in the box around the circle, a row out of it dropped first.
        const inBoxes = (box === undefined || inBox(box, latitude, longitude)) && (near === undefined || inBox(near.box, latitude, longitude));
        passes[s] = +(inBoxes && (near === undefined || greatCircleMeters(near.latitude, near.longitude, latitude, longitude) <= near.radiusM));
      }
      return keepPassing(selected, count, passes);
    });
  }
  return checks;
}

/**
 * The filter predicate of the row columns: calls `visit` with the rows of each block [blockStart,
 * blockEnd) that match every filter of the scan (the array is reused: read it before returning), in
 * order, until `visit` returns true. Every scan of the row columns selects its rows here.
 * The rows read are those of scannedIntervals. `reach.rowsAtMost`: reads at most that many rows of
 * them (a block shorter than ROWS_PER_INTERVAL counted as that many); `reach.firstBlock`: the rows of the first block, each next block twice as many up to BLOCK
 * once a whole one was read (a scan that `visit` may stop after a few rows selects no more rows than
 * it needs). Returns whether the scan ended (`visit` stopped it, or it read every row of its
 * intervals); false when `rowsAtMost` cut it.
 */
export function forEachMatchingRow(
  columns: SharedRowColumns,
  scan: RowColumnScan,
  visit: (rows: Int32Array, count: number, blockStart: number, blockEnd: number) => unknown,
  reach: { rowsAtMost?: number; firstBlock?: number } = {},
): boolean {
  const intervals = scannedIntervals(columns, scan);
  let rowsLeft = reach.rowsAtMost ?? Number.POSITIVE_INFINITY;
  let block = Math.min(BLOCK, reach.firstBlock ?? BLOCK);
  const maskOf = (masks: Uint8Array[], f: number, accepted: readonly number[]): Uint8Array => {
    const mask = (masks[f] ??= new Uint8Array(65_536));
    for (const code of accepted) mask[code] = 1;
    return mask;
  };
  const masks = scan.filters.map(({ accepted }, f) => maskOf(scratch.masks, f, accepted));
  const anyOfMasks = (scan.anyOf ?? []).map(({ accepted }, a) => maskOf(scratch.anyOfMasks, a, accepted));
  const checks = rowChecksOf(columns, scan, anyOfMasks);
  try {
    const filters = scan.filters.map(({ column }) => columns.codes[column]);
    const selected = scratch.selected;
    for (let at = 0; at < intervals.length; at += 2) {
      const intervalEnd = intervals[at + 1] as number;
      for (let blockStart = intervals[at] as number; blockStart < intervalEnd; ) {
        if (rowsLeft <= 0) return false;
        const blockEnd = Math.min(intervalEnd, blockStart + block, blockStart + rowsLeft);
        // The next block is twice as long once a whole one was read (not after a short interval).
        if (blockEnd - blockStart === block) block = Math.min(BLOCK, block * 2);
        // A short interval's reads cost as much as ROWS_PER_INTERVAL rows: the reach counts it so.
        rowsLeft -= Math.max(blockEnd - blockStart, ROWS_PER_INTERVAL);
        let count = 0;
        if (masks.length === 0) {
          for (let row = blockStart; row < blockEnd; row++) selected[count++] = row;
        } else {
          const codesOf = (f: number): CodeArray => readRows(columns.bytes, filters[f] as StoredArray, blockStart, blockEnd, f);
          count = selectRows(codesOf(0), masks[0] as Uint8Array, blockStart, selected);
          for (let f = 1; f < masks.length && count > 0; f++) count = keepRows(codesOf(f), masks[f] as Uint8Array, blockStart, selected, count);
        }
        for (let c = 0; c < checks.length && count > 0; c++) count = (checks[c] as RowCheck)(selected, count, blockStart, blockEnd);
        if (count > 0 && visit(selected, count, blockStart, blockEnd) === true) return true;
        blockStart = blockEnd;
      }
    }
    return true;
  } finally {
    scan.filters.forEach(({ accepted }, f) => {
      for (const code of accepted) (masks[f] as Uint8Array)[code] = 0;
    });
    scan.anyOf?.forEach(({ accepted }, a) => {
      for (const code of accepted) (anyOfMasks[a] as Uint8Array)[code] = 0;
    });
  }
}

/** Whether a scan selects every row of its created_at range (then a count is the range's length). */
function selectsWholeRange(scan: RowColumnScan): boolean {
  const { filters, box, anyOf, closed, closedFrom, closedTo, daysMin, daysMax, near } = scan;
  return filters.length === 0 && [box, anyOf, closed, closedFrom, closedTo, daysMin, daysMax, near].every((set) => set === undefined);
}

/** The rows of a block whose code (`codes`: the block's, from row `start`) the mask accepts. */
function selectRows(codes: CodeArray, mask: Uint8Array, start: number, selected: Int32Array): number {
  let count = 0;
  // Without a branch (whether a row's code is accepted follows no pattern a processor could predict):
  // every row is written at the next place, which moves on only past an accepted one.
  for (let i = 0; i < codes.length; i++) {
    selected[count] = start + i;
    count += mask[codes[i] as number] as number;
  }
  return count;
}

/** Of the selected rows of a block, those whose code (`codes`: the block's, from row `start`) the mask accepts. */
function keepRows(codes: CodeArray, mask: Uint8Array, start: number, selected: Int32Array, count: number): number {
  let kept = 0;
  // Without a branch, as selectRows.
  for (let i = 0; i < count; i++) {
    const row = selected[i] as number;
    selected[kept] = row;
    kept += mask[codes[row - start] as number] as number;
  }
  return kept;
}

/** The matching rows. */
export function scanCount(columns: SharedRowColumns, scan: RowColumnScan): number {
  if (selectsWholeRange(scan)) {
    const [start, end] = rowRange(columns, scan);
    return end - start;
  }
  let total = 0;
  forEachMatchingRow(columns, scan, (_, count) => {
    total += count;
  });
  return total;
}

/** What a page's scan found: the seconds its walk reads, and its matching rows at them. */
export interface ScannedPageSeconds {
  /** The created_at wall seconds, rising, each once. */
  seconds: number[];
  /** The matching rows seen at those seconds, rising (every matching row of each second but perhaps the last). */
  rows: number[];
}

/**
 * The created_at wall seconds of the rows a page reads (the store's walk of its rows reads only the rows
 * of those seconds): those of its matching rows at its cursor's second, and of its first `fetch` matching
 * rows after that second, rising, each once; empty when none matches. The rows at the cursor's second
 * are not counted: its id may leave out any of them, so the walk may need the `fetch`-th after them.
 */
export function scanPageSeconds(columns: SharedRowColumns, scan: RowColumnScan): ScannedPageSeconds {
  return scanPageSecondsWithin(columns, scan, Number.POSITIVE_INFINITY) as ScannedPageSeconds;
}

/** scanPageSeconds reading at most `rowsAtMost` rows of the scan's range: null when they did not end it. */
export function scanPageSecondsWithin(columns: SharedRowColumns, scan: RowColumnScan, rowsAtMost: number): ScannedPageSeconds | null {
  if (scan.page === undefined) throw new Error('a page seconds scan needs its page');
  const { after, fetch } = scan.page;
  // The first row after the cursor's second: those before it are at that second or earlier.
  const afterStart = after === null ? 0 : firstRowFrom(columns, after + 1);
  const seconds: number[] = [];
  const matching: number[] = [];
  let counted = 0;
  const from = after === null ? scan.from : Math.max(scan.from ?? after, after);
  const { created } = columns;
  const ended = forEachMatchingRow(
    columns,
    { ...scan, from },
    (rows, count, blockStart, blockEnd) => {
      // The block's seconds of their days, read once (a page scan reads no facet).
      const secondsLow = readRows(columns.bytes, created.secondsLow, blockStart, blockEnd, FACET_USE);
      for (let i = 0; i < count; i++) {
        const row = rows[i] as number;
        const day = dayOfRow(created, row);
        const second = day * DAY_SECONDS + (secondsLow[row - blockStart] as number) + (row >= (created.lateStarts[day] as number) ? LATE_SECOND : 0);
        if (seconds.at(-1) !== second) seconds.push(second);
        matching.push(row);
        if (row < afterStart) continue;
        counted += 1;
        if (counted === fetch) return true;
      }
      return false;
    },
    { rowsAtMost, firstBlock: PAGE_FIRST_BLOCK },
  );
  return ended ? { seconds, rows: matching } : null;
}

/** [code, rows] of each code of the facet's column that matching rows hold. */
export function scanFacet(columns: SharedRowColumns, scan: RowColumnScan): [number, number][] {
  if (scan.facet === undefined) throw new Error('a facet scan needs its column');
  const facet = columns.codes[scan.facet];
  const counts = scratch.counts;
  let largest = 0;
  try {
    forEachMatchingRow(columns, scan, (rows, count, blockStart, blockEnd) => {
      const codes = readRows(columns.bytes, facet, blockStart, blockEnd, FACET_USE);
      for (let i = 0; i < count; i++) {
        const code = codes[(rows[i] as number) - blockStart] as number;
        counts[code] = (counts[code] as number) + 1;
        if (code > largest) largest = code;
      }
    });
    const found: [number, number][] = [];
    for (let code = 0; code <= largest; code++) {
      const rows = counts[code] as number;
      if (rows > 0) found.push([code, rows]);
    }
    return found;
  } finally {
    counts.fill(0, 0, largest + 1);
  }
}

/**
 * [cell, rows] of each map cell of `scan.cells` grid cells across that matching rows lie in (a scan of
 * the counts per cell has a box: the cells are as many as the box spans, a bounded number), by cell
 * number; the cell of a row is computed from its stored degrees as the snapshot's map_cell column is.
 */
export function scanCells(columns: SharedRowColumns, scan: RowColumnScan): [number, number][] {
  const multiple = scan.cells;
  if (multiple === undefined || scan.box === undefined) throw new Error('a scan of the cells needs their size and a box');
  // One counter per cell the box spans (a bounded number: the route's cap), in cell order.
  const index = boxCellIndex(scan.box, multiple);
  const counts = new Float64Array(index.cells);
  // The box is tested here, on the degrees read for the cells, rather than read again by the filters'
  // checks (unless `near` reads them there anyway).
  const box = scan.near === undefined ? scan.box : null;
  forEachMatchingRow(columns, box === null ? scan : { ...scan, box: undefined }, (rows, count, blockStart, blockEnd) => {
    const latitudes = readDegrees(columns.bytes, columns.latitude, blockStart, blockEnd, LATITUDE_USE);
    const longitudes = readDegrees(columns.bytes, columns.longitude, blockStart, blockEnd, LONGITUDE_USE);
    for (let i = 0; i < count; i++) {
      const row = (rows[i] as number) - blockStart;
      const latitude = latitudes[row] as number;
      const longitude = longitudes[row] as number;
      if (box !== null && !inBox(box, latitude, longitude)) continue;
      const at = index.indexOf(latitude, longitude);
      counts[at] = (counts[at] as number) + 1;
    }
  });
  const found: [number, number][] = [];
  for (let at = 0; at < counts.length; at++) if ((counts[at] as number) > 0) found.push([index.cellOf(at), counts[at] as number]);
  return found;
}

/** A bucket of scanBuckets as its rows pass: its key, counts and days_to_close as stored (two bytes; OUTSIDE for those listed in `outside`). */
interface OpenBucket {
  key: string | null;
  opened: number;
  closedWithin: number;
  closed: number;
  values: Uint16Array;
  outside: number[];
  /** The first row of the next day (the bucket may change there). */
  nextDayStart: number;
}

/**
 * The rows of a block into the open bucket (`bucket`, written back at the block's end: a callback's
 * variables of an enclosing function would be read and written in memory at every row); `dayOf` starts
 * the bucket of a row at or after nextDayStart (closing the one before when its key changes).
 */
function bucketRows(bucket: OpenBucket, rows: Int32Array, count: number, blockStart: number, hundredths: CodeArray, daysToClose: DaysToCloseColumn, dayOf: (row: number) => void): void {
  let { opened, closedWithin, closed, values, nextDayStart } = bucket;
  for (let i = 0; i < count; i++) {
    const row = rows[i] as number;
    if (row >= nextDayStart) {
      Object.assign(bucket, { opened, closedWithin, closed, values });
      dayOf(row);
      ({ opened, closedWithin, closed, values, nextDayStart } = bucket);
    }
    opened += 1;
    const stored = hundredths[row - blockStart] as number;
    if (closed === values.length) values = grownValues(values, 2 * closed, closed);
    // Without a branch on whether the row is closed (no pattern a processor could predict): a row not
    // closed is written where the next closed one goes. NOT_CLOSED and OUTSIDE stand above 1,400.
    values[closed] = stored;
    closed += (stored - NOT_CLOSED) >>> 31;
    closedWithin += ((WITHIN_HUNDREDTHS - stored) >>> 31) ^ 1;
    if (stored === OUTSIDE) {
      const value = outsideHundredthsOf(daysToClose, row);
      bucket.outside.push(value);
      if (value <= WITHIN_HUNDREDTHS) closedWithin += 1;
    }
  }
  Object.assign(bucket, { opened, closedWithin, closed, values, nextDayStart });
}

/**
 * The numbers of each bucket of `unit` that matching rows fall in, in time order. The rows are sorted
 * by created_at, so a bucket's rows come together: each bucket is summed as its rows pass, its
 * days_to_close laid as stored (two bytes) in the thread's kept array (as large as the largest bucket,
 * not as all the rows), and its two middles selected there (value-ranks.ts): a sort of each bucket's
 * values took two thirds of a scan by week or month.
 */
export function scanBuckets(columns: SharedRowColumns, scan: RowColumnScan, unit: SummaryUnit): PackedBuckets {
  const { created, daysToClose } = columns;
  const keyOf = BUCKET_KEY_OF[unit];
  const buckets: [string, BucketSummary][] = [];
  const bucket: OpenBucket = { key: null, opened: 0, closedWithin: 0, closed: 0, values: scanValues(BLOCK), outside: [], nextDayStart: 0 };
  const middles = new Float64Array(3);
  const closeBucket = (): void => {
    const { key, opened, closedWithin, closed, values, outside } = bucket;
    if (key === null) return;
    const sortedOutside = Int32Array.from(outside).sort();
    rangeMiddlesAndP90(values, 0, closed, sortedOutside, 0, sortedOutside.length, middles, 0);
    const none = closed === 0;
    buckets.push([key, { opened, closedWithin, lowMiddle: none ? null : (middles[0] as number) / 100, highMiddle: none ? null : (middles[1] as number) / 100 }]);
  };
  // The selected rows come in order: the day changes when a row reaches the next day's first row.
  const dayOf = (row: number): void => {
    const day = dayOfRow(created, row);
    bucket.nextDayStart = created.dayStarts[day + 1] as number;
    const dayKey = keyOf(new Date(day * DAY_SECONDS * 1000).toISOString().slice(0, 10));
    if (dayKey !== bucket.key) {
      closeBucket();
      Object.assign(bucket, { key: dayKey, opened: 0, closedWithin: 0, closed: 0 });
      bucket.outside.length = 0;
    }
  };
  forEachMatchingRow(columns, scan, (rows, count, blockStart, blockEnd) => {
    const hundredths = readRows(columns.bytes, daysToClose.hundredths, blockStart, blockEnd, DAYS_TO_CLOSE_USE);
    bucketRows(bucket, rows, count, blockStart, hundredths, daysToClose, dayOf);
  });
  closeBucket();
  return packBuckets(buckets);
}
