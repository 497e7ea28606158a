/**
 * The numbers precomputed from the cleaned rows (the snapshot is frozen): daily numbers per
 * scope (all requests, each borough, each complaint type, each borough and complaint type), the
 * complaint-type counts, and the content hash that identifies the snapshot.
 */
import { createHash } from 'node:crypto';
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
  const median = sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
  return round2(median);
}

/** The numbers of one day from the requests created that day. */
export function dailyStatOf(day: string, opened: number, closedWithin: number, closeDays: number[]): DailyStat {
  return {
    day,
    opened,
    closed_within_14_days: closedWithin,
    share_closed_within_14_days: opened === 0 ? null : round4(closedWithin / opened),
    median_days_to_close: medianOf(closeDays),
  };
}

interface ScopeAccumulator {
  borough: string;
  complaintType: string;
  opened: Int32Array;
  closedWithin: Int32Array;
  closeDays: number[][];
}

/**
 * daily_stats rows for every day from periodStart to periodEnd (days with no request included,
 * with zeros), for the scopes: all; each of the five boroughs; each complaint type present; each
 * borough and complaint type. A day is the local date of created_at; median over the requests
 * created that day that have a days_to_close.
 */
export function computeDailyStats(rows: readonly ServiceRequest[], periodStart: string, periodEnd: string): DailyStatRow[] {
  const days = daysInclusive(periodStart, periodEnd);
  const dayIndex = new Map(days.map((day, i) => [day, i]));
  const types = [...new Set(rows.map((r) => r.complaint_type).filter((t): t is string => t !== null))].sort();
  const typeIndex = new Map(types.map((type, i) => [type, i + 1]));
  const boroughs: string[] = [ALL_SCOPE, ...BOROUGHS];
  const boroughIndex = new Map(boroughs.map((b, i) => [b, i]));
  // scopes[b * (types + 1) + t]; index 0 of each axis means all.
  const width = types.length + 1;
  const scopes: ScopeAccumulator[] = [];
  for (const borough of boroughs) {
    for (const complaintType of [ALL_SCOPE, ...types]) {
      scopes.push({
        borough,
        complaintType,
        opened: new Int32Array(days.length),
        closedWithin: new Int32Array(days.length),
        closeDays: days.map(() => []),
      });
    }
  }
  const add = (scope: ScopeAccumulator, d: number, daysToClose: number | null): void => {
    scope.opened[d] = (scope.opened[d] ?? 0) + 1;
    if (daysToClose !== null) {
      (scope.closeDays[d] as number[]).push(daysToClose);
      if (daysToClose <= CLOSED_WITHIN_DAYS) scope.closedWithin[d] = (scope.closedWithin[d] ?? 0) + 1;
    }
  };
  let lastDay = '';
  let d: number | undefined;
  for (const row of rows) {
    const day = row.created_at.slice(0, 10);
    if (day !== lastDay) {
      lastDay = day;
      d = dayIndex.get(day);
    }
    if (d === undefined) continue;
    const b = row.borough === null ? -1 : (boroughIndex.get(row.borough) as number);
    const t = row.complaint_type === null ? -1 : (typeIndex.get(row.complaint_type) as number);
    add(scopes[0] as ScopeAccumulator, d, row.days_to_close);
    if (b > 0) add(scopes[b * width] as ScopeAccumulator, d, row.days_to_close);
    if (t > 0) {
      add(scopes[t] as ScopeAccumulator, d, row.days_to_close);
      if (b > 0) add(scopes[b * width + t] as ScopeAccumulator, d, row.days_to_close);
    }
  }
  const out: DailyStatRow[] = [];
  for (const scope of scopes) {
    days.forEach((day, i) => {
      out.push({
        borough: scope.borough,
        complaint_type: scope.complaintType,
        ...dailyStatOf(day, scope.opened[i] as number, scope.closedWithin[i] as number, scope.closeDays[i] as number[]),
      });
    });
  }
  return out;
}

/** Every complaint type with its number of requests, largest first, then by name (code-point order). */
export function computeComplaintTypeCounts(rows: readonly ServiceRequest[]): ComplaintTypeCount[] {
  const counts = new Map<string, number>();
  for (const row of rows) {
    if (row.complaint_type !== null) counts.set(row.complaint_type, (counts.get(row.complaint_type) ?? 0) + 1);
  }
  return [...counts]
    .map(([complaint_type, count]) => ({ complaint_type, count }))
    .sort((a, b) => b.count - a.count || (a.complaint_type < b.complaint_type ? -1 : a.complaint_type > b.complaint_type ? 1 : 0));
}

/**
 * SHA-256 of the content: the rows in the given order (their text fields, one line per row, fields
 * separated by \u0001, null as \u0000; then their numeric fields as float64, NaN for null), the
 * rule counts and `extra`.
 */
export function computeContentSha256(
  rows: readonly ServiceRequest[],
  rules: readonly CleaningRuleResult[],
  extra: Record<string, string | number | boolean>,
): string {
  const hash = createHash('sha256');
  const textFields = SERVICE_REQUEST_FIELDS.filter((f) => typeof NUMERIC_FIELDS[f] === 'undefined');
  const numericFields = SERVICE_REQUEST_FIELDS.filter((f) => typeof NUMERIC_FIELDS[f] !== 'undefined');
  const numbers = new Float64Array(rows.length * numericFields.length);
  let k = 0;
  let text = '';
  for (const row of rows) {
    for (const field of textFields) {
      const value = row[field];
      text += value === null ? '\u0000\u0001' : `${value as string}\u0001`;
    }
    text += '\n';
    if (text.length > 1 << 20) {
      hash.update(text);
      text = '';
    }
    for (const field of numericFields) {
      const value = row[field];
      numbers[k++] = value === null ? Number.NaN : (value as number);
    }
  }
  hash.update(text);
  hash.update(new Uint8Array(numbers.buffer));
  hash.update(JSON.stringify(rules.map((r) => [r.id, r.rows_removed, r.values_changed, r.applied])));
  hash.update(JSON.stringify(extra));
  return hash.digest('hex');
}

const NUMERIC_FIELDS: Partial<Record<keyof ServiceRequest, true>> = {
  id: true,
  council_district: true,
  latitude: true,
  longitude: true,
  days_to_close: true,
};
