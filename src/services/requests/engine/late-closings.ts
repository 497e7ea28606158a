/**
 * The late closings of a snapshot's row columns (SharedRowColumns.lateClosings): the rows closed long
 * after they were created, listed by closed_at day, so that the scans of a closed_at range skip the
 * rows created too early to be closed in it (scannedIntervals). The list is made once per snapshot
 * when its row columns are loaded, from the stored created_at and closed_at wall seconds alone (it
 * assumes nothing of days_to_close or of the cleaning), a block of rows at a time with a turn of the
 * event loop between blocks.
 *
 * The rows listed are those closed at least `days` whole days after they were created, `days` the
 * fewest that keep them to lateRowsAtMost: most requests close within weeks, so a closed_at range of a
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

/**
 * Calls `visit` with each closed row of the row columns, its created_at and closed_at wall seconds, a
 * block at a time, giving way between blocks.
 */
async function forEachClosedRow(columns: SharedRowColumns, rows: number, giveWay: () => Promise<unknown>, visit: (row: number, created: number, closed: number) => void): Promise<void> {
  const { created } = columns;
  for (let blockStart = 0; blockStart < rows; blockStart += PASS_BLOCK) {
    if (blockStart > 0) await giveWay();
    const blockEnd = Math.min(rows, blockStart + PASS_BLOCK);
    const low = readRows(columns.bytes, created.secondsLow, blockStart, blockEnd, FACET_USE);
    const closed = readSeconds(columns.bytes, columns.closed, blockStart, blockEnd, CLOSED_USE);
    let day = dayOfRow(created, blockStart);
    let nextDay = created.dayStarts[day + 1] as number;
    for (let row = blockStart; row < blockEnd; row++) {
      while (row >= nextDay) {
        day += 1;
        nextDay = created.dayStarts[day + 1] as number;
      }
      const closedAt = closed[row - blockStart] as number;
      if (closedAt === NOT_CLOSED_SECONDS) continue;
      const createdAt = day * DAY_SECONDS + (low[row - blockStart] as number) + (row >= (created.lateStarts[day] as number) ? LATE_SECOND : 0);
      visit(row, createdAt, closedAt);
    }
  }
}

/**
 * The late closings of loaded row columns of `rows` rows; null when none is closed, or when even the
 * rows closed LONGEST_DAYS or more after they were created are more than `atMost`.
 */
export async function listLateClosings(columns: SharedRowColumns, rows: number, atMost = lateRowsAtMost(rows), giveWay: () => Promise<unknown> = turn): Promise<LateClosings | null> {
  // First pass: the closed rows per whole days of lateness, and the earliest close.
  const perDays = new Float64Array(LONGEST_DAYS + 1);
  let earliestClose = Number.POSITIVE_INFINITY;
  await forEachClosedRow(columns, rows, giveWay, (_, created, closed) => {
    const lateness = closed - created;
    if (lateness < earliestClose) earliestClose = lateness;
    const days = Math.min(LONGEST_DAYS, Math.max(0, Math.floor(lateness / DAY_SECONDS)));
    perDays[days] = (perDays[days] as number) + 1;
  });
  if (earliestClose === Number.POSITIVE_INFINITY) return null;
  // The fewest whole days (1 or more) whose rows closed that late or later are at most `atMost`.
  let listed = 0;
  let days = LONGEST_DAYS + 1;
  while (days > 1 && listed + (perDays[days - 1] as number) <= atMost) {
    days -= 1;
    listed += perDays[days] as number;
  }
  if (days > LONGEST_DAYS) return null;

  // Second pass: the listed rows in row order, then by closed_at day (a counting sort keeps the row order within a day).
  const inRowOrder = { seconds: new Uint32Array(listed), rows: new Int32Array(listed) };
  let found = 0;
  const lateness = days * DAY_SECONDS;
  await forEachClosedRow(columns, rows, giveWay, (row, created, closed) => {
    if (closed - created < lateness) return;
    inRowOrder.seconds[found] = closed;
    inRowOrder.rows[found] = row;
    found += 1;
  });
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
