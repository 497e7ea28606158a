/**
 * The aggregate summaries of a snapshot: two tables written at ingest, once the rows are loaded, so
 * that count, facets, the daily, weekly and monthly statistics and the groups of one column per day,
 * week or month answer without walking the rows for no filter, one equality filter (any list of its
 * values), and a created_at range alone or with one equality filter
 * (src/services/requests/engine/summary-answers.ts reads them).
 *
 * - summary_buckets: per unit (day, ISO week, month, year), bucket, and scope (every row: filter_column '',
 *   or one value of one filter column, NULL for the rows without one): the requests opened, those closed
 *   (with a days_to_close), those closed within 14 days, the two middle days_to_close of the scope's
 *   requests that have one (equal when their number is odd) and their 90th percentile (nearest rank).
 *   The exact median is the mean of the two, rounded as medianOf rounds it (medianOfMiddles); a median
 *   does not add up over several values, so a list of values answers from the rows. A filter column's
 *   scope per bucket is also the group of its value in that period (`/v1/stats/groups` by that column).
 * - summary_pairs: per month and year, per value of one filter column and value of another (each
 *   ordered pair of filter columns), the same numbers as summary_buckets: the groups by one column per
 *   month or year with one value of another column as the filter (a median does not add up over the
 *   values of the filter, so a list of them answers from the rows). Per day or week they would hold
 *   some seven (weeks: two) rows for every request, more than the rows themselves; per month, about one.
 * - summary_facets: for the whole snapshot (period ''), per scope and per facet column, each facet value
 *   with its number of requests; per month (period 'YYYY-MM'), the same for the scope of every row only
 *   (per month and value of another column, it would hold about three rows for every ten requests).
 *   Counts add up over values and months, so any list of values, and any range of whole months without
 *   a filter on another column, answers from it. The facet of a column scoped by the same column is the
 *   unscoped facet restricted to the values, so it is not stored.
 *
 * They are computed in one pass over the rows in created_at order, as the snapshot command writes them
 * (or read back from a snapshot loaded without them: sqlite-aggregate-summaries.ts and
 * postgres-aggregate-summaries.ts): a bucket is written when the next one starts, so memory holds one
 * year of rows at most (44 bytes a row: about 110 MB for the 2.5 million a year of a 40-million
 * history). One SQL GROUP BY (or window, for the medians) per unit, scope and pair of columns would
 * sort every row some sixty times.
 * Values are kept as text (council_district included): the readers turn them back.
 */
import { CLOSED_WITHIN_DAYS, p90Rank } from './snapshot-aggregates.js';
import { FILTERED_COLUMNS, tableName, type FilteredColumn, type SqlDialect } from './snapshot-schema.js';
import type { ServiceRequest } from './service-request.js';

/** The equality filters of the API that the summaries cover, each as its own scope: every one. */
export const SUMMARY_FILTER_COLUMNS = FILTERED_COLUMNS;
export type SummaryFilterColumn = FilteredColumn;

/** The columns whose facets the summaries hold. */
export const SUMMARY_FACET_COLUMNS = [...SUMMARY_FILTER_COLUMNS, 'location_type'] as const;
export type SummaryFacetColumn = (typeof SUMMARY_FACET_COLUMNS)[number];

/** The units of the statistics (`/v1/stats/daily`, `weekly`, `monthly`) that the summaries hold. */
export const SUMMARY_UNITS = ['day', 'week', 'month'] as const;
export type SummaryUnit = (typeof SUMMARY_UNITS)[number];
/** The units of summary_buckets: the statistics' and the year (a period of `/v1/stats/groups`). */
export const SUMMARY_BUCKET_UNITS = [...SUMMARY_UNITS, 'year'] as const;
export type SummaryBucketUnit = (typeof SUMMARY_BUCKET_UNITS)[number];

/** filter_column of the scope of every row. */
export const ALL_ROWS_SCOPE = '';
/** period of the facets of the whole snapshot. */
export const WHOLE_SNAPSHOT_PERIOD = '';

/** The units of summary_pairs. */
export const SUMMARY_PAIR_UNITS = ['month', 'year'] as const satisfies readonly SummaryBucketUnit[];

