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
  const scopes = new Map<string, ScopeAccumulator>();
  const addScope = (borough: string, complaintType: string): void => {
    scopes.set(`${borough}\u0001${complaintType}`, {
      borough,
      complaintType,
      opened: new Int32Array(days.length),
      closedWithin: new Int32Array(days.length),
      closeDays: days.map(() => []),
    });
  };
  for (const borough of [ALL_SCOPE, ...BOROUGHS]) {
    addScope(borough, ALL_SCOPE);
    for (const type of types) addScope(borough, type);
  }
  for (const row of rows) {
    const d = dayIndex.get(row.created_at.slice(0, 10));
    if (d === undefined) continue;
    const keys = [`${ALL_SCOPE}\u0001${ALL_SCOPE}`];
    if (row.borough !== null) keys.push(`${row.borough}\u0001${ALL_SCOPE}`);
    if (row.complaint_type !== null) {
      keys.push(`${ALL_SCOPE}\u0001${row.complaint_type}`);
      if (row.borough !== null) keys.push(`${row.borough}\u0001${row.complaint_type}`);
    }
    for (const key of keys) {
      const scope = scopes.get(key) as ScopeAccumulator;
      scope.opened[d]!++;
      if (row.days_to_close !== null) {
        (scope.closeDays[d] as number[]).push(row.days_to_close);
        if (row.days_to_close <= CLOSED_WITHIN_DAYS) scope.closedWithin[d]!++;
      }
    }
  }
  const out: DailyStatRow[] = [];
  for (const scope of scopes.values()) {
    days.forEach((day, d) => {
      out.push({
        borough: scope.borough,
        complaint_type: scope.complaintType,
        ...dailyStatOf(day, scope.opened[d] as number, scope.closedWithin[d] as number, scope.closeDays[d] as number[]),
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
 * SHA-256 of the rows (in the given order; per row its values in contract field order, each followed
 * by a tab, null as \\N, one row per line) and the rule counts.
 */
export function computeContentSha256(
  rows: readonly ServiceRequest[],
  rules: readonly CleaningRuleResult[],
  extra: Record<string, string | number | boolean>,
): string {
  const hash = createHash('sha256');
  const parts: string[] = [];
  for (const row of rows) {
    let line = '';
    for (const field of SERVICE_REQUEST_FIELDS) {
      const value = row[field];
      line += value === null ? '\\N\t' : `${value}\t`;
    }
    parts.push(line);
    if (parts.length === 4096) {
      hash.update(parts.join('\n') + '\n');
      parts.length = 0;
    }
  }
  if (parts.length > 0) hash.update(parts.join('\n') + '\n');
  hash.update(JSON.stringify(rules.map((r) => [r.id, r.rows_removed, r.values_changed, r.applied])));
  hash.update(JSON.stringify(extra));
  return hash.digest('hex');
}
