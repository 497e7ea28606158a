/**
 * The aggregate summaries of a snapshot: two tables written at ingest, once the rows are loaded, so
 * that count, facets and the daily, weekly and monthly statistics answer without walking the rows for
 * no filter, one equality filter (any list of its values), and a created_at range alone or with one
 * equality filter (src/services/requests/summary-answers.ts reads them).
 *
 * - summary_buckets: per unit (day, ISO week, month), bucket, and scope (every row: filter_column '',
 *   or one value of one filter column, NULL for the rows without one): the requests opened, those closed
 *   within 14 days, and the two middle days_to_close of the scope's requests that have one (equal when
 *   their number is odd). The exact median is the mean of the two, rounded as medianOf rounds it
 *   (medianOfMiddles); a median does not add up over several values, so a list of values answers from
 *   the rows.
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
 * month of rows at most. One SQL GROUP BY (or window, for
 * the medians) per unit, scope and pair of columns would sort every row some sixty times.
 * Values are kept as text (council_district included): the readers turn them back.
 */
import { CLOSED_WITHIN_DAYS } from './snapshot-aggregates.js';
import { FILTERED_COLUMNS, tableName, type FilteredColumn, type SqlDialect } from './snapshot-schema.js';
import type { ServiceRequest } from './service-request.js';

/** The equality filters of the API that the summaries cover, each as its own scope: every one. */
export const SUMMARY_FILTER_COLUMNS = FILTERED_COLUMNS;
export type SummaryFilterColumn = FilteredColumn;

/** The columns whose facets the summaries hold. */
export const SUMMARY_FACET_COLUMNS = [...SUMMARY_FILTER_COLUMNS, 'location_type'] as const;
export type SummaryFacetColumn = (typeof SUMMARY_FACET_COLUMNS)[number];

export const SUMMARY_UNITS = ['day', 'week', 'month'] as const;
export type SummaryUnit = (typeof SUMMARY_UNITS)[number];

/** filter_column of the scope of every row. */
export const ALL_ROWS_SCOPE = '';
/** period of the facets of the whole snapshot. */
export const WHOLE_SNAPSHOT_PERIOD = '';

export const SUMMARY_TABLES = ['summary_buckets', 'summary_facets'] as const;

export const SUMMARY_BUCKET_COLUMNS = ['unit', 'bucket', 'filter_column', 'filter_value', 'opened', 'closed_within_14_days', 'low_middle', 'high_middle'] as const;
export const SUMMARY_FACET_TABLE_COLUMNS = ['period', 'filter_column', 'filter_value', 'facet_column', 'facet_value', 'requests'] as const;

