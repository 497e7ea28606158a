/**
 * Builds the row columns of a snapshot (src/snapshot/row-columns.ts) as the snapshot writers store the
 * rows, in list order: one chunk of every array is held; a full chunk becomes one stored chunk per
 * column, which the writer takes and stores (sqlite-row-columns.ts, postgres-row-columns.ts). When a
 * value does not fit the format, nothing more is built and `finish` says so: the snapshot then has no
 * row columns (its walks read the rows).
 */
import {
  CLOSED_SECONDS,
  CODED_COLUMNS,
  CREATED_SECONDS,
  DAYS_TO_CLOSE_HUNDREDTHS,
  LATITUDE_DEGREES,
  LONGITUDE_DEGREES,
  MAX_CODE,
  NOT_CLOSED_SECONDS,
  NULL_HUNDREDTHS,
  ROW_COLUMN_CHUNK,
  createdSecondsOf,
} from '../../snapshot/row-columns.js';
import type { ServiceRequest } from '../../snapshot/service-request.js';

type Value = string | number;

/** One stored chunk of one column: `data` holds `rowCount` values of `bytesPerRow` bytes, little-endian. */
export interface RowColumnChunk {
  column: string;
  chunk: number;
  rowCount: number;
  bytesPerRow: number;
  data: Buffer;
}

/** A code of a coded column and the value it stands for. */
export interface RowColumnValue {
  column: string;
  code: number;
  value: Value;
}

export class RowColumnsBuilder {
  private readonly codes = CODED_COLUMNS.map(() => new Uint16Array(ROW_COLUMN_CHUNK));
  private readonly codeOf = CODED_COLUMNS.map(() => new Map<Value, number>());
  private readonly created = new Uint32Array(ROW_COLUMN_CHUNK);
  private readonly daysToClose = new Int32Array(ROW_COLUMN_CHUNK);
  private readonly closed = new Uint32Array(ROW_COLUMN_CHUNK);
  private readonly latitude = new Float64Array(ROW_COLUMN_CHUNK);
  private readonly longitude = new Float64Array(ROW_COLUMN_CHUNK);
  private filled = 0;
  private chunk = 0;
  private fits = true;
  private ready: RowColumnChunk[] = [];

  /** The next row in list order. */
  add(row: ServiceRequest): void {
    if (!this.fits) return;
    const seconds = createdSecondsOf(row.created_at);
    const closedSeconds = row.closed_at === null ? NOT_CLOSED_SECONDS : createdSecondsOf(row.closed_at);
    if (seconds === null || closedSeconds === null) {
      this.stop();
      return;
    }
    const at = this.filled;
    for (let c = 0; c < CODED_COLUMNS.length; c++) {
      const value = row[CODED_COLUMNS[c] as (typeof CODED_COLUMNS)[number]];
      let code = 0;
      if (value !== null) {
        const codes = this.codeOf[c] as Map<Value, number>;
        const known = codes.get(value);
        if (known !== undefined) code = known;
        else if (codes.size < MAX_CODE) codes.set(value, (code = codes.size + 1));
        else {
          this.stop();
          return;
        }
      }
      (this.codes[c] as Uint16Array)[at] = code;
    }
    this.created[at] = seconds;
    this.daysToClose[at] = row.days_to_close === null ? NULL_HUNDREDTHS : Math.round(row.days_to_close * 100);
    this.closed[at] = closedSeconds;
    const located = row.latitude !== null && row.longitude !== null;
    this.latitude[at] = located ? (row.latitude as number) : Number.NaN;
    this.longitude[at] = located ? (row.longitude as number) : Number.NaN;
    this.filled = at + 1;
    if (this.filled === ROW_COLUMN_CHUNK) this.closeChunk();
  }

  /** The chunks completed since the last call, each with its own copy of the bytes. */
  takeChunks(): RowColumnChunk[] {
    const taken = this.ready;
    this.ready = [];
    return taken;
  }

  /** Closes the last chunk; the values of the codes, or null when a value did not fit (no row columns). */
  finish(): RowColumnValue[] | null {
    if (!this.fits) return null;
    this.closeChunk();
    return CODED_COLUMNS.flatMap((column, c) => [...(this.codeOf[c] as Map<Value, number>)].map(([value, code]) => ({ column, code, value })));
  }

  private stop(): void {
    this.fits = false;
    this.ready = [];
  }

  private closeChunk(): void {
    const rows = this.filled;
    if (rows === 0) return;
    const chunkOf = (column: string, bytesPerRow: number, data: Buffer): RowColumnChunk => ({ column, chunk: this.chunk, rowCount: rows, bytesPerRow, data });
    CODED_COLUMNS.forEach((column, c) => {
      const codes = (this.codes[c] as Uint16Array).subarray(0, rows);
      // One byte a row when every code of the chunk fits in one.
      let narrow = true;
      for (let i = 0; i < rows && narrow; i++) narrow = (codes[i] as number) < 256;
      this.ready.push(narrow ? chunkOf(column, 1, Buffer.from(Uint8Array.from(codes))) : chunkOf(column, 2, copyOf(codes)));
    });
    this.ready.push(chunkOf(CREATED_SECONDS, 4, copyOf(this.created.subarray(0, rows))));
    this.ready.push(chunkOf(DAYS_TO_CLOSE_HUNDREDTHS, 4, copyOf(this.daysToClose.subarray(0, rows))));
    this.ready.push(chunkOf(CLOSED_SECONDS, 4, copyOf(this.closed.subarray(0, rows))));
    this.ready.push(chunkOf(LATITUDE_DEGREES, 8, copyOf(this.latitude.subarray(0, rows))));
    this.ready.push(chunkOf(LONGITUDE_DEGREES, 8, copyOf(this.longitude.subarray(0, rows))));
    this.chunk += 1;
    this.filled = 0;
  }
}

/** A copy of the bytes of a typed array (the platform's order: little-endian on every platform Node runs on). */
function copyOf(array: Uint16Array | Uint32Array | Int32Array | Float64Array): Buffer {
  return Buffer.from(Buffer.from(array.buffer, array.byteOffset, array.byteLength));
}