export const SUMMARY_TABLES = ['summary_buckets', 'summary_pairs', 'summary_facets'] as const;

export const SUMMARY_BUCKET_COLUMNS = ['unit', 'bucket', 'filter_column', 'filter_value', 'opened', 'closed', 'closed_within_14_days', 'low_middle', 'high_middle', 'p90_days_to_close'] as const;
export const SUMMARY_PAIR_COLUMNS = ['unit', 'bucket', 'filter_column', 'filter_value', 'group_column', 'group_value', 'opened', 'closed', 'closed_within_14_days', 'low_middle', 'high_middle', 'p90_days_to_close'] as const;
export const SUMMARY_FACET_TABLE_COLUMNS = ['period', 'filter_column', 'filter_value', 'facet_column', 'facet_value', 'requests'] as const;

/** One row of a summary table, its columns in the order of SUMMARY_BUCKET_COLUMNS, SUMMARY_PAIR_COLUMNS or SUMMARY_FACET_TABLE_COLUMNS. */
export type SummaryRow = (string | number | null)[];

/**
 * What the pass reads of each row, as an array: created_at, days_to_close, then the facet columns as
 * text (`summarySourceColumns`).
 */
export type SummarySourceRow = [createdAt: string, daysToClose: number | null, ...values: (string | null)[]];

export function summarySourceColumns(): string {
  return ['created_at', 'days_to_close', ...SUMMARY_FACET_COLUMNS.map((column) => `CAST(${column} AS TEXT)`)].join(', ');
}

/** The same values of a request as the snapshot command writes it (the summaries are built as the rows pass). */
export function summarySourceOf(row: ServiceRequest): SummarySourceRow {
  const source: SummarySourceRow = [row.created_at, row.days_to_close];
  for (const column of SUMMARY_FACET_COLUMNS) {
    const value = row[column];
    source.push(value === null ? null : String(value));
  }
  return source;
}

/** Drop (a PostgreSQL reload), create, and (after the rows are in) index the summary tables. */
export function createSummaryTablesSql(dialect: SqlDialect, schema?: string): string[] {
  const table = (name: string): string => tableName(dialect, name, schema);
  const text = dialect === 'postgres' ? 'text COLLATE "C"' : 'TEXT';
  const real = dialect === 'postgres' ? 'double precision' : 'REAL';
  // The numbers of a bucket, in summary_buckets and summary_pairs alike.
  const bucketNumbers = `opened integer NOT NULL,
  closed integer NOT NULL,
  closed_within_14_days integer NOT NULL,
  low_middle ${real},
  high_middle ${real},
  p90_days_to_close ${real}`;
  return [
    ...SUMMARY_TABLES.map((name) => `DROP TABLE IF EXISTS ${table(name)}`),
    `CREATE TABLE ${table('summary_buckets')} (
  unit ${text} NOT NULL,
  bucket ${text} NOT NULL,
  filter_column ${text} NOT NULL,
  filter_value ${text},
  ${bucketNumbers}
)`,
    `CREATE TABLE ${table('summary_pairs')} (
  unit ${text} NOT NULL,
  bucket ${text} NOT NULL,
  filter_column ${text} NOT NULL,
  filter_value ${text},
  group_column ${text} NOT NULL,
  group_value ${text},
  ${bucketNumbers}
)`,
    `CREATE TABLE ${table('summary_facets')} (
  period ${text} NOT NULL,
  filter_column ${text} NOT NULL,
  filter_value ${text},
  facet_column ${text} NOT NULL,
  facet_value ${text},
  requests integer NOT NULL
)`,
  ];
}

/**
 * The indexes hold every column a summary answer reads (covering): the rows of one scope, written
 * bucket by bucket among every other scope's, would otherwise be one table page each (years of days
 * are thousands of pages read for one answer). PostgreSQL reads them with index-only scans once the
 * tables are vacuumed (the snapshot writer vacuums them after its commit).
 */
