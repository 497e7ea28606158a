import { ALL_ROWS_SCOPE, medianOfMiddles, shareClosedWithin, SUMMARY_FACET_COLUMNS, SUMMARY_BUCKET_UNITS, SUMMARY_FILTER_COLUMNS, SUMMARY_PAIR_UNITS, type SummaryBucketUnit, type SummaryFacetColumn, type SummaryFilterColumn, type SummaryUnit, WHOLE_SNAPSHOT_PERIOD } from '../../../snapshot/index.js';
import { compareFilterValues, EQUALITY_FILTERS, hasRowFilters, type FilterValue, type ListFilters } from '../list-filters.js';
import { BUCKET_KEY_OF, bucketNumbers, isoWeekOf, statDays, type Period, type PeriodNumbers } from './period-stats.js';
import type { BucketSummary, FacetColumn, GroupNumbers, GroupsRecord, ServiceRequestStore, ValueCount } from '../store/service-request-store.js';
import type { GroupMeasure, GroupQuery } from './group-query.js';
import { TimeSlice } from '../../../platform/work-budget.js';
import { oneOfList, type QueryDialect, type SqlParameter } from '../store/filter-sql.js';
import { FILTER_VALUES_MAXIMUM } from '../schemas.js';

/**
 * Count, facets and the period statistics from the snapshot's aggregate summaries
 * (src/snapshot/aggregate-summaries.ts), the same SQL on SQLite and PostgreSQL. Each answer is
 * null when the summaries do not hold it (the store then answers from the rows):
 * - no filter, or one summarised equality filter with any list of its values (`none` included);
 * - optionally a created_from / created_to range on bucket boundaries: midnights for count and daily
 *   numbers, Mondays for weekly numbers, first days of months for facets and monthly numbers;
 * - facets over a range: no filter, or a filter on the facet's own column;
 * - statistics: one value only (a median does not add up over values);
 * - groups (`/v1/stats/groups`): one summarised column per day, ISO week, month or year, ordered by a count
 *   or the share closed within 14 days (numbers that add up over the range), every key kept (the
 *   median of the keys left out would need their rows): the scope's buckets are the groups; per month
 *   or year, also with one value of another summarised column as the filter, and two summarised columns
 *   with no filter or one on either of them (summary_pairs);
 * - a snapshot without the summaries (built before them), or any failure reading them.
 * The numbers are exact: the summaries count every row, and keep the two middle days_to_close of each
 * bucket and value.
 */

/**
 * Runs one statement with `?` placeholders; the store's own reader (prepared statements, errors). Its
 * rows are objects named by the columns, or arrays of the columns in the SELECT's order: the large
 * reads of the groups take arrays, which the drivers make in about half the time.
 */
export type SummaryReader = (sql: string, parameters: readonly SqlParameter[], shape: SummaryRowShape) => Promise<unknown[]>;

export type SummaryRowShape = 'objects' | 'arrays';

/** The rows one query selects: every row, or those with one of the values of one column. */
interface Scope {
  column: SummaryFilterColumn | null;
  values: readonly FilterValue[];
}

/**
 * Where summary_pairs hold the keys of a grouping: the values of `groupColumn` (those of the whole
 * snapshot: `groupValues`) within each of `filterValues` of `filterColumn`, keyed by `by`.
 */
interface PairSource {
  filterColumn: SummaryFilterColumn;
  filterValues: readonly FilterValue[];
  groupColumn: SummaryFilterColumn;
  groupValues: readonly FilterValue[];
  by: readonly SummaryFilterColumn[];
  /** The most pairs of values it holds in any range (those of the whole snapshot, or a bound of them). */
  pairs: number;
}

/** Values in reads of at most `size` (at least one), null alone first (`IS NULL` beside a list would walk every value of the column). */
function readsOf(values: readonly FilterValue[], size: number): FilterValue[][] {
  const listed = values.filter((value) => value !== null);
  const per = Math.max(1, size);
  const reads: FilterValue[][] = listed.length < values.length ? [[null]] : [];
  for (let at = 0; at < listed.length; at += per) reads.push(listed.slice(at, at + per));
  return reads;
}

/** A created_at range as `YYYY-MM-DD` days, from inclusive, to exclusive (null: unbounded). */
interface DayRange {
  from: string | null;
  to: string | null;
}

const MIDNIGHT = 'T00:00:00';

function isSummarised(name: string): name is SummaryFilterColumn {
  return (SUMMARY_FILTER_COLUMNS as readonly string[]).includes(name);
}

