/**
 * The numbers precomputed from the cleaned rows (the snapshot is frozen): daily numbers per
 * scope (all requests, each borough, each complaint type, each borough and complaint type), the
 * complaint-type counts, and the content hash that identifies the snapshot.
 */
import { createHash } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { daysInclusive } from './new-york-time.js';
import {
  ALL_SCOPE,
  BOROUGHS,
  type CleaningRuleResult,
  type ComplaintTypeCount,
  type DailyStat,
  SERVICE_REQUEST_FIELDS,
  type ServiceRequest,
} from './service-request.js';

/** A request closed within this many days (days_to_close <= 14) counts as closed in time. */
export const CLOSED_WITHIN_DAYS = 14;

/** One row of the daily_stats table: a day of one scope. `*` in borough / complaint_type means all. */
export interface DailyStatRow extends DailyStat {
  borough: string;
  complaint_type: string;
}

export const round2 = (x: number): number => Math.round(x * 100) / 100;
export const round4 = (x: number): number => Math.round(x * 10_000) / 10_000;

/** Median of the values (mean of the two middle ones for an even count), 2 decimals; null when empty. */
export function medianOf(values: number[]): number | null {
  if (values.length === 0) return null;
  const sorted = Float64Array.from(values).sort();
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? medianOfMiddles(sorted[mid] as number, sorted[mid] as number) : medianOfMiddles(sorted[mid - 1] as number, sorted[mid] as number);
}

/**
 * The median from the two middle values of the sorted values (the same value twice for an odd count),
 * 2 decimals: medianOf, for the summaries that keep only the middles.
 */
export function medianOfMiddles(low: number, high: number): number {
  // (x + x) / 2 is x exactly in floating point: an odd count's middle is not changed by the mean.
  return round2((low + high) / 2);
}

const NUMERIC_FIELDS_OF: Partial<Record<keyof ServiceRequest, true>> = {
  id: true,
  council_district: true,
  latitude: true,
  longitude: true,
  days_to_close: true,
};

/** The position (from 1) of the 90th percentile among n sorted values: ceil(0.9 n), in integers (0.9 * 70 is 63.000...01 in floating point). */
export function p90Rank(n: number): number {
  return Math.floor((9 * n + 9) / 10);
}

/** Share of the requests opened that were closed within 14 days, 4 decimals; null when none opened. */
export const shareClosedWithin = (opened: number, closedWithin: number): number | null => (opened === 0 ? null : round4(closedWithin / opened));

/** The numbers of one day from the requests created that day. */
export function dailyStatOf(day: string, opened: number, closedWithin: number, closeDays: number[]): DailyStat {
  return {
    day,
    opened,
    closed_within_14_days: closedWithin,
    share_closed_within_14_days: shareClosedWithin(opened, closedWithin),
    median_days_to_close: medianOf(closeDays),
  };
}

/** One scope's days: counts and the median (NaN for none), per day of the period. */
interface ScopeDays {
  opened: Int32Array;
  closedWithin: Int32Array;
  median: Float64Array;
}

/** One scope's requests of the day being read. */
interface ScopeDay {
  opened: number;
  closedWithin: number;
  closeDays: number[];
}

const BOROUGH_SCOPES: readonly string[] = [ALL_SCOPE, ...BOROUGHS];

/**
 * The precomputed numbers of a snapshot, from its rows taken one at a time in order of created_at:
 * daily_stats rows for the days from periodStart to periodEnd on which a scope had a request (the
 * readers give the other days zeros, so that a long period of few requests stays small), for the scopes: all; each of the five boroughs; each complaint type present; each
 * borough and complaint type. A day is the local date of created_at; median over the requests
 * created that day that have a days_to_close. Also the complaint-type counts.
 *
 * Memory: the requests of one day (for its medians), and three numbers per scope and day.
 */
export class SnapshotAggregator {
  private readonly days: string[];
  private readonly dayIndex: Map<string, number>;
  private readonly typeCounts = new Map<string, number>();
  /** Per complaint type (ALL_SCOPE for all), per borough scope (index in BOROUGH_SCOPES). */
  private readonly scopes = new Map<string, (ScopeDays | undefined)[]>();
  private readonly today = new Map<string, (ScopeDay | undefined)[]>();
  private lastDay = '';
  private d: number | undefined;
  private lastFlushed = -1;

