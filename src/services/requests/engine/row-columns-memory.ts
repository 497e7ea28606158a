/**
 * The row columns of the snapshot served (the snapshot's row-columns.ts), laid out once per snapshot
 * from the list of its stored chunks, then filled a chunk at a time by the loader of the backend
 * (sqlite-row-columns.ts, postgres-row-columns.ts), which lets the event loop turn between a few
 * milliseconds of copying. The walk workers are sent them once (RowWalkPool.shareRowColumns) and scan
 * them for the count, facets and statistics of any combination of equality filters and a created_at
 * range (row-column-scan.ts).
 *
 * Their bytes go to a file of their own in the system's temporary directory (TMPDIR), whose name is
 * removed at once: the columns stay in the system's file cache, which the kernel shares and can
 * reclaim, and the process's memory does not grow with the rows. Where no file can be written (a
 * read-only root without a temporary file system), they are held in shared memory instead.
 */
import { closeSync, ftruncateSync, openSync, unlinkSync, writeSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  boundSeconds,
  CLOSED_SECONDS,
  CODED_COLUMNS,
  CREATED_SECONDS,
  DAY_SECONDS,
  DAYS_TO_CLOSE_HUNDREDTHS,
  LATITUDE_DEGREES,
  LONGITUDE_DEGREES,
  NULL_HUNDREDTHS,
  ROW_COLUMN_CHUNK,
  type CodedColumn,
} from '../../../snapshot/index.js';
import { EQUALITY_FILTERS, SEARCHED_COLUMNS, compareFilterValues, negationOf, type FilterValue, type ListFilters } from '../list-filters.js';
import { boxAround } from '../great-circle.js';
import { CREATED_DAYS, NOT_CLOSED, OUTSIDE, type RowColumnBytes, type RowColumnScan, type SharedRowColumns, type StoredArray } from './row-column-scan.js';
import type { ValueCount } from '../store/service-request-store.js';
import { withinDeadline } from '../../../platform/deadline.js';
import { expectedScanRows } from './expected-work.js';

export interface RowColumns extends SharedRowColumns {
  rows: number;
  /** Each coded column's values by code (code 0: null). */
  values: Record<CodedColumn, FilterValue[]>;
  codeOf: Record<CodedColumn, Map<FilterValue, number>>;
  /**
   * Each coded column's rows per code among every CODE_SAMPLE_STRIDE-th row: the share of the rows
   * a filter's codes hold, guessed before a scan (expectedScanRows).
   */
  sampledCodeRows: Record<CodedColumn, Float64Array>;
}

/** Every how many rows the load counts a coded column's codes (RowColumns.sampledCodeRows). */
const CODE_SAMPLE_STRIDE = 8;

/** The row columns' bytes: the file's descriptor is closed, or the memory dropped, once no thread reads them. */
export function releaseRowColumns(bytes: RowColumnBytes): void {
  if ('fd' in bytes) {
    try {
      closeSync(bytes.fd);
    } catch {
      // Already closed.
    }
  }
}

/**
 * Bytes of `size` for the row columns: a file without a name in `directory`, or shared memory when
 * none can be written there.
 */
function rowColumnBytes(size: number, directory: string): RowColumnBytes {
  const path = join(directory, `row-columns-${process.pid}-${randomUUID()}`);
  let fd: number;
  try {
    fd = openSync(path, 'wx+', 0o600);
  } catch {
    return { memory: new SharedArrayBuffer(Math.max(1, size)) };
  }
  try {
    unlinkSync(path);
    ftruncateSync(fd, size);
    return { fd };
  } catch {
    closeSync(fd);
    try {
      unlinkSync(path);
    } catch {
      // Already removed.
    }
    return { memory: new SharedArrayBuffer(Math.max(1, size)) };
  }
}

/** Writes `data` at `position` of the row columns' bytes. */
function writeBytes(bytes: RowColumnBytes, data: Uint8Array, position: number): void {
  if ('memory' in bytes) {
    new Uint8Array(bytes.memory, position, data.length).set(data);
    return;
  }
  for (let written = 0; written < data.length; ) written += writeSync(bytes.fd, data, written, data.length - written, position + written);
}

/** A stored chunk as its table lists it. */
export interface StoredChunk {
  column_name: string;
  chunk: number;
  row_count: number;
  bytes_per_row: number;
}

/** Where a chunk's bytes are written. */
export interface ChunkPlace {
  into: Buffer;
  done(): void;
}