/** The scope of the filters; null when they select rows in a way the summaries do not keep. */
function scopeOf(filters: ListFilters): Scope | null {
  if (filters.bbox !== null || hasRowFilters(filters)) return null;
  const given = EQUALITY_FILTERS.filter((name) => filters[name] !== null);
  const [name, ...more] = given;
  if (name === undefined) return { column: null, values: [] };
  const values = filters[name];
  if (more.length > 0 || values === null || !isSummarised(name)) return null;
  return { column: name, values };
}

/** The range as days when both bounds are midnights; null otherwise. */
function dayRangeOf(filters: ListFilters): DayRange | null {
  const day = (bound: string | null): string | null | undefined => {
    if (bound === null) return null;
    return bound.length === 10 + MIDNIGHT.length && bound.endsWith(MIDNIGHT) ? bound.slice(0, 10) : undefined;
  };
  const from = day(filters.created_from);
  const to = day(filters.created_to);
  return from === undefined || to === undefined ? null : { from, to };
}

const isMonday = (day: string): boolean => new Date(`${day}T00:00:00Z`).getUTCDay() === 1;
const isFirstOfMonth = (day: string): boolean => day.endsWith('-01');
const isFirstOfYear = (day: string): boolean => day.endsWith('-01-01');

/** The first day of the bucket (ISO week or month) holding `day`, or of the next one. */
function bucketStart(day: string, unit: 'week' | 'month', which: 'on or before' | 'on or after'): string {
  if (unit === 'month') {
    if (isFirstOfMonth(day) || which === 'on or before') return `${day.slice(0, 7)}-01`;
    const next = new Date(`${day.slice(0, 7)}-01T00:00:00Z`);
    next.setUTCMonth(next.getUTCMonth() + 1);
    return next.toISOString().slice(0, 10);
  }
  const weekday = new Date(`${day}T00:00:00Z`).getUTCDay() || 7;
  if (weekday === 1) return day;
  const shift = which === 'on or before' ? 1 - weekday : 8 - weekday;
  return new Date(Date.parse(`${day}T00:00:00Z`) + shift * 86_400_000).toISOString().slice(0, 10);
}

/** A created_at range cut where its whole weeks or months begin and end (splitAtWholeBuckets). */
export interface WholeBucketSplit {
  /** The filters narrowed to the buckets the range holds entirely: the summaries answer them. */
  whole: ListFilters;
  /** The filters narrowed to the days before, and after, the whole buckets (null: none). */
  before: ListFilters | null;
  after: ListFilters | null;
  /** The first day of the whole buckets and the day after them, `YYYY-MM-DD` (null: unbounded). */
  wholeFrom: string | null;
  wholeTo: string | null;
}

/**
 * A created_at range that cuts weeks or months, split so that the summaries answer its whole buckets
 * and only the days of the one or two buckets it cuts are read from the rows (their medians need
 * those rows: a walk of a few days, not of the range). Null when the bounds are not midnights, when
 * the range cuts no bucket, or when no bucket is whole inside it.
 */
export function splitAtWholeBuckets(filters: ListFilters, unit: SummaryUnit): WholeBucketSplit | null {
  const range = dayRangeOf(filters);
  if (range === null || unit === 'day') return null;
  const wholeFrom = range.from === null ? null : bucketStart(range.from, unit, 'on or after');
  const wholeTo = range.to === null ? null : bucketStart(range.to, unit, 'on or before');
  if (wholeFrom === range.from && wholeTo === range.to) return null;
  if (wholeFrom !== null && wholeTo !== null && wholeFrom >= wholeTo) return null;
  const midnight = (day: string | null): string | null => (day === null ? null : `${day}${MIDNIGHT}`);
  return {
    whole: { ...filters, created_from: midnight(wholeFrom), created_to: midnight(wholeTo) },
    before: wholeFrom === range.from ? null : { ...filters, created_to: midnight(wholeFrom) },
    after: wholeTo === range.to ? null : { ...filters, created_from: midnight(wholeTo) },
    wholeFrom,
    wholeTo,
  };
}

/**
 * The range in the unit's bucket keys (from inclusive, to exclusive; both compare as text), or null
 * when a bound falls inside a bucket.
 */
function bucketRangeOf(range: DayRange, unit: SummaryBucketUnit): DayRange | null {
  const bounds = [range.from, range.to].filter((day): day is string => day !== null);
  if (unit === 'day') return range;
  if (unit === 'year') {
    if (!bounds.every(isFirstOfYear)) return null;
    return { from: range.from?.slice(0, 4) ?? null, to: range.to?.slice(0, 4) ?? null };
  }
  if (unit === 'week') {
    if (!bounds.every(isMonday)) return null;
    return { from: range.from === null ? null : isoWeekOf(range.from), to: range.to === null ? null : isoWeekOf(range.to) };
  }
  if (!bounds.every(isFirstOfMonth)) return null;
  return { from: range.from?.slice(0, 7) ?? null, to: range.to?.slice(0, 7) ?? null };
}

