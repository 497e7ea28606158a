import type {
  CleaningRuleRecord,
  ComplaintTypeCountRecord,
  DailyScope,
  DailyStatRecord,
  DatasetRecord,
} from './service-request-store.js';

/**
 * The one place that knows the snapshot's side tables (written by the snapshot builder,
 * src/services/requests/snapshot/snapshot-schema.ts): snapshot_meta (one row), cleaning_rules,
 * daily_stats (one row per scope and day; `*` means all boroughs / all complaint types) and
 * complaint_type_counts. The SQL uses `?` placeholders; the PostgreSQL store numbers them.
 */
export const ALL_SCOPE = '*';

export type TableNamer = (table: string) => string;

export function snapshotIdSql(t: TableNamer): string {
  return `SELECT snapshot_id FROM ${t('snapshot_meta')} WHERE id = 1`;
}

export function metaSql(t: TableNamer): string {
  return `SELECT snapshot_id, snapshot_date, source_kind, source_description, source_dataset, source_file_name, source_sha256,
  source_seed, generator_version, source_layout, row_count, raw_rows_read, created_at_min, created_at_max, period_start, period_end
FROM ${t('snapshot_meta')} WHERE id = 1`;
}

export function cleaningRulesSql(t: TableNamer): string {
  return `SELECT id, kind, description, rows_removed, values_changed, applied FROM ${t('cleaning_rules')} ORDER BY position`;
}

export function complaintTypeCountsSql(t: TableNamer): string {
  return `SELECT complaint_type, request_count AS count FROM ${t('complaint_type_counts')} ORDER BY request_count DESC, complaint_type ASC`;
}

/** Parameters: borough scope, complaint type scope. */
export function dailyStatsSql(t: TableNamer): string {
  return `SELECT day AS date, opened, closed_within_14_days, share_closed_within_14_days, median_days_to_close
FROM ${t('daily_stats')} WHERE borough = ? AND complaint_type = ? ORDER BY day`;
}

export function dailyScopeParameters(scope: DailyScope): [string, string] {
  return [scope.borough ?? ALL_SCOPE, scope.complaint_type ?? ALL_SCOPE];
}

/** Parameters: none. The period, to give a scope without any request its days of zeros. */
export function periodSql(t: TableNamer): string {
  return `SELECT period_start, period_end FROM ${t('snapshot_meta')} WHERE id = 1`;
}

export interface MetaRow {
  snapshot_id: string;
  snapshot_date: string;
  source_kind: string;
  source_description: string;
  source_dataset: string;
  source_file_name: string;
  source_sha256: string;
  source_seed: number | string | null;
  generator_version: string | null;
  source_layout: string;
  row_count: number;
  raw_rows_read: number;
  created_at_min: string | null;
  created_at_max: string | null;
  period_start: string;
  period_end: string;
}

export interface CleaningRuleRow {
  id: string;
  kind: string;
  description: string;
  rows_removed: number;
  values_changed: number;
  applied: number | boolean;
}

export function toDataset(meta: MetaRow, rules: readonly CleaningRuleRow[]): DatasetRecord {
  return {
    snapshot_id: meta.snapshot_id,
    snapshot_date: meta.snapshot_date,
    source: {
      kind: meta.source_kind,
      description: meta.source_description,
      dataset: meta.source_dataset,
      file_name: meta.source_file_name,
      sha256: meta.source_sha256,
      // bigint on PostgreSQL arrives as text
      seed: meta.source_seed === null ? null : Number(meta.source_seed),
      generator_version: meta.generator_version,
      layout: meta.source_layout,
    },
    row_count: Number(meta.row_count),
    raw_rows_read: Number(meta.raw_rows_read),
    created_at_min: meta.created_at_min,
    created_at_max: meta.created_at_max,
    period: { start: meta.period_start, end: meta.period_end },
    cleaning_rules: rules.map(
      (rule): CleaningRuleRecord => ({
        id: rule.id,
        kind: rule.kind,
        description: rule.description,
        rows_removed: Number(rule.rows_removed),
        values_changed: Number(rule.values_changed),
        applied: rule.applied === true || rule.applied === 1,
      }),
    ),
  };
}

export function toComplaintTypeCounts(rows: readonly { complaint_type: string; count: number | string }[]): ComplaintTypeCountRecord[] {
  return rows.map((row) => ({ complaint_type: row.complaint_type, count: Number(row.count) }));
}

/** Every day from start to end (inclusive, `YYYY-MM-DD`). */
export function daysOfPeriod(start: string, end: string): string[] {
  const days: string[] = [];
  const dayMs = 86_400_000;
  const first = Date.parse(`${start}T00:00:00Z`);
  const last = Date.parse(`${end}T00:00:00Z`);
  if (Number.isNaN(first) || Number.isNaN(last)) return days;
  for (let t = first; t <= last; t += dayMs) days.push(new Date(t).toISOString().slice(0, 10));
  return days;
}

/** The days of a scope without any request (e.g. an unknown complaint type): zeros, share and median null. */
export function emptyDays(start: string, end: string): DailyStatRecord[] {
  return daysOfPeriod(start, end).map((date) => ({
    date,
    opened: 0,
    closed_within_14_days: 0,
    share_closed_within_14_days: null,
    median_days_to_close: null,
  }));
}