export function indexSummaryTablesSql(dialect: SqlDialect, schema?: string): string[] {
  const table = (name: string): string => tableName(dialect, name, schema);
  const covering = (key: string, values: string): string => (dialect === 'postgres' ? `(${key}) INCLUDE (${values})` : `(${key}, ${values})`);
  return [
    `CREATE INDEX summary_buckets_scope ON ${table('summary_buckets')} ${covering('unit, filter_column, filter_value, bucket', 'opened, closed, closed_within_14_days, low_middle, high_middle, p90_days_to_close')}`,
    `CREATE INDEX summary_pairs_scope ON ${table('summary_pairs')} ${covering('unit, filter_column, filter_value, group_column, group_value, bucket', 'opened, closed, closed_within_14_days, low_middle, high_middle, p90_days_to_close')}`,
    `CREATE INDEX summary_facets_scope ON ${table('summary_facets')} ${covering('filter_column, facet_column, period, filter_value', 'facet_value, requests')}`,
  ];
}

/** The ISO 8601 week of a day, `YYYY-Www` (the key of the weekly numbers). */
export function isoWeekOf(day: string): string {
  const date = new Date(`${day}T00:00:00Z`);
  const weekday = date.getUTCDay() === 0 ? 7 : date.getUTCDay();
  // The Thursday of the same week decides the year.
  const thursday = new Date(date.getTime() + (4 - weekday) * 86_400_000);
  const year = thursday.getUTCFullYear();
  const week = Math.floor((thursday.getTime() - Date.UTC(year, 0, 1)) / (7 * 86_400_000)) + 1;
  return `${year}-W${String(week).padStart(2, '0')}`;
}

/** The scopes: every row (index 0), then each filter column (index 1 + its position). */
const SCOPE_COUNT = 1 + SUMMARY_FILTER_COLUMNS.length;
const FACET_COUNT = SUMMARY_FACET_COLUMNS.length;
/** The filter columns are the first facet columns: a row's code of filter column f is its facet code f. */
const FILTER_COUNT = SUMMARY_FILTER_COLUMNS.length;
/** Each ordered pair of filter columns [filter, group] (summary_pairs), by position. */
const COLUMN_PAIRS: readonly (readonly [number, number])[] = SUMMARY_FILTER_COLUMNS.flatMap((_, f) =>
  SUMMARY_FILTER_COLUMNS.flatMap((__, g) => (f === g ? [] : [[f, g] as const])),
);

/** Value codes of one column: code -> text (null for the rows without a value). */
class ValueCodes {
  readonly values: (string | null)[] = [];
  private readonly codes = new Map<string | null, number>();

  code(value: string | null): number {
    let code = this.codes.get(value);
    if (code === undefined) {
      code = this.values.length;
      this.values.push(value);
      this.codes.set(value, code);
    }
    return code;
  }
}

/** The rows of one bucket that rowsByDays can order: positions and ranks packed in one double. */
const MAX_BUCKET_ROWS = 2 ** 26;

/**
 * The rows of one open bucket, as numbers: each row's facet-column codes (FACET_COUNT a row) and its
 * days_to_close (NaN for none). The cells of the bucket are computed from them when it closes, so a
 * row costs a few array writes, not an update of every cell it falls in.
 */
class BucketRows {
  key = '';
  size = 0;
  codes = new Int32Array(1024 * FACET_COUNT);
  days = new Float64Array(1024);

  push(codes: Int32Array, daysToClose: number | null): void {
    if (this.size === MAX_BUCKET_ROWS) throw new Error(`The summaries cannot hold a year of more than ${MAX_BUCKET_ROWS} requests.`);
    if (this.size === this.days.length) {
      const codes = new Int32Array(this.codes.length * 2);
      codes.set(this.codes);
      this.codes = codes;
      const days = new Float64Array(this.days.length * 2);
      days.set(this.days);
      this.days = days;
    }
    this.codes.set(codes, this.size * FACET_COUNT);
    this.days[this.size] = daysToClose ?? Number.NaN;
    this.size += 1;
  }
}

/**
 * The summaries of rows taken in created_at order (`add`); rows of the tables come out through
 * `takeBuckets` and `takeFacets` as buckets close, the rest after `finish`.
 */