/** Buckets per read of periodBuckets (a thousand rows read in about a millisecond). */
const BUCKETS_PER_READ = 1024;

/**
 * When the groups read summary_pairs rather than scan: when the rows they would read are at most
 * `readAnyway` (an answer of that many rows costs about as much to send), or when, times
 * `scannedRowsPerRow`, they are fewer than the requests of the range; else the scan answers, off the
 * event loop. A row of summary_pairs read as an array costs the event loop a few microseconds more
 * than the scan's answer of the same groups (whose items the loop makes too), the time a walk thread
 * scans about 40 rows: the pairs are read only when they cost the loop at most about a third of the
 * scan's CPU, as the loop serves every request and its work outranks the walk threads' (bench/README.md,
 * "Figures behind source comments").
 */
export interface PairReadCosts {
  readAnyway: number;
  scannedRowsPerRow: number;
}

const PAIR_READ_COSTS: PairReadCosts = { readAnyway: 20_000, scannedRowsPerRow: 100 };

/** SQL conditions with their parameters, ANDed. */
class Conditions {
  readonly sql: string[] = [];
  readonly parameters: SqlParameter[] = [];

  constructor(private readonly dialect: QueryDialect) {}

  add(sql: string, ...parameters: SqlParameter[]): this {
    this.sql.push(sql);
    this.parameters.push(...parameters);
    return this;
  }

  /**
   * `column` is one of the values (kept as text; null is the rows without a value): several values
   * as filter-sql.ts's oneOfList writes them, so the text depends on a fixed set of counts only.
   */
  oneOf(column: string, values: readonly FilterValue[]): this {
    const texts = values.filter((value) => value !== null).map(String);
    const withNull = texts.length < values.length;
    if (texts.length === 0) return this.add(`${column} IS NULL`);
    const { sql, parameters } = texts.length === 1 ? { sql: `${column} = ?`, parameters: texts } : oneOfList(column, texts, this.dialect, FILTER_VALUES_MAXIMUM);
    return this.add(withNull ? `(${sql} OR ${column} IS NULL)` : sql, ...parameters);
  }

  /** `column` within the bucket range. */
  within(column: string, range: DayRange): this {
    if (range.from !== null) this.add(`${column} >= ?`, range.from);
    if (range.to !== null) this.add(`${column} < ?`, range.to);
    return this;
  }

  get where(): string {
    return this.sql.join(' AND ');
  }
}

/** A facet value read back from its text: council_district is an integer. */
function facetValueOf(column: SummaryFacetColumn, text: string | null): FilterValue {
  return text !== null && column === 'council_district' ? Number(text) : text;
}

/**
 * SQLite's "no such table" or "no such column", or PostgreSQL's undefined_table (42P01) or
 * undefined_column (42703), however wrapped (error causes): a snapshot built before the summaries, or
 * before the columns a groups answer reads.
 */
function isMissingSummary(error: unknown): boolean {
  for (let cause: unknown = error; cause instanceof Error; cause = cause.cause) {
    const code = (cause as { code?: unknown }).code;
    if (/no such (table|column)/i.test(cause.message) || code === '42P01' || code === '42703') return true;
  }
  return false;
}

/** The measures that add up over a key's periods, so that the order of the keys follows from its buckets. */
const SUMMED_MEASURES: ReadonlySet<GroupMeasure> = new Set(['opened', 'closed', 'closed_within_14_days', 'share_closed_within_14_days']);

/** A bucket of summary_buckets with what a group shows. */
interface GroupBucket {
  bucket: string;
  opened: number;
  closed: number;
  closedWithin: number;
  lowMiddle: number | null;
  highMiddle: number | null;
  p90: number | null;
}

/** The numbers of a bucket as summary_buckets and summary_pairs hold them, named as GroupBucket names them. */
const BUCKET_NUMBERS = 'opened, closed, closed_within_14_days AS "closedWithin", low_middle AS "lowMiddle", high_middle AS "highMiddle", p90_days_to_close AS p90';

/** A bucket's columns in GroupBucket's order, for reads of arrays (BucketRow). */
const BUCKET_ROW = 'bucket, opened, closed, closed_within_14_days, low_middle, high_middle, p90_days_to_close';

/** A bucket read as an array of BUCKET_ROW's columns, after the columns that key it. */
type BucketRow = [bucket: string, opened: number, closed: number, closedWithin: number, lowMiddle: number | null, highMiddle: number | null, p90: number | null];

