/**
 * The row columns of the snapshot served (the snapshot's row-columns.ts) in shared memory: allocated
 * once per snapshot from the list of its stored chunks, then filled a chunk at a time by the loader
 * of the backend (sqlite-row-columns.ts, postgres-row-columns.ts), which lets the event loop turn
 * between a few milliseconds of copying. The walk workers are sent the same memory once
 * (RowWalkPool.shareRowColumns) and scan it for the count, facets and statistics of any combination
 * of equality filters and a created_at range (row-column-scan.ts).
 */
import {
  boundSeconds,
  CODED_COLUMNS,
  CREATED_SECONDS,
  DAYS_TO_CLOSE_HUNDREDTHS,
  ROW_COLUMN_CHUNK,
  type CodedColumn,
} from '../../snapshot/index.js';
import { EQUALITY_FILTERS, compareFilterValues, type FilterValue, type ListFilters } from './list-filters.js';
import type { CodeArray, RowColumnScan, SharedRowColumns } from './row-column-scan.js';
import type { ValueCount } from './service-request-store.js';

export interface RowColumns extends SharedRowColumns {
  rows: number;
  /** Each coded column's values by code (code 0: null). */
  values: Record<CodedColumn, FilterValue[]>;
  codeOf: Record<CodedColumn, Map<FilterValue, number>>;
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

/** Copying between two turns of the event loop, ms. */
export const COPY_SLICE_MS = 4;

/** The stored arrays: the coded columns, then created_at and days_to_close. */
const STORED = [...CODED_COLUMNS, CREATED_SECONDS, DAYS_TO_CLOSE_HUNDREDTHS];

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

  private constructor(
    readonly columns: RowColumns,
    storedChunks: readonly StoredChunk[],
  ) {
    this.listed = new Map(storedChunks.map((chunk) => [`${chunk.column_name}\n${chunk.chunk}`, chunk]));
  }

  static begin(storedValues: Iterable<StoredValue>, storedChunks: readonly StoredChunk[], maxBytes = Number.POSITIVE_INFINITY): RowColumnsAssembly | null {
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
    if (rows * (codeBytes + 8) > maxBytes) return null;

    const shared = <T>(make: (buffer: SharedArrayBuffer) => T, bytesPerRow: number): T => make(new SharedArrayBuffer(Math.max(1, rows * bytesPerRow)));
    const codes = Object.fromEntries(
      CODED_COLUMNS.map((column) => [column, values[column].length <= 256 ? shared((b) => new Uint8Array(b, 0, rows), 1) : shared((b) => new Uint16Array(b, 0, rows), 2)]),
    ) as Record<CodedColumn, CodeArray>;
    return new RowColumnsAssembly({
      rows,
      codes,
      created: shared((b) => new Uint32Array(b, 0, rows), 4),
      daysToClose: shared((b) => new Int32Array(b, 0, rows), 4),
      values,
      codeOf: Object.fromEntries(CODED_COLUMNS.map((column) => [column, new Map(values[column].map((value, code) => [value, code]))])) as Record<CodedColumn, Map<FilterValue, number>>,
    }, storedChunks.filter((chunk) => isStoredColumn(chunk.column_name)));
  }

  /**
   * Where the bytes of one stored chunk go: `into`, then `done()` once they are written; null when
   * the chunk is not one the listing announced with this length, or its width does not fit its column.
   */
  placeOf(columnName: string, chunkNumber: number, byteLength: number): ChunkPlace | null {
    const listed = this.listed.get(`${columnName}\n${chunkNumber}`);
    if (listed === undefined || byteLength !== listed.row_count * listed.bytes_per_row) return null;
    const columns = this.columns;
    const target = columnName === CREATED_SECONDS ? columns.created : columnName === DAYS_TO_CLOSE_HUNDREDTHS ? columns.daysToClose : columns.codes[columnName as CodedColumn];
    const at = chunkNumber * ROW_COLUMN_CHUNK;
    if (listed.bytes_per_row === target.BYTES_PER_ELEMENT) {
      // Written as bytes: a typed array's set into shared memory copies far slower than a plain memory copy.
      return { into: Buffer.from(target.buffer, target.byteOffset + at * target.BYTES_PER_ELEMENT, byteLength), done: () => undefined };
    }
    if (listed.bytes_per_row === 1 && target instanceof Uint16Array) {
      // A chunk whose codes all fit in one byte, of a column that needs two.
      const into = Buffer.alloc(byteLength);
      return { into, done: () => target.set(into, at) };
    }
    return null;
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
 * The scan of these filters over the row columns sent to the workers as `shared`; null when the row
 * columns cannot answer them (a map box). Filters with fewer accepted values come first (a rougher
 * guess of the fewest rows than the counts per value, and free).
 */
export function rowColumnScanOf(columns: RowColumns, shared: number, filters: ListFilters, facet?: CodedColumn): RowColumnScan | null {
  if (filters.bbox !== null) return null;
  const equality = EQUALITY_FILTERS.flatMap((column) => {
    const accepted = filters[column];
    if (accepted === null) return [];
    const codeOf = columns.codeOf[column];
    const codes = accepted.flatMap((value) => {
      const code = codeOf.get(value);
      return code === undefined ? [] : [code];
    });
    return [{ column, accepted: codes, share: codes.length / codeOf.size }];
  });
  equality.sort((a, b) => a.share - b.share);
  return {
    columns: shared,
    filters: equality.map(({ column, accepted }) => ({ column, accepted })),
    from: filters.created_from === null ? null : boundSeconds(filters.created_from),
    to: filters.created_to === null ? null : boundSeconds(filters.created_to),
    ...(facet === undefined ? {} : { facet }),
  };
}

/** A facet scan's [code, rows] as the facet's values: largest first, then by value, null last. */
export function facetOfCodes(columns: RowColumns, column: CodedColumn, found: readonly [number, number][]): ValueCount[] {
  const values = columns.values[column];
  return found
    .map(([code, count]) => ({ value: values[code] ?? null, count }))
    .sort((a, b) => b.count - a.count || compareFilterValues(a.value, b.value));
}