  constructor(periodStart: string, periodEnd: string) {
    this.days = daysInclusive(periodStart, periodEnd);
    this.dayIndex = new Map(this.days.map((day, i) => [day, i]));
  }

  /** Add the next row (rows come in order of created_at). */
  add(row: ServiceRequest): void {
    const type = row.complaint_type;
    if (type !== null) this.typeCounts.set(type, (this.typeCounts.get(type) ?? 0) + 1);
    const day = row.created_at.slice(0, 10);
    if (day !== this.lastDay) {
      this.flushDay();
      this.lastDay = day;
      this.d = this.dayIndex.get(day);
      if (this.d !== undefined && this.d <= this.lastFlushed) throw new Error(`SnapshotAggregator: rows out of order at ${row.created_at}`);
    }
    if (this.d === undefined) return;
    const b = row.borough === null ? 0 : BOROUGH_SCOPES.indexOf(row.borough);
    this.addTo(ALL_SCOPE, 0, row.days_to_close);
    if (b > 0) this.addTo(ALL_SCOPE, b, row.days_to_close);
    if (type !== null) {
      this.addTo(type, 0, row.days_to_close);
      if (b > 0) this.addTo(type, b, row.days_to_close);
    }
  }

  private addTo(type: string, b: number, daysToClose: number | null): void {
    let byBorough = this.today.get(type);
    if (byBorough === undefined) this.today.set(type, (byBorough = []));
    let scope = byBorough[b];
    if (scope === undefined) byBorough[b] = scope = { opened: 0, closedWithin: 0, closeDays: [] };
    scope.opened++;
    if (daysToClose !== null) {
      scope.closeDays.push(daysToClose);
      if (daysToClose <= CLOSED_WITHIN_DAYS) scope.closedWithin++;
    }
  }

  private flushDay(): void {
    const d = this.d;
    if (d === undefined) return;
    for (const [type, byBorough] of this.today) {
      let scopes = this.scopes.get(type);
      if (scopes === undefined) this.scopes.set(type, (scopes = []));
      byBorough.forEach((scope, b) => {
        if (scope === undefined) return;
        let days = scopes[b];
        if (days === undefined) {
          const n = this.days.length;
          scopes[b] = days = { opened: new Int32Array(n), closedWithin: new Int32Array(n), median: new Float64Array(n).fill(Number.NaN) };
        }
        days.opened[d] = scope.opened;
        days.closedWithin[d] = scope.closedWithin;
        days.median[d] = medianOf(scope.closeDays) ?? Number.NaN;
      });
    }
    this.today.clear();
    this.lastFlushed = d;
    this.d = undefined;
  }

  /**
   * The daily_stats rows, scope by scope (all, then each borough; within each, all then each type in
   * code-point order), day by day to `throughDay` (default: the period's end), days without a
   * request left out.
   */
  *dailyStats(throughDay?: string): Generator<DailyStatRow> {
    this.flushDay();
    const types = [...this.typeCounts.keys()].sort();
    const dayCount = throughDay === undefined ? this.days.length : (this.dayIndex.get(throughDay) ?? this.days.length - 1) + 1;
    for (let b = 0; b < BOROUGH_SCOPES.length; b++) {
      for (const type of [ALL_SCOPE, ...types]) {
        const days = this.scopes.get(type)?.[b];
        for (let i = 0; i < dayCount; i++) {
          const opened = days?.opened[i] ?? 0;
          if (opened === 0) continue;
          const closedWithin = days?.closedWithin[i] ?? 0;
          const median = days?.median[i] ?? Number.NaN;
          yield {
            borough: BOROUGH_SCOPES[b] as string,
            complaint_type: type,
            day: this.days[i] as string,
            opened,
            closed_within_14_days: closedWithin,
            share_closed_within_14_days: shareClosedWithin(opened, closedWithin),
            median_days_to_close: Number.isNaN(median) ? null : median,
          };
        }
      }
    }
  }

