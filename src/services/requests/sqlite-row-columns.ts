/**
 * The row columns of the SQLite snapshot open (the snapshot's row-columns.ts), loaded into shared
 * memory once per file, a chunk at a time with a turn of the event loop between a few milliseconds of
 * copying, so that loading 5 million rows never holds the loop. The walk workers are sent the same
 * memory once (RowWalkPool.shareRowColumns) and scan it for the count, facets and statistics of any
 * combination of equality filters and a created_at range (row-column-scan.ts). A file without row columns (or with unusable ones) has none: its walks read
 * the rows.
 */
import Database from 'better-sqlite3';
import { setImmediate as turn } from 'node:timers/promises';
import {
  boundSeconds,
  CODED_COLUMNS,
  CREATED_SECONDS,
  DAYS_TO_CLOSE_HUNDREDTHS,
  ROW_COLUMN_CHUNK,
  ROW_COLUMN_VALUES_TABLE,
  ROW_COLUMNS_TABLE,
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

/** Copying between two turns of the event loop, ms. */
const COPY_SLICE_MS = 4;

interface ChunkRow {
  column_name: string;
  chunk: number;
  row_count: number;
  bytes_per_row: number;
}

/**
 * Loads the row columns of the open file; null when it has none or they do not match its format.
 * `stillOpen` is asked after each turn and at the end: false (the file was replaced or closed) stops the load.
 */
export async function loadRowColumns(database: Database.Database, stillOpen: () => boolean): Promise<RowColumns | null> {
  const hasTables = database.prepare(`SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name IN (?, ?)`).get(ROW_COLUMNS_TABLE, ROW_COLUMN_VALUES_TABLE) as { n: number };
  if (hasTables.n !== 2) return null;
  const values = Object.fromEntries(CODED_COLUMNS.map((column) => [column, [null]])) as unknown as Record<CodedColumn, FilterValue[]>;
  const valuesOf = new Map<string, FilterValue[]>(Object.entries(values));
  for (const { column_name, code, value } of database.prepare(`SELECT column_name, code, value FROM ${ROW_COLUMN_VALUES_TABLE} ORDER BY column_name, code`).all() as { column_name: string; code: number; value: FilterValue }[]) {
    const known = valuesOf.get(column_name);
    // Codes are 1, 2, 3... of a column the service knows.
    if (known === undefined || known.length !== code) return null;
    known.push(value);
  }
  const chunks = database.prepare(`SELECT column_name, chunk, row_count, bytes_per_row FROM ${ROW_COLUMNS_TABLE} ORDER BY column_name, chunk`).all() as ChunkRow[];
  const rowsOf = new Map<string, number>();
  for (const chunk of chunks) {
    const before = rowsOf.get(chunk.column_name) ?? 0;
    // Every chunk but the last one is full.
    if (before !== chunk.chunk * ROW_COLUMN_CHUNK || chunk.row_count > ROW_COLUMN_CHUNK) return null;
    rowsOf.set(chunk.column_name, before + chunk.row_count);
  }
  const rows = rowsOf.get(CREATED_SECONDS) ?? 0;
  const stored = [...CODED_COLUMNS, CREATED_SECONDS, DAYS_TO_CLOSE_HUNDREDTHS];
  if (stored.some((name) => (rowsOf.get(name) ?? 0) !== rows)) return null;

  const shared = <T>(make: (buffer: SharedArrayBuffer) => T, bytesPerRow: number): T => make(new SharedArrayBuffer(Math.max(1, rows * bytesPerRow)));
  const codes = Object.fromEntries(
    CODED_COLUMNS.map((column) => [column, values[column].length <= 256 ? shared((b) => new Uint8Array(b, 0, rows), 1) : shared((b) => new Uint16Array(b, 0, rows), 2)]),
  ) as Record<CodedColumn, CodeArray>;
  const columns: RowColumns = {
    rows,
    codes,
    created: shared((b) => new Uint32Array(b, 0, rows), 4),
    daysToClose: shared((b) => new Int32Array(b, 0, rows), 4),
    values,
    codeOf: Object.fromEntries(CODED_COLUMNS.map((column) => [column, new Map(values[column].map((value, code) => [value, code]))])) as Record<CodedColumn, Map<FilterValue, number>>,
  };
  const targetOf = (name: string): CodeArray | Uint32Array | Int32Array =>
    name === CREATED_SECONDS ? columns.created : name === DAYS_TO_CLOSE_HUNDREDTHS ? columns.daysToClose : columns.codes[name as CodedColumn];

  // The chunks are read in one pass of the table (several times faster than a lookup per chunk) on a
  // connection of their own, so that the pass can stay open between turns of the event loop; it must
  // see the file `database` sees (a refresh may rename another one onto the path meanwhile).
  const reader = new Database(database.name, { readonly: true, fileMustExist: true });
  try {
    const idOf = (connection: Database.Database): unknown => connection.prepare('SELECT snapshot_id FROM snapshot_meta').pluck().get();
    if (idOf(reader) !== idOf(database)) return null;
    let sliceStarted = performance.now();
    const pass = reader.prepare(`SELECT column_name, chunk, row_count, bytes_per_row, data FROM ${ROW_COLUMNS_TABLE} ORDER BY column_name, chunk`);
    for (const chunk of pass.iterate() as IterableIterator<ChunkRow & { data: Buffer }>) {
      if (!stored.includes(chunk.column_name)) continue;
      const data = chunk.data;
      if (data.length !== chunk.row_count * chunk.bytes_per_row) return null;
      const target = targetOf(chunk.column_name);
      const at = chunk.chunk * ROW_COLUMN_CHUNK;
      if (chunk.bytes_per_row === target.BYTES_PER_ELEMENT) {
        // Buffer's copy is a plain memory copy; a typed array's set into shared memory copies far slower.
        data.copy(Buffer.from(target.buffer, target.byteOffset + at * target.BYTES_PER_ELEMENT, data.length));
      } else if (chunk.bytes_per_row === 1 && target instanceof Uint16Array) {
        // A chunk whose codes all fit in one byte, of a column that needs two.
        target.set(data, at);
      } else return null;
      if (performance.now() - sliceStarted > COPY_SLICE_MS) {
        await turn();
        if (!stillOpen()) return null;
        sliceStarted = performance.now();
      }
    }
  } finally {
    reader.close();
  }
  return stillOpen() ? columns : null;
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