/** The GroupBucket of the BUCKET_ROW columns of `row` from index `at` on. */
function groupBucketOf(row: readonly unknown[], at: number): GroupBucket {
  const field = <I extends number>(index: I) => row[at + index] as BucketRow[I];
  return { bucket: field(0), opened: field(1), closed: field(2), closedWithin: field(3), lowMiddle: field(4), highMiddle: field(5), p90: field(6) };
}

/** A key of a grouping with its buckets in time order, and its number of the order's measure over them. */
interface GroupKey {
  key: Record<string, FilterValue>;
  buckets: GroupBucket[];
  measure: number | null;
}

function groupNumbersOf(bucket: GroupBucket): GroupNumbers {
  return {
    opened: bucket.opened,
    closed: bucket.closed,
    closed_within_14_days: bucket.closedWithin,
    share_closed_within_14_days: shareClosedWithin(bucket.opened, bucket.closedWithin),
    median_days_to_close: bucket.lowMiddle === null ? null : medianOfMiddles(bucket.lowMiddle, bucket.highMiddle ?? bucket.lowMiddle),
    p90_days_to_close: bucket.p90,
  };
}

/** A key's number of `measure` over its buckets (they add up); null when none. */
function summedMeasure(measure: GroupMeasure, buckets: readonly GroupBucket[]): number | null {
  let opened = 0;
  let closed = 0;
  let within = 0;
  for (const bucket of buckets) {
    opened += bucket.opened;
    closed += bucket.closed;
    within += bucket.closedWithin;
  }
  if (measure === 'closed') return closed;
  if (measure === 'closed_within_14_days') return within;
  if (measure === 'share_closed_within_14_days') return shareClosedWithin(opened, within);
  return opened;
}

export class AggregateSummaries {
  constructor(
    private readonly read: SummaryReader,
    private readonly dialect: QueryDialect,
    private readonly pairReads = PAIR_READ_COSTS,
  ) {}

  /**
   * Rows of a summary query; null when the snapshot has no summary tables (then the rows answer). Any
   * other failure (a database that does not answer) is the answer's: falling back to the rows would
   * only wait on the same database a second time.
   */
  private async rows<T>(sql: string, parameters: readonly SqlParameter[], shape: SummaryRowShape = 'objects'): Promise<T[] | null> {
    try {
      return (await this.read(sql, parameters, shape)) as T[];
    } catch (error) {
      if (isMissingSummary(error)) return null;
      throw error;
    }
  }

  async count(filters: ListFilters): Promise<number | null> {
    const scope = scopeOf(filters);
    if (scope === null) return null;
    const conditions = new Conditions(this.dialect);
    let sql: string;
    if (filters.created_from === null && filters.created_to === null) {
      // The whole snapshot's facet of a column that is not the scope's: its counts add up to the scope's rows.
      const facet = scope.column === 'status' ? 'borough' : 'status';
      this.scopeConditions(conditions, scope).add('facet_column = ?', facet).add('period = ?', WHOLE_SNAPSHOT_PERIOD);
      sql = `SELECT CAST(coalesce(sum(requests), 0) AS INTEGER) AS count FROM summary_facets WHERE ${conditions.where}`;
    } else {
      const range = dayRangeOf(filters);
      if (range === null) return null;
      this.scopeConditions(conditions, scope).add('unit = ?', 'day').within('bucket', range);
      sql = `SELECT CAST(coalesce(sum(opened), 0) AS INTEGER) AS count FROM summary_buckets WHERE ${conditions.where}`;
    }
    const rows = await this.rows<{ count: number }>(sql, conditions.parameters);
    return rows === null ? null : (rows[0]?.count ?? 0);
  }

  /** Each value of the column among the scope's rows, largest first, then by value, null last. */
  async facet(column: FacetColumn, filters: ListFilters): Promise<ValueCount[] | null> {
    const scope = scopeOf(filters);
    if (scope === null || !(SUMMARY_FACET_COLUMNS as readonly string[]).includes(column)) return null;
    const facet = column;
    const conditions = new Conditions(this.dialect);
    if (scope.column === facet) {
      // Scoped by its own column: the values asked for, counted among every row.
      conditions.add('filter_column = ?', ALL_ROWS_SCOPE).oneOf('facet_value', scope.values);
    } else this.scopeConditions(conditions, scope);
    conditions.add('facet_column = ?', facet);
    if (filters.created_from === null && filters.created_to === null) conditions.add('period = ?', WHOLE_SNAPSHOT_PERIOD);
    else {
      // Monthly facets are kept for every row only (per value of another column they would be some 30 rows a month per row of the facet).
      if (scope.column !== null && scope.column !== facet) return null;
      const days = dayRangeOf(filters);
      const months = days === null ? null : bucketRangeOf(days, 'month');
      if (months === null) return null;
      conditions.add('period <> ?', WHOLE_SNAPSHOT_PERIOD).within('period', months);
    }
    const rows = await this.rows<{ value: string | null; count: number }>(
      `SELECT facet_value AS value, CAST(sum(requests) AS INTEGER) AS count FROM summary_facets WHERE ${conditions.where} GROUP BY facet_value`,
      conditions.parameters,
    );
    if (rows === null) return null;
    return rows
      .filter((row) => row.count > 0)
      .map((row) => ({ value: facetValueOf(facet, row.value), count: row.count }))
      .sort((a, b) => b.count - a.count || compareFilterValues(a.value, b.value));
  }