export class AggregateSummaryBuilder {
  private readonly columns = SUMMARY_FACET_COLUMNS.map(() => new ValueCodes());
  /** Per unit: the open bucket and its rows (the month's are also those the month's facets count). */
  private readonly open = SUMMARY_BUCKET_UNITS.map(() => new BucketRows());
  /** The whole snapshot's facet counts, added at each month's end. */
  private readonly wholeFacets = new FacetCounts();
  private monthKey = '';
  private buckets: SummaryRow[] = [];
  private readonly pairs = new PairRows();
  private facets: SummaryRow[] = [];
  private lastDay = '';
  private lastWeek = '';
  private readonly codes = new Int32Array(FACET_COUNT);

  add(row: SummarySourceRow): void {
    const createdAt = row[0];
    const daysToClose = row[1];
    const day = createdAt.slice(0, 10);
    if (day !== this.lastDay) {
      this.lastDay = day;
      this.lastWeek = isoWeekOf(day);
    }
    const keys = [day, this.lastWeek, day.slice(0, 7), day.slice(0, 4)] as const;
    if (keys[2] !== this.monthKey) this.closeMonth(keys[2]);
    for (let f = 0; f < FACET_COUNT; f += 1) this.codes[f] = (this.columns[f] as ValueCodes).code(row[2 + f] as string | null);
    for (let u = 0; u < SUMMARY_BUCKET_UNITS.length; u += 1) {
      const open = this.open[u] as BucketRows;
      const key = keys[u] as string;
      if (open.key !== key) {
        this.closeBucket(u);
        open.key = key;
        open.size = 0;
      }
      open.push(this.codes, daysToClose);
    }
  }

  /** Closes the open buckets and writes the whole snapshot's facets. */
  finish(): void {
    for (let u = 0; u < SUMMARY_BUCKET_UNITS.length; u += 1) this.closeBucket(u);
    this.closeMonth('');
    this.emitFacets(WHOLE_SNAPSHOT_PERIOD, this.wholeFacets, SCOPE_COUNT);
  }

  takeBuckets(): SummaryRow[] {
    const rows = this.buckets;
    this.buckets = [];
    return rows;
  }

  /** The pair rows of the buckets closed so far, made one at a time as they are iterated (and then dropped). */
  *takePairs(): Generator<SummaryRow> {
    yield* this.pairs.take(this.columns);
  }

  takeFacets(): SummaryRow[] {
    const rows = this.facets;
    this.facets = [];
    return rows;
  }

  /**
   * The bucket's rows per scope and value: requests opened, closed, closed within 14 days, the two
   * middle days_to_close and the 90th percentile. The rows with a days_to_close are put in its order once (ties by position), then
   * walked: the k-th row of a value met in that order holds the k-th smallest of its days.
   */
  private closeBucket(u: number): void {
    const open = this.open[u] as BucketRows;
    if (open.key === '') return;
    const { size, codes, days } = open;
    const cells = Array.from({ length: SCOPE_COUNT }, (_, s) => new ScopeCells(s === 0 ? 1 : (this.columns[s - 1] as ValueCodes).values.length));
    let withDays = 0;
    for (let i = 0; i < size; i += 1) {
      const d = days[i] as number;
      const hasDays = d === d;
      const within = hasDays && d <= CLOSED_WITHIN_DAYS;
      if (hasDays) withDays += 1;
      for (let s = 0; s < SCOPE_COUNT; s += 1) {
        const code = s === 0 ? 0 : (codes[i * FACET_COUNT + s - 1] as number);
        (cells[s] as ScopeCells).count(code, hasDays, within);
      }
    }
    const byDays = rowsByDays(days, size, withDays);
    for (const i of byDays) {
      const d = days[i] as number;
      for (let s = 0; s < SCOPE_COUNT; s += 1) {
        const code = s === 0 ? 0 : (codes[i * FACET_COUNT + s - 1] as number);
        (cells[s] as ScopeCells).meet(code, d);
      }
    }
    const unit = SUMMARY_BUCKET_UNITS[u] as SummaryBucketUnit;
    if ((SUMMARY_PAIR_UNITS as readonly string[]).includes(unit)) this.closePairs(unit, open, byDays);
    cells.forEach((scope, s) => {
      const column = s === 0 ? ALL_ROWS_SCOPE : (SUMMARY_FILTER_COLUMNS[s - 1] as string);
      const values = s === 0 ? [null] : (this.columns[s - 1] as ValueCodes).values;
      for (let code = 0; code < values.length; code += 1) {
        if (scope.opened[code] === 0) continue;
        const hasDays = scope.withDays[code] !== 0;
        this.buckets.push([
          unit,
          open.key,
          column,
          s === 0 ? null : (values[code] ?? null),
          scope.opened[code] as number,
          scope.withDays[code] as number,
          scope.closedWithin[code] as number,
          hasDays ? (scope.low[code] as number) : null,
          hasDays ? (scope.high[code] as number) : null,
          hasDays ? (scope.p90[code] as number) : null,
        ]);
      }
    });
  }

