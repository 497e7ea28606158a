/** Row columns for tests of the walks, made in shared memory without a snapshot. */
import { CODED_COLUMNS, type CodedColumn } from '../../../src/snapshot/index.js';
import { CREATED_DAYS, type SharedRowColumns, type StoredArray } from '../../../src/services/requests/engine/row-column-scan.js';

/** Row columns of `rows` rows, all created on the same day, in shared memory. */
export function oneDayRowColumns(rows: number): SharedRowColumns {
  const day = 19_675;
  const dayArray = (length: number, fill: (d: number) => number): Int32Array => new Int32Array(new SharedArrayBuffer(length * 4)).map((_, d) => fill(d));
  let size = 0;
  const place = (bytesPerRow: StoredArray['bytesPerRow']): StoredArray => {
    const array = { offset: size, bytesPerRow };
    size += Math.ceil((rows * bytesPerRow) / 8) * 8;
    return array;
  };
  const codes = Object.fromEntries(CODED_COLUMNS.map((column) => [column, place(1)])) as Record<CodedColumn, StoredArray>;
  const created = { secondsLow: place(2), dayStarts: dayArray(CREATED_DAYS + 1, (d) => (d <= day ? 0 : rows)), lateStarts: dayArray(CREATED_DAYS, (d) => (d < day ? 0 : rows)) };
  const daysToClose = { hundredths: place(2), outsideRows: new Int32Array(0), outsideHundredths: new Int32Array(0) };
  const closed = place(4);
  const latitude = place(8);
  const longitude = place(8);
  return { bytes: { memory: new SharedArrayBuffer(Math.max(1, size)) }, codes, created, daysToClose, closed, latitude, longitude };
}

