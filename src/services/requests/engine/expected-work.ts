/**
 * What a job of the walk pool is expected to cost, guessed from its plan before it runs: the pool
 * runs the cheapest waiting job first (sqlite-row-walks.ts, RowWalkPool), so that a grouping of a
 * week of one borough is not answered after a grouping of every row by zip code and week that
 * arrived just before it. A guess only orders the queue: it never refuses, cuts or changes an answer.
 *
 * The rows a scan selects are the rows of its created_at range (exact, from the rows' day starts),
 * narrowed by a closed_at range as scannedIntervals narrows it (the listed late closings left out);
 * of those, the rows that match are guessed as if the filters were independent: each equality filter
 * keeps the share of the rows its codes hold (counted on a sample of the rows when they were
 * loaded, RowColumns.sampledCodeRows), `q` the share of its codes in any searched column, a map box or
 * circle its share of the city's box, and each time check a fixed share.
 */
import { DAY_SECONDS, type CodedColumn } from '../../../snapshot/index.js';
import { CREATED_DAYS, type CreatedColumn, type LateClosings, type RowColumnScan, type ScanBox, type ScanExpectation } from './row-column-scan.js';

/** What a guess reads of the row columns (RowColumns): the rows' day starts and the sampled rows per code. */
interface SampledRowColumns {
  created: CreatedColumn;
  sampledCodeRows: Record<CodedColumn, Float64Array>;
  lateClosings?: LateClosings | null;
}

/** The boroughs' box (docs/requests.md): the share of the rows a map box or circle is guessed to hold is its share of it. */
const CITY_BOX: ScanBox = { minLongitude: -74.26, minLatitude: 40.49, maxLongitude: -73.69, maxLatitude: 40.92 };
/** The share of the rows guessed to pass a check whose share no count says (closed, days_to_close bounds). */
const UNCOUNTED_SHARE = 0.5;
/** The least share a filter is guessed to keep: a guess of none would put any scan first. */
const LEAST_SHARE = 0.001;

/** The first day (since 1970-01-01) whose start is above `row`, by binary search of the sorted day starts. */
function firstDayPast(dayStarts: Int32Array, row: number): number {
  let low = 0;
  let high = CREATED_DAYS;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((dayStarts[middle] as number) > row) high = middle;
    else low = middle + 1;
  }
  return low;
}

/** The share of the sampled rows of `column` whose code is one of `codes`. */
function codeShare(columns: SampledRowColumns, column: CodedColumn, codes: readonly number[]): number {
  const counts = columns.sampledCodeRows[column];
  let all = 0;
  for (const count of counts) all += count;
  if (all === 0) return 1;
  let kept = 0;
  for (const code of codes) kept += counts[code] ?? 0;
  return kept / all;
}

/** The share of the city's box that `box` covers. */
function boxShare(box: ScanBox): number {
  const width = Math.min(box.maxLongitude, CITY_BOX.maxLongitude) - Math.max(box.minLongitude, CITY_BOX.minLongitude);
  const height = Math.min(box.maxLatitude, CITY_BOX.maxLatitude) - Math.max(box.minLatitude, CITY_BOX.minLatitude);
  const city = (CITY_BOX.maxLongitude - CITY_BOX.minLongitude) * (CITY_BOX.maxLatitude - CITY_BOX.minLatitude);
  return width > 0 && height > 0 ? (width * height) / city : 0;
}

/** What the scan of `scan` (planned on `columns`) is expected to read and match. */
export function expectedScanRows(columns: SampledRowColumns, scan: RowColumnScan): ScanExpectation {
  const { dayStarts } = columns.created;
  const rows = dayStarts[CREATED_DAYS] as number;
  // The days of the rows: from the first row's day to the last row's.
  const firstDay = Math.max(0, firstDayPast(dayStarts, 0) - 1);
  const lastDay = rows === 0 ? firstDay : Math.max(firstDay, firstDayPast(dayStarts, rows - 1) - 1);
  // The created_at bounds, and those a closed_at range sets when the late closings are listed (scannedIntervals; the listed rows left out).
  const late = columns.lateClosings;
  const from = Math.max(scan.from ?? Number.NEGATIVE_INFINITY, late == null || scan.closedFrom === undefined ? Number.NEGATIVE_INFINITY : scan.closedFrom - late.days * DAY_SECONDS);
  const to = Math.min(scan.to ?? Number.POSITIVE_INFINITY, late == null || scan.closedTo === undefined ? Number.POSITIVE_INFINITY : scan.closedTo - late.earliestClose);
  const fromDay = from === Number.NEGATIVE_INFINITY ? firstDay : Math.min(Math.max(Math.floor(from / DAY_SECONDS), firstDay), lastDay + 1);
  const toDay = to === Number.POSITIVE_INFINITY ? lastDay + 1 : Math.min(Math.max(Math.ceil(to / DAY_SECONDS), fromDay), lastDay + 1);
  const rangeRows = Math.max(0, (dayStarts[toDay] as number) - (dayStarts[fromDay] as number));
  let share = 1;
  for (const filter of scan.filters) share *= codeShare(columns, filter.column, filter.accepted);
  if (scan.anyOf !== undefined) share *= Math.min(1, scan.anyOf.reduce((sum, { column, accepted }) => sum + codeShare(columns, column, accepted), 0));
  if (scan.box !== undefined) share *= boxShare(scan.box);
  if (scan.near !== undefined) share *= boxShare(scan.near.box);
  for (const check of [scan.closed, scan.closedFrom ?? scan.closedTo, scan.daysMin ?? scan.daysMax]) if (check !== undefined) share *= UNCOUNTED_SHARE;
  return { rangeRows, matchedRows: rangeRows * Math.max(share, LEAST_SHARE), rangeDays: toDay - fromDay };
}

/** Days per period of a grouping. */
const PERIOD_DAYS = { day: 1, week: 7, month: 30.44, year: 365.25 } as const;

/**
 * The work of a matched row, in the units of a row checked by one filter, by the kind of scan (a
 * grouping's by its columns and period, from bench/group-scan.ts's figures): a count adds one, a
 * grouping reads one or two columns and the row's period, and keeps its days_to_close for the medians.
 */
const MATCHED_ROW_WORK = { ids: 1, count: 1, 'page seconds': 1, facet: 2, cells: 3, buckets: 3, groups: 4 } as const;
/** The work of a group of a grouping (its values laid out and ranked), in the same units. */
const GROUP_WORK = 40;

/** The expected work of a planned scan of `kind`, in rows checked by one filter; the pool runs the least first. */
export function expectedScanWork(kind: keyof typeof MATCHED_ROW_WORK, scan: RowColumnScan): number {
  const expected = scan.expected;
  if (expected === undefined) return Number.POSITIVE_INFINITY;
  const checks = Math.max(1, scan.filters.length + [scan.anyOf, scan.box, scan.near, scan.closed, scan.closedFrom ?? scan.closedTo, scan.daysMin ?? scan.daysMax].filter((check) => check !== undefined).length);
  const selection = expected.rangeRows * checks;
  const { groups } = scan;
  if (kind !== 'groups' || groups === undefined) return selection + expected.matchedRows * MATCHED_ROW_WORK[kind];
  const keys = groups.ranks.reduce((product, ranks) => product * ranks.length, 1);
  const periods = groups.period === null ? 1 : Math.max(1, expected.rangeDays / PERIOD_DAYS[groups.period]);
  const groupCount = Math.min(expected.matchedRows, keys * periods);
  return selection + expected.matchedRows * (MATCHED_ROW_WORK.groups + 2 * groups.by.length) + groupCount * GROUP_WORK;
}