  /**
   * The bucket's rows per ordered pair of filter columns and pair of values (summary_pairs), counted and
   * met in the order of days as closeBucket does per scope, one pair of columns at a time (its cells in
   * typed arrays of their own, each row's cell computed in a loop with no call): a pair's cell is its
   * filter value's code times the group column's values plus the group value's code. The rows' filter
   * codes and days are first copied in the order of days, so that every pair's walk in that order
   * reads them in sequence (read at each row's place, they cost a cache miss per row and pair).
   */
  private closePairs(unit: SummaryBucketUnit, open: BucketRows, byDays: Float64Array): void {
    const { size, codes, days } = open;
    const widths = this.columns.map((column) => column.values.length);
    const withDays = byDays.length;
    const sortedCodes = widths.every((width) => width <= 65_536) ? new Uint16Array(withDays * FILTER_COUNT) : new Int32Array(withDays * FILTER_COUNT);
    const sortedDays = new Float64Array(withDays);
    for (let k = 0; k < withDays; k += 1) {
      const i = byDays[k] as number;
      for (let f = 0; f < FILTER_COUNT; f += 1) sortedCodes[k * FILTER_COUNT + f] = codes[i * FACET_COUNT + f] as number;
      sortedDays[k] = days[i] as number;
    }
    // Per row: 1 with a days_to_close, plus 2 when within 14 days (NaN compares false).
    const flags = new Uint8Array(size);
    for (let i = 0; i < size; i += 1) {
      const d = days[i] as number;
      flags[i] = (d === d ? 1 : 0) | (d <= CLOSED_WITHIN_DAYS ? 2 : 0);
    }
    for (const [f, g] of COLUMN_PAIRS) {
      const width = widths[g] as number;
      const cells = (widths[f] as number) * width;
      const opened = new Int32Array(cells);
      const closed = new Int32Array(cells);
      const within = new Int32Array(cells);
      for (let i = 0; i < size; i += 1) {
        const cell = (codes[i * FACET_COUNT + f] as number) * width + (codes[i * FACET_COUNT + g] as number);
        const flag = flags[i] as number;
        opened[cell] = (opened[cell] as number) + 1;
        closed[cell] = (closed[cell] as number) + (flag & 1);
        within[cell] = (within[cell] as number) + (flag >> 1);
      }
      // Each cell's ranks (0-based) of its two middles and its 90th percentile among its days.
      const lowAt = new Int32Array(cells);
      const highAt = new Int32Array(cells);
      const p90At = new Int32Array(cells);
      for (let cell = 0; cell < cells; cell += 1) {
        const n = closed[cell] as number;
        lowAt[cell] = (n - 1) >> 1;
        highAt[cell] = n >> 1;
        p90At[cell] = n === 0 ? -1 : p90Rank(n) - 1;
      }
      const met = new Int32Array(cells);
      const low = new Float64Array(cells);
      const high = new Float64Array(cells);
      const p90 = new Float64Array(cells);
      for (let k = 0; k < withDays; k += 1) {
        const cell = (sortedCodes[k * FILTER_COUNT + f] as number) * width + (sortedCodes[k * FILTER_COUNT + g] as number);
        const rank = met[cell] as number;
        met[cell] = rank + 1;
        const d = sortedDays[k] as number;
        if (rank === lowAt[cell]) low[cell] = d;
        if (rank === highAt[cell]) high[cell] = d;
        if (rank === p90At[cell]) p90[cell] = d;
      }
      this.pairs.startRun(unit, open.key);
      for (let cell = 0; cell < cells; cell += 1) {
        if (opened[cell] === 0) continue;
        const none = closed[cell] === 0;
        this.pairs.push(f, Math.floor(cell / width), g, cell % width, opened[cell] as number, closed[cell] as number, within[cell] as number, none ? Number.NaN : (low[cell] as number), none ? Number.NaN : (high[cell] as number), none ? Number.NaN : (p90[cell] as number));
      }
    }
  }

