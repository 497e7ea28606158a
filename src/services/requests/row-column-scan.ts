/**
 * The scans of a walk worker over the row columns of a SQLite snapshot (the snapshot's
 * row-columns.ts; loaded by sqlite-row-columns.ts into shared memory): count, facet counts and the
 * buckets of the statistics of the rows that match equality filters (as codes) and a created_at
 * range. The rows are sorted by created_at, so the range is a row interval found by binary search;
 * the filters are checked a block of rows at a time, the first one on every row of the block and each
 * next one on the rows still selected.
 */
import { DAY_SECONDS, NULL_HUNDREDTHS, type CodedColumn, type SummaryUnit } from '../../snapshot/index.js';
import { BUCKET_KEY_OF, bucketSummaryOf, packBuckets, type PackedBuckets } from './period-stats.js';
import type { BucketSummary } from './service-request-store.js';

export type CodeArray = Uint8Array | Uint16Array;

/** The arrays of the row columns, in shared memory: sent once to each worker, which keeps them. */
export interface SharedRowColumns {
  codes: Record<CodedColumn, CodeArray>;
  created: Uint32Array;
  daysToClose: Int32Array;
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
  /** The facet's column (facets only). */
  facet?: CodedColumn;
}

/** Rows checked per block: the selected rows of a block are one reused array. */
const BLOCK = 65_536;

/** The first row whose created second is at least `seconds`. */
function firstRowFrom(created: Uint32Array, seconds: number): number {
  let low = 0;
  let high = created.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((created[middle] as number) < seconds) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** The rows of the created_at range: [start, end). */
function rowRange(columns: SharedRowColumns, scan: RowColumnScan): [number, number] {
  const start = scan.from === null ? 0 : firstRowFrom(columns.created, scan.from);
  const end = scan.to === null ? columns.created.length : firstRowFrom(columns.created, scan.to);
  return [start, Math.max(start, end)];
}

/** Calls `visit` with the selected rows of each block (the array is reused: read it before returning). */
function forEachSelected(columns: SharedRowColumns, scan: RowColumnScan, visit: (rows: Int32Array, count: number) => void): void {
  const [start, end] = rowRange(columns, scan);
  const masks = scan.filters.map(({ accepted }) => {
    const mask = new Uint8Array(65_536);
    for (const code of accepted) mask[code] = 1;
    return mask;
  });
  const filters = scan.filters.map(({ column }) => columns.codes[column]);
  const selected = new Int32Array(BLOCK);
  for (let blockStart = start; blockStart < end; blockStart += BLOCK) {
    const blockEnd = Math.min(end, blockStart + BLOCK);
    let count = 0;
    if (masks.length === 0) {
      for (let row = blockStart; row < blockEnd; row++) selected[count++] = row;
    } else {
      count = selectRows(filters[0] as CodeArray, masks[0] as Uint8Array, blockStart, blockEnd, selected);
      for (let f = 1; f < masks.length && count > 0; f++) count = keepRows(filters[f] as CodeArray, masks[f] as Uint8Array, selected, count);
    }
    if (count > 0) visit(selected, count);
  }
}

function selectRows(codes: CodeArray, mask: Uint8Array, start: number, end: number, selected: Int32Array): number {
  let count = 0;
  for (let row = start; row < end; row++) {
    if (mask[codes[row] as number] === 1) selected[count++] = row;
  }
  return count;
}

function keepRows(codes: CodeArray, mask: Uint8Array, selected: Int32Array, count: number): number {
  let kept = 0;
  for (let i = 0; i < count; i++) {
    const row = selected[i] as number;
    if (mask[codes[row] as number] === 1) selected[kept++] = row;
  }
  return kept;
}

/** The matching rows. */
export function scanCount(columns: SharedRowColumns, scan: RowColumnScan): number {
  if (scan.filters.length === 0) {
    const [start, end] = rowRange(columns, scan);
    return end - start;
  }
  let total = 0;
  forEachSelected(columns, scan, (_, count) => {
    total += count;
  });
  return total;
}

/** [code, rows] of each code of the facet's column that matching rows hold. */
export function scanFacet(columns: SharedRowColumns, scan: RowColumnScan): [number, number][] {
  if (scan.facet === undefined) throw new Error('a facet scan needs its column');
  const facet = columns.codes[scan.facet];
  const counts = new Float64Array(65_536);
  forEachSelected(columns, scan, (rows, count) => {
    for (let i = 0; i < count; i++) {
      const code = facet[rows[i] as number] as number;
      counts[code] = (counts[code] as number) + 1;
    }
  });
  const found: [number, number][] = [];
  counts.forEach((rows, code) => {
    if (rows > 0) found.push([code, rows]);
  });
  return found;
}

/**
 * The numbers of each bucket of `unit` that matching rows fall in, in time order. The rows are sorted
 * by created_at, so a bucket's rows come together: each bucket is summed as its rows pass, its
 * days_to_close gathered in one reused array (as large as the largest bucket, not as all the rows).
 */
export function scanBuckets(columns: SharedRowColumns, scan: RowColumnScan, unit: SummaryUnit): PackedBuckets {
  const { created, daysToClose } = columns;
  const keyOf = BUCKET_KEY_OF[unit];
  const buckets: [string, BucketSummary][] = [];
  let key: string | null = null;
  let opened = 0;
  let closed = 0;
  let closeDays = new Float64Array(4_096);
  const closeBucket = (): void => {
    if (key !== null) buckets.push([key, bucketSummaryOf(opened, closeDays.subarray(0, closed))]);
  };
  let day = -1;
  forEachSelected(columns, scan, (rows, count) => {
    for (let i = 0; i < count; i++) {
      const row = rows[i] as number;
      const rowDay = Math.floor((created[row] as number) / DAY_SECONDS);
      if (rowDay !== day) {
        day = rowDay;
        const dayKey = keyOf(new Date(day * DAY_SECONDS * 1000).toISOString().slice(0, 10));
        if (dayKey !== key) {
          closeBucket();
          key = dayKey;
          opened = 0;
          closed = 0;
        }
      }
      opened += 1;
      const hundredths = daysToClose[row] as number;
      if (hundredths !== NULL_HUNDREDTHS) {
        if (closed === closeDays.length) {
          const larger = new Float64Array(closeDays.length * 2);
          larger.set(closeDays);
          closeDays = larger;
        }
        closeDays[closed++] = hundredths / 100;
      }
    }
  });
  closeBucket();
  return packBuckets(buckets);
}