  /** The numbers of each bucket of the unit that has requests in scope (the others are absent). */
  async periodBuckets(filters: ListFilters, unit: SummaryUnit, slice = new TimeSlice()): Promise<Map<string, BucketSummary> | null> {
    const scope = scopeOf(filters);
    if (scope === null || (scope.column !== null && scope.values.length !== 1)) return null;
    const days = dayRangeOf(filters);
    const buckets = days === null ? null : bucketRangeOf(days, unit);
    if (buckets === null) return null;
    const rows = await this.bucketsOf<{ bucket: string } & BucketSummary>(
      'bucket, opened, closed_within_14_days AS "closedWithin", low_middle AS "lowMiddle", high_middle AS "highMiddle"',
      'summary_buckets',
      (conditions) => this.scopeConditions(conditions, scope),
      unit,
      buckets,
      slice,
    );
    if (rows === null) return null;
    return new Map(rows.map(({ bucket, opened, closedWithin, lowMiddle, highMiddle }) => [bucket, { opened, closedWithin, lowMiddle, highMiddle }]));
  }

  /**
   * The groups of one or two summarised columns per day, ISO week, month or year, when the summaries
   * hold the answer: null otherwise (the rows answer). Every key is kept, so no group is left out
   * (`others` is empty): the keys are at most `limit`.
   * - One column: its buckets in summary_buckets (no filter, or a filter on the column itself); per
   *   month or year, also within one value of another column (summary_pairs).
   * - Two columns, per month or year: the pairs of their values in summary_pairs (no filter, or a filter
   *   of any values on either of them).
   */
  async groups(filters: ListFilters, query: GroupQuery, slice = new TimeSlice()): Promise<GroupsRecord | null> {
    const unit = SUMMARY_BUCKET_UNITS.find((name) => name === query.period);
    if (unit === undefined || !SUMMED_MEASURES.has(query.order) || !query.by.every(isSummarised)) return null;
    const by = query.by;
    const scope = scopeOf(filters);
    const days = dayRangeOf(filters);
    const range = days === null ? null : bucketRangeOf(days, unit);
    if (scope === null || range === null) return null;
    const [column, second] = by;
    if (column === undefined) return null;
    const inPairs = (SUMMARY_PAIR_UNITS as readonly string[]).includes(unit);
    let keys: GroupKey[] | null;
    if (second !== undefined) {
      if (!inPairs || (scope.column !== null && !by.includes(scope.column))) return null;
      const firstValues = await this.valuesOf(column);
      const secondValues = await this.valuesOf(second);
      if (firstValues === null || secondValues === null) return null;
      // Read from the filtered column's side (its values come first in the index), else from the side of
      // fewer values: fewer statements, each of more rows.
      const filterColumn = scope.column ?? (firstValues.length <= secondValues.length ? column : second);
      const [filterValues, groupValues] = filterColumn === column ? [firstValues, secondValues] : [secondValues, firstValues];
      const groupColumn = filterColumn === column ? second : column;
      const within = scope.column === null ? filterValues : scope.values;
      // The pairs of the whole snapshot are at least those of any range: past the limit, the scan answers without a read here.
      const pairs = await this.pairsInSnapshot(filterColumn, within, groupColumn);
      if (pairs === null || pairs > query.limit) return null;
      keys = await this.pairKeys({ filterColumn, filterValues: within, groupColumn, groupValues, by, pairs }, unit, range, query, slice);
    } else if (scope.column !== null && scope.column !== column) {
      // A median does not add up over the filter's values: one value only.
      if (scope.values.length !== 1 || !inPairs) return null;
      const groupValues = await this.valuesOf(column);
      if (groupValues === null || groupValues.length > query.limit) return null;
      keys = await this.pairKeys({ filterColumn: scope.column, filterValues: scope.values, groupColumn: column, groupValues, by, pairs: groupValues.length }, unit, range, query, slice);
    } else {
      keys = await this.columnKeys(column, scope, unit, range, query, slice);
    }
    if (keys === null) return null;
    keys.sort((a, b) => {
      if (a.measure !== b.measure) {
        if (a.measure === null) return 1;
        if (b.measure === null) return -1;
        return query.descending ? b.measure - a.measure : a.measure - b.measure;
      }
      return by.reduce((order, name) => order || compareFilterValues(a.key[name] ?? null, b.key[name] ?? null), 0);
    });
    const items: GroupsRecord['items'] = [];
    for (const { key, buckets } of keys) {
      for (const bucket of buckets) items.push({ key, period: bucket.bucket, ...groupNumbersOf(bucket) });
      await slice.pause();
    }
    return { items, others: [] };
  }