/** A code of a coded column and its value, as the values table lists them. */
export interface StoredValue {
  column_name: string;
  code: number;
  value: FilterValue;
}

/**
 * The longest a count, facet or statistic waits for the row columns being loaded, ms: past it, it is
 * answered without them (SQL, or a walk of the rows), so that a load that a database keeps waiting
 * never holds a request.
 */
export const ROW_COLUMNS_WAIT_MS = 3_000;

/** Resolves when `load` has ended, or `ms` from now, whichever comes first; never rejects. */
export function rowColumnsLoaded(load: Promise<void>, ms = ROW_COLUMNS_WAIT_MS): Promise<void> {
  return withinDeadline(load, ms, () => new Error('the row columns are still loading')).catch(() => undefined);
}

/** Copying between two turns of the event loop, ms. */
export const COPY_SLICE_MS = 4;

/** The stored arrays: the coded columns, then created_at, days_to_close, closed_at, latitude and longitude. */
const STORED = [...CODED_COLUMNS, CREATED_SECONDS, DAYS_TO_CLOSE_HUNDREDTHS, CLOSED_SECONDS, LATITUDE_DEGREES, LONGITUDE_DEGREES];

/** The stored bytes of a row's created_at, of its days_to_close and of its closed_at (4 each). */
const STORED_TIME_BYTES = 4;
/** The stored bytes of a degree of a row's location, kept as they are. */
const DEGREE_BYTES = 8;
/** The columns kept as they are stored, and their bytes a row. */
const KEPT_AS_STORED: ReadonlyMap<string, number> = new Map([
  [CLOSED_SECONDS, STORED_TIME_BYTES],
  [LATITUDE_DEGREES, DEGREE_BYTES],
  [LONGITUDE_DEGREES, DEGREE_BYTES],
]);

/**
 * The memory that row columns of `rows` rows take: each row's codes (`codeBytesPerRow`, 1 or 2 a coded
 * column), two bytes of created_at and two of days_to_close, four of closed_at and sixteen of the
 * location; and created_at's two arrays per day (0.4 MB). The few days_to_close that two bytes do not
 * hold are listed apart (8 bytes each, not counted).
 */
export function rowColumnsMemoryBytes(rows: number, codeBytesPerRow: number): number {
  return rows * (codeBytesPerRow + 4 + STORED_TIME_BYTES + 2 * DEGREE_BYTES) + (2 * CREATED_DAYS + 1) * 4;
}

/** Whether the loader reads the chunks of this stored column (a column the service does not know is left). */
export const isStoredColumn = (name: string): boolean => STORED.includes(name);

/**
 * Row columns being filled: `begin` checks the lists of values and chunks against the format and
 * the memory allowed, and allocates the arrays (null when they do not match it or would take more
 * than `maxBytes`); `copy` fills one chunk, or `placeOf` says
 * where its bytes go (null, or false, when they do not match its listing).
 */
export class RowColumnsAssembly {
  /** The stored chunks by column and number. */
  private readonly listed: Map<string, StoredChunk>;
  /** The rows whose days_to_close two bytes do not hold, and their hundredths (in the order their chunks came). */
  private readonly outside: [row: number, hundredths: number][] = [];
  /** A stored chunk, before it is written (or narrowed): one for every chunk (a chunk is done before the next is placed). */
  private readonly wideChunk = new ArrayBuffer(ROW_COLUMN_CHUNK * DEGREE_BYTES);
  /** A chunk of two bytes a row, narrowed or widened, before it is written. */
  private readonly narrowChunk = new Uint16Array(ROW_COLUMN_CHUNK);

  private constructor(
    private readonly columns: RowColumns,
    storedChunks: readonly StoredChunk[],
  ) {
    this.listed = new Map(storedChunks.map((chunk) => [`${chunk.column_name}\n${chunk.chunk}`, chunk]));
  }