/** One row of a summary table, its columns in the order of SUMMARY_BUCKET_COLUMNS or SUMMARY_FACET_TABLE_COLUMNS. */
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
  return [
    ...SUMMARY_TABLES.map((name) => `DROP TABLE IF EXISTS ${table(name)}`),
    `CREATE TABLE ${table('summary_buckets')} (
  unit ${text} NOT NULL,
  bucket ${text} NOT NULL,
  filter_column ${text} NOT NULL,
  filter_value ${text},
  opened integer NOT NULL,
  closed_within_14_days integer NOT NULL,
  low_middle ${real},
  high_middle ${real}
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
    `CREATE INDEX summary_buckets_scope ON ${table('summary_buckets')} ${covering('unit, filter_column, filter_value, bucket', 'opened, closed_within_14_days, low_middle, high_middle')}`,
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

/** The requests of one bucket and scope value so far. */
interface BucketCell {
  opened: number;
  closedWithin: number;
  closeDays: number[];
}

/** The scopes: every row (index 0), then each filter column (index 1 + its position). */
const SCOPE_COUNT = 1 + SUMMARY_FILTER_COLUMNS.length;
const FACET_COUNT = SUMMARY_FACET_COLUMNS.length;

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

/**
 * The summaries of rows taken in created_at order (`add`); rows of the tables come out through
 * `takeBuckets` and `takeFacets` as buckets close, the rest after `finish`.
 */
export class AggregateSummaryBuilder {
  private readonly columns = SUMMARY_FACET_COLUMNS.map(() => new ValueCodes());
  /** Per unit: the open bucket's key, and its cells per scope and value code. */
  private readonly open = SUMMARY_UNITS.map(() => ({ key: '', cells: Array.from({ length: SCOPE_COUNT }, (): BucketCell[] => []) }));
  /** Facet counts, [scope][scope value code][facet column][facet value code]: the open month's (every row only), the whole snapshot's. */
  private monthKey = '';
  private monthFacets = emptyFacetCounts();
  private readonly wholeFacets = emptyFacetCounts();
  private buckets: SummaryRow[] = [];
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
    const keys = [day, this.lastWeek, day.slice(0, 7)] as const;
    if (keys[2] !== this.monthKey) this.closeMonth(keys[2]);
    for (let f = 0; f < FACET_COUNT; f += 1) this.codes[f] = (this.columns[f] as ValueCodes).code(row[2 + f] as string | null);
    const within = daysToClose !== null && daysToClose <= CLOSED_WITHIN_DAYS ? 1 : 0;
    for (let u = 0; u < SUMMARY_UNITS.length; u += 1) {
      const open = this.open[u] as (typeof this.open)[number];
      const key = keys[u] as string;
      if (open.key !== key) {
        this.closeBucket(u);
        open.key = key;
      }
      for (let s = 0; s < SCOPE_COUNT; s += 1) {
        const code = s === 0 ? 0 : (this.codes[s - 1] as number);
        const cells = open.cells[s] as BucketCell[];
        const cell = (cells[code] ??= { opened: 0, closedWithin: 0, closeDays: [] });
        cell.opened += 1;
        cell.closedWithin += within;
        if (daysToClose !== null) cell.closeDays.push(daysToClose);
      }
    }
    countFacets(this.monthFacets, 0, 0, this.codes);
    for (let s = 0; s < SCOPE_COUNT; s += 1) countFacets(this.wholeFacets, s, s === 0 ? 0 : (this.codes[s - 1] as number), this.codes);
  }

  /** Closes the open buckets and writes the whole snapshot's facets. */
  finish(): void {
    for (let u = 0; u < SUMMARY_UNITS.length; u += 1) this.closeBucket(u);
    this.closeMonth('');
    this.emitFacets(WHOLE_SNAPSHOT_PERIOD, this.wholeFacets);
  }

  takeBuckets(): SummaryRow[] {
    const rows = this.buckets;
    this.buckets = [];
    return rows;
  }

  takeFacets(): SummaryRow[] {
    const rows = this.facets;
    this.facets = [];
    return rows;
  }

  private closeBucket(u: number): void {
    const open = this.open[u] as (typeof this.open)[number];
    if (open.key === '') return;
    const unit = SUMMARY_UNITS[u] as SummaryUnit;
    open.cells.forEach((cells, s) => {
      cells.forEach((cell, code) => {
        const sorted = Float64Array.from(cell.closeDays).sort();
        const n = sorted.length;
        const low = n === 0 ? null : (sorted[(n - 1) >> 1] as number);
        const high = n === 0 ? null : (sorted[n >> 1] as number);
        const column = s === 0 ? ALL_ROWS_SCOPE : (SUMMARY_FILTER_COLUMNS[s - 1] as string);
        const value = s === 0 ? null : (this.columns[s - 1] as ValueCodes).values[code] ?? null;
        this.buckets.push([unit, open.key, column, value, cell.opened, cell.closedWithin, low, high]);
      });
      cells.length = 0;
    });
    open.key = '';
  }

  private closeMonth(next: string): void {
    if (this.monthKey !== '') this.emitFacets(this.monthKey, this.monthFacets);
    this.monthKey = next;
    this.monthFacets = emptyFacetCounts();
  }

  private emitFacets(period: string, counts: number[][][][]): void {
    counts.forEach((byScopeCode, s) => {
      const column = s === 0 ? ALL_ROWS_SCOPE : (SUMMARY_FILTER_COLUMNS[s - 1] as string);
      byScopeCode.forEach((byFacet, scopeCode) => {
        const value = s === 0 ? null : (this.columns[s - 1] as ValueCodes).values[scopeCode] ?? null;
        byFacet.forEach((facetCounts, f) => {
          const facetValues = (this.columns[f] as ValueCodes).values;
          facetCounts.forEach((requests, facetCode) => {
            this.facets.push([period, column, value, SUMMARY_FACET_COLUMNS[f] as string, facetValues[facetCode] ?? null, requests]);
          });
        });
      });
    });
  }
}

function emptyFacetCounts(): number[][][][] {
  return Array.from({ length: SCOPE_COUNT }, (): number[][][] => []);
}

/** Counts a row's facet values in the scope's value (not the facet of the scope's own column). */
function countFacets(into: number[][][][], scope: number, scopeCode: number, codes: Int32Array): void {
  const byFacet = ((into[scope] as number[][][])[scopeCode] ??= []);
  for (let f = 0; f < FACET_COUNT; f += 1) {
    if (f === scope - 1) continue;
    const counts = (byFacet[f] ??= []);
    const facetCode = codes[f] as number;
    counts[facetCode] = (counts[facetCode] ?? 0) + 1;
  }
}