  /** The keys of one column from its scope's buckets in summary_buckets (null: not held, or more values than `limit`). */
  private async columnKeys(column: SummaryFilterColumn, scope: Scope, unit: SummaryBucketUnit, range: DayRange, query: GroupQuery, slice: TimeSlice): Promise<GroupKey[] | null> {
    const values = scope.column === column ? scope.values : await this.valuesOf(column);
    if (values === null || values.length > query.limit || !(await this.holdsUnit(unit))) return null;
    // Read however many rows: leaving the large ones to the scan, as PairReadCosts does for the pairs, made the p99 worse (docs/decisions.md).
    const periods = await this.periodsWithin(unit, range);
    if (periods === null) return null;
    const keys: GroupKey[] = [];
    // A value has at most one bucket per period: a read of several values holds at most BUCKETS_PER_READ rows.
    const perRead = Math.max(1, Math.floor(BUCKETS_PER_READ / Math.max(1, periods.length)));
    for (let at = 0; at < values.length; at += perRead) {
      const read = values.slice(at, at + perRead);
      const found = await this.columnBucketsOf(column, read, unit, range, slice);
      if (found === null) return null;
      for (const value of read) {
        const buckets = found.get(value) ?? [];
        if (buckets.length > 0) keys.push({ key: { [column]: value }, buckets, measure: summedMeasure(query.order, buckets) });
      }
      await slice.pause();
    }
    return keys;
  }

  /**
   * The keys of the pairs of values in summary_pairs: each value of the group column within each of
   * the filter values, keyed by the columns of `by` (the filter column is one of them, or the one value
   * of a filter on another column). Null when the snapshot has no summary_pairs, or when the pairs found
   * pass `limit` (the keys left out would need their rows).
   *
   * Read in steps of at most about BUCKETS_PER_READ rows along the index (filter value, group value,
   * bucket): a filter value holds at most a row per value of the group column and period, so a step
   * reads several filter values with every group value, or one filter value with as many group values
   * as fit (a null value alone: `IS NULL` beside a list would walk every value of the column).
   */
  private async pairKeys(source: PairSource, unit: SummaryBucketUnit, range: DayRange, query: GroupQuery, slice: TimeSlice): Promise<GroupKey[] | null> {
    const { filterColumn, filterValues, groupColumn, groupValues, by } = source;
    const periods = await this.periodsWithin(unit, range);
    if (periods === null) return null;
    const periodCount = Math.max(1, periods.length);
    const rowsPerValue = Math.max(1, groupValues.length) * periodCount;
    const requests = periods.reduce((sum, period) => sum + period.opened, 0);
    const pairRows = source.pairs * periodCount;
    if (pairRows > this.pairReads.readAnyway && pairRows * this.pairReads.scannedRowsPerRow > requests) return null;
    const steps: { filterValues: readonly FilterValue[]; groupValues: readonly FilterValue[] | null }[] = [];
    if (rowsPerValue <= BUCKETS_PER_READ) {
      for (const some of readsOf(filterValues, Math.floor(BUCKETS_PER_READ / rowsPerValue))) steps.push({ filterValues: some, groupValues: null });
    } else {
      const groupReads = readsOf(groupValues, Math.max(1, Math.floor(BUCKETS_PER_READ / periodCount)));
      for (const value of filterValues) for (const some of groupReads) steps.push({ filterValues: [value], groupValues: some });
    }
    const keyed = new Map<FilterValue, Map<FilterValue, GroupBucket[]>>();
    let keyCount = 0;
    for (const step of steps) {
      const conditions = new Conditions(this.dialect).add('filter_column = ?', filterColumn).oneOf('filter_value', step.filterValues).add('group_column = ?', groupColumn);
      if (step.groupValues !== null) conditions.oneOf('group_value', step.groupValues);
      conditions.add('unit = ?', unit).within('bucket', range);
      // In the index's order (filter value, group value, bucket): no sort.
      const rows = await this.rows<[filterValue: string | null, groupValue: string | null, ...BucketRow]>(
        `SELECT filter_value, group_value, ${BUCKET_ROW} FROM summary_pairs WHERE ${conditions.where} ORDER BY filter_value, group_value, bucket`,
        conditions.parameters,
        'arrays',
      );
      if (rows === null) return null;
      for (const row of rows) {
        const within = facetValueOf(filterColumn, row[0]);
        let ofFilter = keyed.get(within);
        if (ofFilter === undefined) keyed.set(within, (ofFilter = new Map<FilterValue, GroupBucket[]>()));
        const value = facetValueOf(groupColumn, row[1]);
        const bucket = groupBucketOf(row, 2);
        const buckets = ofFilter.get(value);
        if (buckets !== undefined) buckets.push(bucket);
        else if (++keyCount > query.limit) return null;
        else ofFilter.set(value, [bucket]);
      }
      await slice.pause();
    }
    const keys: GroupKey[] = [];
    for (const [within, ofFilter] of keyed) {
      for (const [value, buckets] of ofFilter) {
        const key: Record<string, FilterValue> = {};
        for (const name of by) key[name] = name === groupColumn ? value : within;
        keys.push({ key, buckets, measure: summedMeasure(query.order, buckets) });
      }
    }
    return keys;
  }