  static begin(storedValues: Iterable<StoredValue>, storedChunks: readonly StoredChunk[], maxBytes = Number.POSITIVE_INFINITY, directory = tmpdir()): RowColumnsAssembly | null {
    const values = Object.fromEntries(CODED_COLUMNS.map((column) => [column, [null]])) as unknown as Record<CodedColumn, FilterValue[]>;
    const valuesOf = new Map<string, FilterValue[]>(Object.entries(values));
    for (const { column_name, code, value } of storedValues) {
      const known = valuesOf.get(column_name);
      // Codes are 1, 2, 3... of a column the service knows, in order.
      if (known === undefined || known.length !== code) return null;
      known.push(value);
    }
    const rowsOf = new Map<string, number>();
    for (const chunk of storedChunks) {
      const before = rowsOf.get(chunk.column_name) ?? 0;
      // In order, and every chunk but the last one is full.
      if (before !== chunk.chunk * ROW_COLUMN_CHUNK || chunk.row_count > ROW_COLUMN_CHUNK) return null;
      rowsOf.set(chunk.column_name, before + chunk.row_count);
    }
    const rows = rowsOf.get(CREATED_SECONDS) ?? 0;
    if (STORED.some((name) => (rowsOf.get(name) ?? 0) !== rows)) return null;
    const codeBytes = CODED_COLUMNS.reduce((bytes, column) => bytes + (values[column].length <= 256 ? 1 : 2), 0);
    if (rowColumnsMemoryBytes(rows, codeBytes) > maxBytes) return null;

    // Each column from a multiple of 8 bytes, in the order of STORED.
    let size = 0;
    const place = (bytesPerRow: StoredArray['bytesPerRow']): StoredArray => {
      const array = { offset: size, bytesPerRow };
      size += Math.ceil((rows * bytesPerRow) / 8) * 8;
      return array;
    };
    const codes = Object.fromEntries(CODED_COLUMNS.map((column) => [column, place(values[column].length <= 256 ? 1 : 2)])) as Record<CodedColumn, StoredArray>;
    const secondsLow = place(2);
    const hundredths = place(2);
    const closed = place(4);
    const latitude = place(8);
    const longitude = place(8);
    // Filled with `rows` (no row yet): each chunk lowers the starts of its days; `finish` gives an empty day the next one's.
    const dayArray = (length: number): Int32Array => new Int32Array(new SharedArrayBuffer(length * 4)).fill(rows);
    return new RowColumnsAssembly({
      rows,
      bytes: rowColumnBytes(size, directory),
      codes,
      created: { secondsLow, dayStarts: dayArray(CREATED_DAYS + 1), lateStarts: dayArray(CREATED_DAYS) },
      daysToClose: { hundredths, outsideRows: new Int32Array(0), outsideHundredths: new Int32Array(0) },
      closed,
      latitude,
      longitude,
      values,
      codeOf: Object.fromEntries(CODED_COLUMNS.map((column) => [column, new Map(values[column].map((value, code) => [value, code]))])) as Record<CodedColumn, Map<FilterValue, number>>,
      sampledCodeRows: Object.fromEntries(CODED_COLUMNS.map((column) => [column, new Float64Array(values[column].length)])) as Record<CodedColumn, Float64Array>,
    }, storedChunks.filter((chunk) => isStoredColumn(chunk.column_name)));
  }

  /**
   * Where the bytes of one stored chunk go: `into`, then `done()` once they are written; null when
   * the chunk is not one the listing announced with this length, or its width does not fit its column.
   */
  placeOf(columnName: string, chunkNumber: number, byteLength: number): ChunkPlace | null {
    const listed = this.listed.get(`${columnName}\n${chunkNumber}`);
    if (listed === undefined || byteLength !== listed.row_count * listed.bytes_per_row) return null;
    const at = chunkNumber * ROW_COLUMN_CHUNK;
    if (columnName === CREATED_SECONDS || columnName === DAYS_TO_CLOSE_HUNDREDTHS) {
      if (listed.bytes_per_row !== STORED_TIME_BYTES) return null;
      // Read as the platform's order, as they were written (little-endian on every platform Node runs on).
      const rows = listed.row_count;
      const done =
        columnName === CREATED_SECONDS
          ? () => this.fillCreated(at, new Uint32Array(this.wideChunk, 0, rows))
          : () => this.fillDaysToClose(at, new Int32Array(this.wideChunk, 0, rows));
      return { into: Buffer.from(this.wideChunk, 0, byteLength), done };
    }
    const keptBytes = KEPT_AS_STORED.get(columnName);
    if (keptBytes !== undefined) {
      if (listed.bytes_per_row !== keptBytes) return null;
      const target = columnName === CLOSED_SECONDS ? this.columns.closed : columnName === LATITUDE_DEGREES ? this.columns.latitude : this.columns.longitude;
      const into = Buffer.from(this.wideChunk, 0, byteLength);
      return { into, done: () => writeBytes(this.columns.bytes, into, target.offset + at * keptBytes) };
    }
    const column = columnName as CodedColumn;
    const target = this.columns.codes[column];
    const position = target.offset + at * target.bytesPerRow;
    const into = Buffer.from(this.wideChunk, 0, byteLength);
    if (listed.bytes_per_row === target.bytesPerRow) {
      const done = (): void => {
        this.sampleCodes(column, target.bytesPerRow === 1 ? into : new Uint16Array(this.wideChunk, 0, listed.row_count));
        writeBytes(this.columns.bytes, into, position);
      };
      return { into, done };
    }
    if (listed.bytes_per_row === 1 && target.bytesPerRow === 2) {
      // A chunk whose codes all fit in one byte, of a column that needs two.
      const wide = this.narrowChunk.subarray(0, byteLength);
      const done = (): void => {
        this.sampleCodes(column, into);
        wide.set(into);
        this.writeNarrow(wide, position);
      };
      return { into, done };
    }
    return null;
  }