  /** Writes the facets of the month that ends (its rows are the month bucket's), and adds them to the whole snapshot's. */
  private closeMonth(next: string): void {
    if (this.monthKey !== '') {
      const month = this.open[SUMMARY_BUCKET_UNITS.indexOf('month')] as BucketRows;
      const counts = new FacetCounts();
      counts.add(month, this.columns, 1);
      this.emitFacets(this.monthKey, counts, 1);
      this.wholeFacets.add(month, this.columns, SCOPE_COUNT);
    }
    this.monthKey = next;
  }

  /**
   * The facet rows of a period, in the order scope, scope value, facet column, facet value; only the
   * scope of every row when `scopes` is 1. A scope value that no row holds has none.
   */
  private emitFacets(period: string, counts: FacetCounts, scopes: number): void {
    if (counts.rows === 0) return;
    for (let s = 0; s < scopes; s += 1) {
      const column = s === 0 ? ALL_ROWS_SCOPE : (SUMMARY_FILTER_COLUMNS[s - 1] as string);
      const scopeValues = s === 0 ? [null] : (this.columns[s - 1] as ValueCodes).values;
      for (let scopeCode = 0; scopeCode < scopeValues.length; scopeCode += 1) {
        if (s > 0 && counts.single(s - 1, scopeCode) === 0) continue;
        const value = s === 0 ? null : (scopeValues[scopeCode] ?? null);
        for (let f = 0; f < FACET_COUNT; f += 1) {
          if (f === s - 1) continue;
          const facetValues = (this.columns[f] as ValueCodes).values;
          for (let facetCode = 0; facetCode < facetValues.length; facetCode += 1) {
            const requests = s === 0 ? counts.single(f, facetCode) : counts.pair(s - 1, scopeCode, f, facetCode);
            if (requests > 0) this.facets.push([period, column, value, SUMMARY_FACET_COLUMNS[f] as string, facetValues[facetCode] ?? null, requests]);
          }
        }
      }
    }
  }
}

/** Numbers per pair row of PairRows: filter column, its value's code, group column, its value's code, then the six numbers. */
const PAIR_FIELDS = 10;

/**
 * The pair rows of the closed buckets until they are taken, as numbers (PAIR_FIELDS each; NaN for a
 * middle or p90 of none) in a typed array outside the JavaScript heap, their unit and bucket per run
 * of rows: a year's pairs are hundreds of thousands of rows, which as arrays of values would hold
 * the heap's tens of megabytes until the writer's next flush.
 */
class PairRows {
  private numbers = new Float64Array(4096 * PAIR_FIELDS);
  private length = 0;
  /** Each run of rows of one bucket: its first row, unit and bucket key. */
  private runs: { from: number; unit: SummaryBucketUnit; key: string }[] = [];

  startRun(unit: SummaryBucketUnit, key: string): void {
    this.runs.push({ from: this.length, unit, key });
  }

  /** A row of the current run: the filter column and value code, the group column and value code, the numbers. */
  push(f: number, fCode: number, g: number, gCode: number, opened: number, closed: number, within: number, low: number, high: number, p90: number): void {
    if ((this.length + 1) * PAIR_FIELDS > this.numbers.length) {
      const larger = new Float64Array(this.numbers.length * 2);
      larger.set(this.numbers);
      this.numbers = larger;
    }
    const at = this.length * PAIR_FIELDS;
    const numbers = this.numbers;
    numbers[at] = f;
    numbers[at + 1] = fCode;
    numbers[at + 2] = g;
    numbers[at + 3] = gCode;
    numbers[at + 4] = opened;
    numbers[at + 5] = closed;
    numbers[at + 6] = within;
    numbers[at + 7] = low;
    numbers[at + 8] = high;
    numbers[at + 9] = p90;
    this.length += 1;
  }