  /**
   * The buckets of each of a few values of the column in summary_buckets, in bucket order (null without
   * summaries): one value's read in steps (years of days), several values' in one statement (a round
   * trip per value costs more than its rows on PostgreSQL: 180 zip codes).
   */
  private async columnBucketsOf(column: SummaryFilterColumn, values: readonly FilterValue[], unit: SummaryBucketUnit, range: DayRange, slice: TimeSlice): Promise<Map<FilterValue, GroupBucket[]> | null> {
    const found = new Map<FilterValue, GroupBucket[]>();
    // One value (null among them: `IS NULL` beside a list would walk every value of the column), in steps.
    const alone = values.length === 1 ? values : values.filter((value) => value === null);
    for (const value of alone) {
      const buckets = await this.bucketsOf<GroupBucket>(`bucket, ${BUCKET_NUMBERS}`, 'summary_buckets', (conditions) => this.scopeConditions(conditions, { column, values: [value] }), unit, range, slice);
      if (buckets === null) return null;
      found.set(value, buckets);
    }
    const listed = values.length === 1 ? [] : values.filter((value) => value !== null);
    if (listed.length === 0) return found;
    // In the index's order (value, bucket): no sort.
    const conditions = this.scopeConditions(new Conditions(this.dialect), { column, values: listed }).add('unit = ?', unit).within('bucket', range);
    const rows = await this.rows<[value: string | null, ...BucketRow]>(
      `SELECT filter_value, ${BUCKET_ROW} FROM summary_buckets WHERE ${conditions.where} ORDER BY filter_value, bucket`,
      conditions.parameters,
      'arrays',
    );
    if (rows === null) return null;
    for (const row of rows) {
      const key = facetValueOf(column, row[0]);
      const bucket = groupBucketOf(row, 1);
      const ofValue = found.get(key);
      if (ofValue === undefined) found.set(key, [bucket]);
      else ofValue.push(bucket);
    }
    return found;
  }

  /**
   * The pairs of values of two columns, among some values of the first, in the whole snapshot (the
   * values of the second in the whole-snapshot facets of each value's scope); null without summaries.
   */
  private async pairsInSnapshot(filterColumn: SummaryFilterColumn, filterValues: readonly FilterValue[], groupColumn: SummaryFilterColumn): Promise<number | null> {
    const conditions = new Conditions(this.dialect).add('filter_column = ?', filterColumn).add('facet_column = ?', groupColumn).add('period = ?', WHOLE_SNAPSHOT_PERIOD).oneOf('filter_value', filterValues).add('requests > 0');
    const rows = await this.rows<{ pairs: number }>(`SELECT CAST(count(*) AS INTEGER) AS pairs FROM summary_facets WHERE ${conditions.where}`, conditions.parameters);
    return rows === null ? null : (rows[0]?.pairs ?? 0);
  }

  /** The periods of the unit within the range that hold requests (those of every row's scope), in order, with their requests; null without summaries. */
  private async periodsWithin(unit: SummaryBucketUnit, range: DayRange): Promise<{ bucket: string; opened: number }[] | null> {
    const conditions = new Conditions(this.dialect).add('unit = ?', unit).add('filter_column = ?', ALL_ROWS_SCOPE).within('bucket', range);
    return this.rows<{ bucket: string; opened: number }>(`SELECT bucket, opened FROM summary_buckets WHERE ${conditions.where} ORDER BY bucket`, conditions.parameters);
  }