  /** Counts the codes of every CODE_SAMPLE_STRIDE-th row of a chunk (a chunk's rows are a multiple of it but for the last). */
  private sampleCodes(column: CodedColumn, codes: ArrayLike<number>): void {
    const counts = this.columns.sampledCodeRows[column];
    for (let i = 0; i < codes.length; i += CODE_SAMPLE_STRIDE) {
      const code = codes[i] as number;
      // A code past the column's values fails the scans' own checks, not this count.
      if (code < counts.length) counts[code] = (counts[code] as number) + 1;
    }
  }

  /**
   * The wall seconds of a chunk from row `at`: each row's two bytes, and the starts of its days. The
   * rows come in list order, so a day is worked out once per run of rows of that day (any order
   * gives the same starts: each run lowers its day's start to its first row, and its late start to its
   * first row past 65,535 seconds).
   */
  private fillCreated(at: number, stored: Uint32Array): void {
    const { secondsLow, dayStarts, lateStarts } = this.columns.created;
    const low = this.narrowChunk.subarray(0, stored.length);
    let day = 0;
    let dayFrom = 0;
    let dayTo = 0;
    let lateSeen = true;
    for (let i = 0; i < stored.length; i++) {
      const seconds = stored[i] as number;
      const row = at + i;
      if (seconds < dayFrom || seconds >= dayTo) {
        day = Math.floor(seconds / DAY_SECONDS);
        dayFrom = day * DAY_SECONDS;
        dayTo = dayFrom + DAY_SECONDS;
        lateSeen = false;
        if (row < (dayStarts[day] as number)) dayStarts[day] = row;
      }
      const second = seconds - dayFrom;
      low[i] = second & 0xffff;
      if (second > 0xffff && !lateSeen) {
        lateSeen = true;
        if (row < (lateStarts[day] as number)) lateStarts[day] = row;
      }
    }
    this.writeNarrow(low, secondsLow.offset + at * 2);
  }

  /** Writes two bytes a row (the platform's order, as the scans read them) at `position`. */
  private writeNarrow(values: Uint16Array, position: number): void {
    writeBytes(this.columns.bytes, new Uint8Array(values.buffer, values.byteOffset, values.byteLength), position);
  }

  /** The days_to_close hundredths of a chunk from row `at`. */
  private fillDaysToClose(at: number, stored: Int32Array): void {
    const hundredths = this.narrowChunk.subarray(0, stored.length);
    for (let i = 0; i < stored.length; i++) {
      const value = stored[i] as number;
      // One unsigned comparison for the common case: 0 <= value < OUTSIDE.
      if (value >>> 0 < OUTSIDE) hundredths[i] = value;
      else if (value === NULL_HUNDREDTHS) hundredths[i] = NOT_CLOSED;
      else {
        hundredths[i] = OUTSIDE;
        this.outside.push([at + i, value]);
      }
    }
    this.writeNarrow(hundredths, this.columns.daysToClose.hundredths.offset + at * 2);
  }

  /**
   * The row columns, once every chunk is in: an empty day starts where the next day does, a day
   * without late rows has its late part start at the next day, and the rows outside two bytes are listed.
   */
  finish(): RowColumns {
    const { dayStarts, lateStarts } = this.columns.created;
    for (let day = CREATED_DAYS - 1; day >= 0; day--) {
      dayStarts[day] = Math.min(dayStarts[day] as number, dayStarts[day + 1] as number);
      lateStarts[day] = Math.min(lateStarts[day] as number, dayStarts[day + 1] as number);
    }
    this.outside.sort((a, b) => a[0] - b[0]);
    const listed = (index: 0 | 1): Int32Array => {
      const array = new Int32Array(new SharedArrayBuffer(Math.max(1, this.outside.length) * 4), 0, this.outside.length);
      this.outside.forEach((entry, i) => (array[i] = entry[index]));
      return array;
    };
    this.columns.daysToClose.outsideRows = listed(0);
    this.columns.daysToClose.outsideHundredths = listed(1);
    return this.columns;
  }