  /** The rows as summary_pairs holds them (SUMMARY_PAIR_COLUMNS), made as they are iterated; then none are left. */
  *take(columns: readonly ValueCodes[]): Generator<SummaryRow> {
    const { numbers, length, runs } = this;
    this.length = 0;
    this.runs = [];
    if (this.numbers.length > 4096 * PAIR_FIELDS) this.numbers = new Float64Array(4096 * PAIR_FIELDS);
    const orNull = (value: number): number | null => (Number.isNaN(value) ? null : value);
    for (let r = 0; r < runs.length; r += 1) {
      const { from, unit, key } = runs[r] as (typeof runs)[number];
      const to = r + 1 < runs.length ? (runs[r + 1] as (typeof runs)[number]).from : length;
      for (let row = from; row < to; row += 1) {
        const at = row * PAIR_FIELDS;
        const f = numbers[at] as number;
        const g = numbers[at + 2] as number;
        yield [
          unit,
          key,
          SUMMARY_FILTER_COLUMNS[f] as string,
          (columns[f] as ValueCodes).values[numbers[at + 1] as number] ?? null,
          SUMMARY_FILTER_COLUMNS[g] as string,
          (columns[g] as ValueCodes).values[numbers[at + 3] as number] ?? null,
          numbers[at + 4] as number,
          numbers[at + 5] as number,
          numbers[at + 6] as number,
          orNull(numbers[at + 7] as number),
          orNull(numbers[at + 8] as number),
          orNull(numbers[at + 9] as number),
        ];
      }
    }
  }
}

/**
 * The positions of the rows with a days_to_close (`withDays` of them), in the order of their days,
 * ties by position. Each row's key is a whole number that orders its days, times 2^bits, plus its
 * position, exact in a double for up to MAX_BUCKET_ROWS rows: the days in hundredths (days_to_close
 * has two decimals), or, should one have more, the rank of its days among the sorted days.
 */
function rowsByDays(days: Float64Array, size: number, withDays: number): Float64Array {
  const shift = 2 ** Math.max(1, Math.ceil(Math.log2(size + 1)));
  const maxOrder = Number.MAX_SAFE_INTEGER / shift - 1;
  const keys = new Float64Array(withDays);
  let inHundredths = true;
  for (let i = 0, k = 0; i < size; i += 1) {
    const d = days[i] as number;
    if (d !== d) continue;
    const hundredths = Math.round(d * 100);
    if (hundredths / 100 !== d || hundredths < 0 || hundredths > maxOrder) {
      inHundredths = false;
      break;
    }
    keys[k++] = hundredths * shift + i;
  }
  if (!inHundredths) {
    const sorted = new Float64Array(withDays);
    for (let i = 0, k = 0; i < size; i += 1) {
      const d = days[i] as number;
      if (d === d) sorted[k++] = d;
    }
    sorted.sort();
    for (let i = 0, k = 0; i < size; i += 1) {
      const d = days[i] as number;
      if (d !== d) continue;
      let low = 0;
      let high = withDays;
      while (low < high) {
        const mid = (low + high) >> 1;
        if ((sorted[mid] as number) < d) low = mid + 1;
        else high = mid;
      }
      keys[k++] = low * shift + i;
    }
  }
  keys.sort();
  for (let k = 0; k < withDays; k += 1) keys[k] = (keys[k] as number) % shift;
  return keys;
}

/** The cells of one scope in a closing bucket, per value code. */
class ScopeCells {
  readonly opened: Int32Array;
  readonly closedWithin: Int32Array;
  readonly withDays: Int32Array;
  readonly low: Float64Array;
  readonly high: Float64Array;
  readonly p90: Float64Array;
  private readonly met: Int32Array;

  constructor(values: number) {
    this.opened = new Int32Array(values);
    this.closedWithin = new Int32Array(values);
    this.withDays = new Int32Array(values);
    this.low = new Float64Array(values);
    this.high = new Float64Array(values);
    this.p90 = new Float64Array(values);
    this.met = new Int32Array(values);
  }

  count(code: number, hasDays: boolean, within: boolean): void {
    this.opened[code] = (this.opened[code] as number) + 1;
    if (hasDays) this.withDays[code] = (this.withDays[code] as number) + 1;
    if (within) this.closedWithin[code] = (this.closedWithin[code] as number) + 1;
  }

