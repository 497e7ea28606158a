/**
 * The late closings of a snapshot's row columns (SharedRowColumns.lateClosings): the rows closed long
 * after they were created, listed by closed_at day, so that the scans of a closed_at range skip the
 * rows created too early to be closed in it (scannedIntervals). The list is made once per snapshot
 * when its row columns are loaded, from the stored created_at and closed_at wall seconds alone (it
 * assumes nothing of days_to_close or of the cleaning), a block of rows at a time with a turn of the
 * event loop between blocks.
 *
 * The rows listed are those closed at least `days` whole days after they were created, `days` the
 * fewest that keep them to about lateRowsAtMost (counted on every 8th row: the first of the two passes
 * costs an eighth of the second): most requests close within weeks, so a closed_at range of a
 * few days, which otherwise reads every row created before it, reads the rows of those weeks and its
 * own few listed rows instead.
 */
import { setImmediate as turn } from 'node:timers/promises';
import { DAY_SECONDS, NOT_CLOSED_SECONDS } from '../../../snapshot/index.js';
import { CLOSED_USE, dayOfRow, FACET_USE, readRows, readSeconds, type LateClosings, type SharedRowColumns } from './row-column-scan.js';

/** Rows per block of a pass. */
const PASS_BLOCK = 65_536;
/** The seconds of the second half of a day's created_at (row-column-scan.ts, CreatedColumn). */
const LATE_SECOND = 65_536;
/** The longest lateness counted apart, in days (longer ones count as this many). */
const LONGEST_DAYS = 65_535;

/** The most rows listed: a 32nd of the rows (8 bytes each, shared by every thread), or 4,096 of a small snapshot. */
export function lateRowsAtMost(rows: number): number {
  return Math.max(4_096, Math.floor(rows / 32));
}

/** The first pass reads every how many rows: what it finds only chooses `days`. */
const SAMPLE_STRIDE = 8;

/**
 * What a pass over the closed rows finds: per whole days of lateness, of every `step`-th row (the
 * first pass), or the rows at least `listFrom` seconds late, in arrays it grows, and the earliest
 * close of every row (the second).
 */
interface PassResult {
  step: number;
  perDays: Float64Array | null;
  earliestClose: number;
  listFrom: number;
  seconds: Uint32Array;
  rows: Int32Array;
  found: number;
}

/**
 * One pass over the closed rows, a block at a time, giving way between blocks: each row's lateness
 * (closed_at less created_at, wall seconds) counted per whole days, or the row listed when it is at
 * least `listFrom`. In one loop with local variables (a callback per row cost twice the time).
 */
async function passOverClosedRows(columns: SharedRowColumns, rows: number, giveWay: () => Promise<unknown>, result: PassResult): Promise<void> {
  const { created } = columns;
  const { dayStarts, lateStarts } = created;
  const { perDays, listFrom, step } = result;
  let { seconds, rows: listed } = result;
  let earliestClose = result.earliestClose;
  let found = result.found;
  for (let blockStart = 0; blockStart < rows; blockStart += PASS_BLOCK) {
    if (blockStart > 0) await giveWay();
    const blockEnd = Math.min(rows, blockStart + PASS_BLOCK);
    const low = readRows(columns.bytes, created.secondsLow, blockStart, blockEnd, FACET_USE);
    const closed = readSeconds(columns.bytes, columns.closed, blockStart, blockEnd, CLOSED_USE);
    let day = dayOfRow(created, blockStart);
    let dayEnd = dayStarts[day + 1] as number;
    let lateFrom = lateStarts[day] as number;
    let dayFirstSecond = day * DAY_SECONDS;
    for (let row = blockStart; row < blockEnd; row += step) {
      while (row >= dayEnd) {
        day += 1;
        dayEnd = dayStarts[day + 1] as number;
        lateFrom = lateStarts[day] as number;
        dayFirstSecond = day * DAY_SECONDS;
      }
      const closedAt = closed[row - blockStart] as number;
      if (closedAt === NOT_CLOSED_SECONDS) continue;
      const lateness = closedAt - (dayFirstSecond + (low[row - blockStart] as number) + (row >= lateFrom ? LATE_SECOND : 0));
      if (perDays !== null) {
        const days = lateness < 0 ? 0 : Math.min(LONGEST_DAYS, Math.floor(lateness / DAY_SECONDS));
        perDays[days] = (perDays[days] as number) + 1;
        continue;
      }
      if (lateness < earliestClose) earliestClose = lateness;
      if (lateness < listFrom) continue;
      if (found === seconds.length) {
        const grown = { seconds: new Uint32Array(found * 2 + 1_024), rows: new Int32Array(found * 2 + 1_024) };
        grown.seconds.set(seconds);
        grown.rows.set(listed);
        ({ seconds, rows: listed } = grown);
      }
      seconds[found] = closedAt;
      listed[found] = row;
      found += 1;
    }
  }
  Object.assign(result, { earliestClose, seconds, rows: listed, found });
}