  /** Drops the bytes of row columns that will not be finished (a load that stopped). */
  abandon(): void {
    releaseRowColumns(this.columns.bytes);
  }

  /** Copies one stored chunk of a stored column into its place. */
  copy(chunk: StoredChunk & { data: Buffer }): boolean {
    const place = this.placeOf(chunk.column_name, chunk.chunk, chunk.data.length);
    if (place === null) return false;
    chunk.data.copy(place.into);
    place.done();
    return true;
  }
}

/**
 * The scan of these filters over the row columns sent to the workers as `shared`: each equality filter
 * and each negation as the codes it accepts (a negation: every code but the refused ones; null, code 0,
 * unless `none` is refused), `q` as the codes of its values in each searched column, the time bounds
 * as wall seconds. Filters with fewer accepted values come first (a rougher guess of the fewest rows
 * than the counts per value, and free).
 */
export function rowColumnScanOf(columns: RowColumns, shared: number, filters: ListFilters, facet?: CodedColumn): RowColumnScan {
  const codesOf = (column: CodedColumn, values: readonly FilterValue[]): number[] => {
    const codeOf = columns.codeOf[column];
    return values.flatMap((value) => {
      const code = codeOf.get(value);
      return code === undefined ? [] : [code];
    });
  };
  const equality = EQUALITY_FILTERS.flatMap((column) => {
    const found: { column: CodedColumn; accepted: number[]; share: number }[] = [];
    const size = columns.codeOf[column].size;
    const accepted = filters[column];
    if (accepted !== null) {
      const codes = codesOf(column, accepted);
      found.push({ column, accepted: codes, share: codes.length / size });
    }
    const refused = filters[negationOf(column)];
    if (refused !== null) {
      const out = new Set(codesOf(column, refused));
      const codes: number[] = [];
      for (let code = 0; code < size; code++) if (!out.has(code)) codes.push(code);
      found.push({ column, accepted: codes, share: codes.length / size });
    }
    return found;
  });
  equality.sort((a, b) => a.share - b.share);
  const { search } = filters;
  if (filters.q !== null && search === null) throw new Error('q is resolved (resolveSearch) before its scan is made');
  const seconds = (bound: string | null): number | undefined => (bound === null ? undefined : boundSeconds(bound));
  const defined = <T extends object>(parts: T): Partial<T> => Object.fromEntries(Object.entries(parts).filter(([, value]) => value !== undefined && value !== null)) as Partial<T>;
  const scan: RowColumnScan = {
    columns: shared,
    filters: equality.map(({ column, accepted }) => ({ column, accepted })),
    from: filters.created_from === null ? null : boundSeconds(filters.created_from),
    to: filters.created_to === null ? null : boundSeconds(filters.created_to),
    ...defined({
      box: filters.bbox ?? undefined,
      anyOf: search === null ? undefined : SEARCHED_COLUMNS.map((column) => ({ column, accepted: codesOf(column, search[column]) })),
      closed: filters.closed ?? undefined,
      closedFrom: seconds(filters.closed_from),
      closedTo: seconds(filters.closed_to),
      daysMin: filters.days_to_close_min ?? undefined,
      daysMax: filters.days_to_close_max ?? undefined,
      near: filters.near === null ? undefined : { ...filters.near, box: boxAround(filters.near.latitude, filters.near.longitude, filters.near.radiusM) },
      facet,
    }),
  };
  scan.expected = expectedScanRows(columns, scan);
  return scan;
}

/** A planned scan made a count per map cell of `multiple` grid cells across (RowColumnScan.cells); null stays null. */
export function cellScan<P extends { scan: RowColumnScan }>(planned: P | null, multiple: number): P | null {
  return planned === null ? null : { ...planned, scan: { ...planned.scan, cells: multiple } };
}

/** A facet scan's [code, rows] as the facet's values: largest first, then by value, null last. */
export function facetOfCodes(columns: RowColumns, column: CodedColumn, found: readonly [number, number][]): ValueCount[] {
  const values = columns.values[column];
  return found
    .map(([code, count]) => ({ value: values[code] ?? null, count }))
    .sort((a, b) => b.count - a.count || compareFilterValues(a.value, b.value));
}