  /** The value's next row in the order of days, with its days_to_close. */
  meet(code: number, daysToClose: number): void {
    const k = this.met[code] as number;
    this.met[code] = k + 1;
    const n = this.withDays[code] as number;
    if (k === (n - 1) >> 1) this.low[code] = daysToClose;
    if (k === n >> 1) this.high[code] = daysToClose;
    if (k === p90Rank(n) - 1) this.p90[code] = daysToClose;
  }
}

/**
 * Requests per value of each facet column (single) and per pair of values of two columns (pair), the
 * first a filter column: what the facets of every row and of each filter value count. A pair is
 * counted once for both of its orders.
 */
class FacetCounts {
  rows = 0;
  /** [column] -> requests per value code. */
  private readonly singles: Int32Array[] = SUMMARY_FACET_COLUMNS.map(() => new Int32Array(0));
  /** [a * FACET_COUNT + b], a < b -> requests per (code of a) * width + (code of b), width = its `widths` entry. */
  private readonly pairs: Int32Array[] = new Array<Int32Array>(FACET_COUNT * FACET_COUNT).fill(new Int32Array(0));
  private readonly widths = new Int32Array(FACET_COUNT * FACET_COUNT);

  single(column: number, code: number): number {
    const counts = this.singles[column] as Int32Array;
    return code < counts.length ? (counts[code] as number) : 0;
  }

  pair(a: number, codeA: number, b: number, codeB: number): number {
    const [low, lowCode, high, highCode] = a < b ? [a, codeA, b, codeB] : [b, codeB, a, codeA];
    const counts = this.pairs[low * FACET_COUNT + high] as Int32Array;
    const width = this.widths[low * FACET_COUNT + high] as number;
    const at = lowCode * width + highCode;
    return highCode < width && at < counts.length ? (counts[at] as number) : 0;
  }

  /** Counts the rows of a bucket; with `scopes` 1, the single counts only. */
  add(rows: BucketRows, columns: readonly ValueCodes[], scopes: number): void {
    const sizes = columns.map((c) => c.values.length);
    this.fit(sizes, scopes);
    const { size, codes } = rows;
    this.rows += size;
    for (let f = 0; f < FACET_COUNT; f += 1) {
      const counts = this.singles[f] as Int32Array;
      for (let i = 0; i < size; i += 1) {
        const code = codes[i * FACET_COUNT + f] as number;
        counts[code] = (counts[code] as number) + 1;
      }
    }
    if (scopes === 1) return;
    for (let a = 0; a < SCOPE_COUNT - 1; a += 1) {
      for (let b = a + 1; b < FACET_COUNT; b += 1) {
        const counts = this.pairs[a * FACET_COUNT + b] as Int32Array;
        const width = this.widths[a * FACET_COUNT + b] as number;
        for (let i = 0; i < size; i += 1) {
          const at = (codes[i * FACET_COUNT + a] as number) * width + (codes[i * FACET_COUNT + b] as number);
          counts[at] = (counts[at] as number) + 1;
        }
      }
    }
  }

  /** Grows the arrays to the value codes known so far, keeping the counts. */
  private fit(sizes: readonly number[], scopes: number): void {
    for (let f = 0; f < FACET_COUNT; f += 1) {
      const old = this.singles[f] as Int32Array;
      if (old.length < (sizes[f] as number)) {
        const counts = new Int32Array(sizes[f] as number);
        counts.set(old);
        this.singles[f] = counts;
      }
    }
    if (scopes === 1) return;
    for (let a = 0; a < SCOPE_COUNT - 1; a += 1) {
      for (let b = a + 1; b < FACET_COUNT; b += 1) {
        const k = a * FACET_COUNT + b;
        const width = this.widths[k] as number;
        const heightA = sizes[a] as number;
        const widthB = sizes[b] as number;
        const old = this.pairs[k] as Int32Array;
        if (width >= widthB && old.length >= heightA * width) continue;
        const newWidth = Math.max(widthB, width);
        const counts = new Int32Array(heightA * newWidth);
        for (let row = 0; width > 0 && row * width < old.length; row += 1) counts.set(old.subarray(row * width, (row + 1) * width), row * newWidth);
        this.pairs[k] = counts;
        this.widths[k] = newWidth;
      }
    }
  }
}