  /** Every complaint type with its number of requests, largest first, then by name (code-point order). */
  complaintTypeCounts(): ComplaintTypeCount[] {
    return [...this.typeCounts]
      .map(([complaint_type, count]) => ({ complaint_type, count }))
      .sort((a, b) => b.count - a.count || (a.complaint_type < b.complaint_type ? -1 : a.complaint_type > b.complaint_type ? 1 : 0));
  }
}

/** daily_stats rows of rows sorted by created_at (see SnapshotAggregator). */
export function computeDailyStats(rows: readonly ServiceRequest[], periodStart: string, periodEnd: string): DailyStatRow[] {
  const aggregator = new SnapshotAggregator(periodStart, periodEnd);
  for (const row of rows) aggregator.add(row);
  return [...aggregator.dailyStats()];
}

/** Every complaint type with its number of requests, largest first, then by name (code-point order). */
export function computeComplaintTypeCounts(rows: readonly ServiceRequest[]): ComplaintTypeCount[] {
  const aggregator = new SnapshotAggregator('2000-01-01', '2000-01-01');
  for (const row of rows) aggregator.add(row);
  return aggregator.complaintTypeCounts();
}

const TEXT_FIELDS = SERVICE_REQUEST_FIELDS.filter((f) => typeof NUMERIC_FIELDS_OF[f] === 'undefined');
const NUMBER_FIELDS = SERVICE_REQUEST_FIELDS.filter((f) => typeof NUMERIC_FIELDS_OF[f] !== 'undefined');
/** Rows of numeric fields held before they are written to the spill file. */
const NUMBERS_PER_SPILL = 65_536;

/**
 * SHA-256 of the content: the rows in the given order (their text fields, one line per row, fields
 * separated by \u0001, null as \u0000; then their numeric fields as float64, NaN for null), the
 * rule counts and `extra`. Rows are added one at a time: the text goes into the hash at once, the
 * numbers (hashed after all the text) to a temporary file beyond the first 65,536 rows.
 */
export class ContentHasher {
  private readonly hash = createHash('sha256');
  private text = '';
  private readonly numbers = new Float64Array(NUMBERS_PER_SPILL * NUMBER_FIELDS.length);
  private k = 0;
  private spill: { directory: string; fd: number } | null = null;

  add(row: ServiceRequest): void {
    for (const field of TEXT_FIELDS) {
      const value = row[field];
      this.text += value === null ? '\u0000\u0001' : `${value as string}\u0001`;
    }
    this.text += '\n';
    if (this.text.length > 1 << 20) {
      this.hash.update(this.text);
      this.text = '';
    }
    if (this.k === this.numbers.length) this.spillNumbers();
    for (const field of NUMBER_FIELDS) {
      const value = row[field];
      this.numbers[this.k++] = value === null ? Number.NaN : (value as number);
    }
  }

  private spillNumbers(): void {
    if (this.spill === null) {
      const directory = mkdtempSync(join(tmpdir(), 'snapshot-hash-'));
      this.spill = { directory, fd: openSync(join(directory, 'numbers.f64'), 'w+') };
    }
    writeSync(this.spill.fd, this.numbers, 0, this.k * 8);
    this.k = 0;
  }

  digest(rules: readonly CleaningRuleResult[], extra: Record<string, string | number | boolean>): string {
    this.hash.update(this.text);
    this.text = '';
    if (this.spill !== null) {
      const { directory, fd } = this.spill;
      try {
        const buffer = Buffer.alloc(1 << 22);
        for (let position = 0; ; ) {
          const n = readSync(fd, buffer, 0, buffer.length, position);
          if (n === 0) break;
          this.hash.update(buffer.subarray(0, n));
          position += n;
        }
      } finally {
        closeSync(fd);
        rmSync(directory, { recursive: true, force: true });
        this.spill = null;
      }
    }
    this.hash.update(new Uint8Array(this.numbers.buffer, 0, this.k * 8));
    this.hash.update(JSON.stringify(rules.map((r) => [r.id, r.rows_removed, r.values_changed, r.applied])));
    this.hash.update(JSON.stringify(extra));
    return this.hash.digest('hex');
  }
}