/**
 * The late closings of loaded row columns of `rows` rows; null when none is closed, or when even the
 * rows closed LONGEST_DAYS or more after they were created are guessed to be more than `atMost`.
 */
export async function listLateClosings(columns: SharedRowColumns, rows: number, atMost = lateRowsAtMost(rows), giveWay: () => Promise<unknown> = turn): Promise<LateClosings | null> {
  // First pass, over every SAMPLE_STRIDE-th row: the closed rows per whole days of lateness.
  const perDays = new Float64Array(LONGEST_DAYS + 1);
  await passOverClosedRows(columns, rows, giveWay, { step: SAMPLE_STRIDE, perDays, earliestClose: 0, listFrom: 0, seconds: new Uint32Array(0), rows: new Int32Array(0), found: 0 });
  // The fewest whole days (1 or more) whose rows closed that late or later are guessed to be at most `atMost`.
  let guessed = 0;
  let days = LONGEST_DAYS + 1;
  while (days > 1 && guessed + (perDays[days - 1] as number) * SAMPLE_STRIDE <= atMost) {
    days -= 1;
    guessed += (perDays[days] as number) * SAMPLE_STRIDE;
  }
  if (days > LONGEST_DAYS) return null;

  // Second pass: the listed rows in row order, and the earliest close of all; then by closed_at day (a counting sort keeps the row order within a day).
  const second: PassResult = { step: 1, perDays: null, earliestClose: Number.POSITIVE_INFINITY, listFrom: days * DAY_SECONDS, seconds: new Uint32Array(guessed + 1_024), rows: new Int32Array(guessed + 1_024), found: 0 };
  await passOverClosedRows(columns, rows, giveWay, second);
  const { earliestClose, found: listed } = second;
  if (earliestClose === Number.POSITIVE_INFINITY) return null;
  const inRowOrder = { seconds: second.seconds.subarray(0, listed), rows: second.rows.subarray(0, listed) };
  let firstDay = Number.POSITIVE_INFINITY;
  let lastDay = Number.NEGATIVE_INFINITY;
  for (const second of inRowOrder.seconds) {
    const day = Math.floor(second / DAY_SECONDS);
    if (day < firstDay) firstDay = day;
    if (day > lastDay) lastDay = day;
  }
  const starts = new Int32Array(listed === 0 ? 1 : lastDay - firstDay + 2);
  for (const second of inRowOrder.seconds) {
    const next = Math.floor(second / DAY_SECONDS) - firstDay + 1;
    starts[next] = (starts[next] as number) + 1;
  }
  for (let d = 1; d < starts.length; d++) starts[d] = (starts[d] as number) + (starts[d - 1] as number);
  const seconds = new Uint32Array(new SharedArrayBuffer(Math.max(1, listed) * 4), 0, listed);
  const byDayRows = new Int32Array(new SharedArrayBuffer(Math.max(1, listed) * 4), 0, listed);
  for (let i = 0; i < listed; i++) {
    const second = inRowOrder.seconds[i] as number;
    const day = Math.floor(second / DAY_SECONDS) - firstDay;
    const at = starts[day] as number;
    starts[day] = at + 1;
    seconds[at] = second;
    byDayRows[at] = inRowOrder.rows[i] as number;
  }
  return { days, earliestClose, seconds, rows: byDayRows };
}
