import type { ServiceRequestRecord } from '../../../src/services/requests/store/service-request-store.js';
import { FIXTURE_PERIOD, inApiOrder } from './fixture-database.js';

/** What the API should answer, computed here from the rows themselves (independently of the database). */
export interface Filters {
  borough?: string;
  complaint_type?: string;
  status?: string;
  created_from?: string;
  created_to?: string;
}

function bound(value: string): string {
  return value.length === 10 ? `${value}T00:00:00` : value;
}

export function expectedList(rows: readonly ServiceRequestRecord[], filters: Filters): ServiceRequestRecord[] {
  return inApiOrder(
    rows.filter(
      (row) =>
        (filters.borough === undefined || row.borough === filters.borough) &&
        (filters.complaint_type === undefined || row.complaint_type === filters.complaint_type) &&
        (filters.status === undefined || row.status === filters.status) &&
        (filters.created_from === undefined || row.created_at >= bound(filters.created_from)) &&
        (filters.created_to === undefined || row.created_at < bound(filters.created_to)),
    ),
  );
}

export function queryOf(parameters: Record<string, string | number | undefined>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(parameters)) if (value !== undefined) search.set(name, String(value));
  const text = search.toString();
  return text === '' ? '' : `?${text}`;
}

export function expectedComplaintTypes(rows: readonly ServiceRequestRecord[]): { complaint_type: string; count: number }[] {
  const counts = new Map<string, number>();
  for (const row of rows) if (row.complaint_type !== null) counts.set(row.complaint_type, (counts.get(row.complaint_type) ?? 0) + 1);
  return [...counts]
    .map(([complaint_type, count]) => ({ complaint_type, count }))
    .sort((a, b) => b.count - a.count || (a.complaint_type < b.complaint_type ? -1 : 1));
}

function median(values: number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  const value = sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
  return Math.round(value * 100) / 100;
}

export function fixtureDays(): string[] {
  const days: string[] = [];
  for (let t = Date.parse(`${FIXTURE_PERIOD.start}T00:00:00Z`); t <= Date.parse(`${FIXTURE_PERIOD.end}T00:00:00Z`); t += 86_400_000) {
    days.push(new Date(t).toISOString().slice(0, 10));
  }
  return days;
}

export function expectedDaily(rows: readonly ServiceRequestRecord[], scope: { borough?: string; complaint_type?: string }) {
  const scoped = rows.filter(
    (row) =>
      (scope.borough === undefined || row.borough === scope.borough) &&
      (scope.complaint_type === undefined || row.complaint_type === scope.complaint_type),
  );
  return fixtureDays().map((date) => {
    const opened = scoped.filter((row) => row.created_at.startsWith(date));
    const closeDays = opened.map((row) => row.days_to_close).filter((days): days is number => days !== null);
    const within = closeDays.filter((days) => days <= 14).length;
    return {
      date,
      opened: opened.length,
      closed_within_14_days: within,
      share_closed_within_14_days: opened.length === 0 ? null : Math.round((within / opened.length) * 10_000) / 10_000,
      median_days_to_close: median(closeDays),
      // the fixture's snapshot date is 2025-07-01: every day of January has its 14 days
      complete: true,
    };
  });
}

/** Query parameters, each with its values in order (a repeated parameter has several). */
export type Query = Record<string, string[]>;

export function queryText(query: Query): string {
  const search = new URLSearchParams();
  for (const [name, values] of Object.entries(query)) for (const value of values) search.append(name, value);
  const text = search.toString();
  return text === '' ? '' : `?${text}`;
}

/**
 * The filters of the dashboard API decisions spelled out on one row: any of a parameter's values; `none` selects null
 * for borough, complaint_type and channel; the bbox inclusive; list parameters (limit, cursor,
 * format, field) ignored.
 */
export function matchesQuery(row: ServiceRequestRecord, query: Query): boolean {
  const nullable = new Set(['borough', 'complaint_type', 'channel']);
  for (const [name, values] of Object.entries(query)) {
    if (['limit', 'cursor', 'format', 'field'].includes(name)) continue;
    if (name === 'created_from') {
      if (row.created_at < bound(values[0]!)) return false;
    } else if (name === 'created_to') {
      if (row.created_at >= bound(values[0]!)) return false;
    } else if (name === 'bbox') {
      const [minLong, minLat, maxLong, maxLat] = values[0]!.split(',').map(Number) as [number, number, number, number];
      if (row.latitude === null || row.longitude === null) return false;
      if (row.longitude < minLong || row.longitude > maxLong || row.latitude < minLat || row.latitude > maxLat) return false;
    } else {
      const value = row[name as keyof ServiceRequestRecord];
      const hit = values.some((wanted) => (wanted === 'none' && nullable.has(name) ? value === null : value !== null && String(value) === wanted));
      if (!hit) return false;
    }
  }
  return true;
}

/** RFC 4180 records (CRLF line ends, quoted fields with doubled quotes), the header row first. */
export function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let i = 0;
  let quoted = false;
  while (i < text.length) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i += 2;
        continue;
      }
      if (c === '"') quoted = false;
      else field += c;
      i += 1;
      continue;
    }
    if (c === '"') quoted = true;
    else if (c === ',') {
      record.push(field);
      field = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      record.push(field);
      records.push(record);
      record = [];
      field = '';
      i += 1;
    } else field += c;
    i += 1;
  }
  if (field !== '' || record.length > 0) throw new Error('CSV does not end with CRLF');
  return records;
}