  /**
   * Whether summary_buckets hold the unit: a snapshot of schema 6 has no years (and one without rows
   * none of any unit: its groups, none, are the scan's).
   */
  private async holdsUnit(unit: SummaryBucketUnit): Promise<boolean> {
    const conditions = new Conditions(this.dialect).add('unit = ?', unit).add('filter_column = ?', ALL_ROWS_SCOPE);
    const rows = await this.rows<{ bucket: string }>(`SELECT bucket FROM summary_buckets WHERE ${conditions.where} LIMIT 1`, conditions.parameters);
    return rows !== null && rows.length > 0;
  }

  /** Every value of a summarised column in the snapshot (its whole-snapshot facet); null without summaries. */
  private async valuesOf(column: SummaryFilterColumn): Promise<FilterValue[] | null> {
    const conditions = new Conditions(this.dialect).add('filter_column = ?', ALL_ROWS_SCOPE).add('facet_column = ?', column).add('period = ?', WHOLE_SNAPSHOT_PERIOD);
    const rows = await this.rows<{ value: string | null }>(`SELECT facet_value AS value FROM summary_facets WHERE ${conditions.where}`, conditions.parameters);
    return rows === null ? null : rows.map((row) => facetValueOf(column, row.value));
  }

  /**
   * The `columns` of the buckets of the unit within the range that `select` selects in `table`, in
   * bucket order (null without summaries): read BUCKETS_PER_READ at a time, giving way between reads
   * (years of days are thousands of buckets).
   */
  private async bucketsOf<T extends { bucket: string }>(
    columns: string,
    table: 'summary_buckets' | 'summary_pairs',
    select: (conditions: Conditions) => Conditions,
    unit: SummaryBucketUnit,
    range: DayRange,
    slice: TimeSlice,
  ): Promise<T[] | null> {
    const found: T[] = [];
    let after: string | null = null;
    for (;;) {
      if (after !== null) await slice.pause();
      const conditions = select(new Conditions(this.dialect)).add('unit = ?', unit).within('bucket', range);
      if (after !== null) conditions.add('bucket > ?', after);
      const rows: T[] | null = await this.rows<T>(`SELECT ${columns} FROM ${table} WHERE ${conditions.where} ORDER BY bucket LIMIT ${BUCKETS_PER_READ}`, conditions.parameters);
      if (rows === null) return null;
      found.push(...rows);
      if (rows.length < BUCKETS_PER_READ) return found;
      after = (rows.at(-1) as T).bucket;
    }
  }

  private scopeConditions(conditions: Conditions, scope: Scope): Conditions {
    if (scope.column === null) return conditions.add('filter_column = ?', ALL_ROWS_SCOPE);
    return conditions.add('filter_column = ?', scope.column).oneOf('filter_value', scope.values);
  }
}

/** Where the numbers of a period come from: the summaries' whole buckets, the rows' buckets (a store). */
export type PeriodSources = Pick<ServiceRequestStore, 'periodSummaries' | 'bucketsFromRows'>;

/**
 * The numbers per day, ISO week or month of the matching requests, over the days of the period the
 * filters leave: from the summaries when they hold every bucket; when a range cuts weeks or months,
 * its whole buckets from the summaries and the cut ones from their days' rows; else from the rows.
 */
export async function periodNumbersOf(
  sources: PeriodSources,
  filters: ListFilters,
  unit: SummaryUnit,
  period: Period,
): Promise<(PeriodNumbers & { key: string })[]> {
  // Years of days: every step gives way to other requests once it has run a few milliseconds.
  const slice = new TimeSlice();
  const days = statDays(period, filters);
  const numbers = async (buckets: ReadonlyMap<string, BucketSummary>) => {
    await slice.pause();
    return bucketNumbers(days, buckets, period.snapshotDate, BUCKET_KEY_OF[unit], slice);
  };
  const summaries = await sources.periodSummaries(filters, unit);
  if (summaries !== null) return numbers(summaries);
  const split = splitAtWholeBuckets(filters, unit);
  const whole = split === null ? null : await sources.periodSummaries(split.whole, unit);
  if (split === null || whole === null) return numbers(await sources.bucketsFromRows(filters, unit));
  // The cut buckets lie before and after the whole ones: their keys are not among the summaries'.
  const buckets = new Map(whole);
  for (const edge of [split.before, split.after]) {
    if (edge !== null) for (const [key, bucket] of await sources.bucketsFromRows(edge, unit)) buckets.set(key, bucket);
  }
  return numbers(buckets);
}
