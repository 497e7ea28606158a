/**
 * Read API of a snapshot for the service (the data API decisions): metadata with the cleaning rules, daily
 * numbers for a scope, complaint-type counts. SQLite functions are synchronous (better-sqlite3);
 * the PostgreSQL ones take anything with `query` (pg.Pool, pg.Client, pg.PoolClient) and a schema.
 */
import type Database from 'better-sqlite3';
import type pg from 'pg';
import { daysInclusive } from './new-york-time.js';
import { SNAPSHOT_META_COLUMNS, tableName } from './snapshot-schema.js';
import {
  ALL_SCOPE,
  type Borough,
  type CleaningRuleKind,
  type CleaningRuleResult,
  type ComplaintTypeCount,
  type DailyStat,
  type SnapshotMeta,
  type SnapshotSourceKind,
} from './service-request.js';

export interface DailyStatsScope {
  borough?: Borough | undefined;
  complaintType?: string | undefined;
}

export interface PostgresQueryable {
  query: pg.ClientBase['query'];
}

/** A snapshot_meta row; a column added since a snapshot was written is absent from its row (undefined). */
type MetaRow = Partial<Record<(typeof SNAPSHOT_META_COLUMNS)[number], string | number | null>>;

// Numbers as the drivers hand them over: PostgreSQL's bigint and numeric columns arrive as strings
// (node-postgres does not parse them), SQLite's as numbers; the readers convert with Number().
type DriverNumber = number | string;

interface RuleRow {
  id: string;
  kind: string;
  description: string;
  rows_removed: DriverNumber;
  values_changed: DriverNumber;
  applied: DriverNumber;
}

interface DailyRow {
  day: string;
  opened: DriverNumber;
  closed_within_14_days: DriverNumber;
  share_closed_within_14_days: DriverNumber | null;
  median_days_to_close: DriverNumber | null;
}

// Every column, so that a snapshot of an earlier schema version (without the columns added since) is read too.
const META_SELECT = (table: string): string => `SELECT * FROM ${table} WHERE id = 1`;
const RULES_SELECT = (table: string): string =>
  `SELECT id, kind, description, rows_removed, values_changed, applied FROM ${table} ORDER BY position`;
const DAILY_SELECT = (table: string, [borough, complaintType, first, last]: readonly string[]): string =>
  `SELECT day, opened, closed_within_14_days, share_closed_within_14_days, median_days_to_close FROM ${table} WHERE borough = ${borough} AND complaint_type = ${complaintType} AND day >= ${first} AND day <= ${last} ORDER BY day`;
const COUNTS_SELECT = (table: string): string =>
  `SELECT complaint_type, request_count AS count FROM ${table} ORDER BY request_count DESC, complaint_type ASC`;

const str = (v: string | number | null | undefined): string => (v === null || v === undefined ? '' : String(v));
const strOrNull = (v: string | number | null | undefined): string | null => (v === null || v === undefined ? null : String(v));
const num = (v: string | number | null | undefined): number => Number(v);

function toSnapshotMeta(row: MetaRow | undefined, rules: RuleRow[]): SnapshotMeta {
  if (row === undefined) throw new Error('The snapshot has no metadata row (snapshot_meta is empty).');
  return {
    snapshot_id: str(row.snapshot_id),
    content_sha256: str(row.content_sha256),
    schema_version: num(row.schema_version),
    source: {
      kind: str(row.source_kind) as SnapshotSourceKind,
      description: str(row.source_description),
      dataset: 'erm2-nwe9',
      file_name: str(row.source_file_name),
      sha256: str(row.source_sha256),
      seed: row.source_seed === null ? null : num(row.source_seed),
      generator_version: strOrNull(row.generator_version),
      layout: str(row.source_layout),
      format: strOrNull(row.source_format),
      column_count: row.source_column_count === null || row.source_column_count === undefined ? null : num(row.source_column_count),
      missing_columns: row.source_missing_columns === null || row.source_missing_columns === undefined ? null : (JSON.parse(String(row.source_missing_columns)) as string[]),
    },
    snapshot_date: str(row.snapshot_date),
    row_count: num(row.row_count),
    raw_rows_read: num(row.raw_rows_read),
    created_at_min: strOrNull(row.created_at_min),
    created_at_max: strOrNull(row.created_at_max),
    period_start: str(row.period_start),
    period_end: str(row.period_end),
    filters_applied: num(row.filters_applied) === 1,
    cleaning_rules: rules.map(
      (r): CleaningRuleResult => ({
        id: r.id,
        kind: r.kind as CleaningRuleKind,
        description: r.description,
        rows_removed: Number(r.rows_removed),
        values_changed: Number(r.values_changed),
        applied: Number(r.applied) === 1,
      }),
    ),
    built_at: str(row.built_at),
  };
}

/** The parameters of DAILY_SELECT: the scope, then the first and last day. */
function dailyParameters(scope: DailyStatsScope, period: Pick<SnapshotMeta, 'period_start' | 'period_end'>): string[] {
  return [scope.borough ?? ALL_SCOPE, scope.complaintType ?? ALL_SCOPE, period.period_start, period.period_end];
}

/** One row per day from period_start to period_end; days (or scopes) absent from the table are zeros. */
function fillDays(meta: Pick<SnapshotMeta, 'period_start' | 'period_end'>, rows: DailyRow[]): DailyStat[] {
  const byDay = new Map(rows.map((r) => [r.day, r]));
  return daysInclusive(meta.period_start, meta.period_end).map((day): DailyStat => {
    const r = byDay.get(day);
    return r === undefined
      ? { day, opened: 0, closed_within_14_days: 0, share_closed_within_14_days: null, median_days_to_close: null }
      : {
          day,
          opened: Number(r.opened),
          closed_within_14_days: Number(r.closed_within_14_days),
          share_closed_within_14_days: r.share_closed_within_14_days === null ? null : Number(r.share_closed_within_14_days),
          median_days_to_close: r.median_days_to_close === null ? null : Number(r.median_days_to_close),
        };
  });
}

// ---------------------------------------------------------------- SQLite

/** Metadata of a SQLite snapshot, with its cleaning rules in order. */
export function readSnapshotMeta(db: Database.Database): SnapshotMeta {
  const row = db.prepare(META_SELECT('snapshot_meta')).get() as MetaRow | undefined;
  const rules = db.prepare(RULES_SELECT('cleaning_rules')).all() as RuleRow[];
  return toSnapshotMeta(row, rules);
}

/**
 * Daily numbers for one scope (no filter, a borough, a complaint type, or both): one row per day of
 * the snapshot's period, in order (181 for January to June 2025), zeros for an unknown complaint type.
 * Pass `meta` to save one query, or the first and last day of a part of the period (period_start and
 * period_end) to read that part only.
 */
export function readDailyStats(
  db: Database.Database,
  scope: DailyStatsScope = {},
  meta?: Pick<SnapshotMeta, 'period_start' | 'period_end'>,
): DailyStat[] {
  const period = meta ?? readSnapshotMeta(db);
  const rows = db.prepare(DAILY_SELECT('daily_stats', ['?', '?', '?', '?'])).all(...dailyParameters(scope, period)) as DailyRow[];
  return fillDays(period, rows);
}

/** Every complaint type with its count, largest first, then by name. */
export function readComplaintTypeCounts(db: Database.Database): ComplaintTypeCount[] {
  return db.prepare(COUNTS_SELECT('complaint_type_counts')).all() as ComplaintTypeCount[];
}

// ---------------------------------------------------------------- PostgreSQL

export async function readSnapshotMetaFromPostgres(db: PostgresQueryable, schema: string): Promise<SnapshotMeta> {
  const meta = await db.query(META_SELECT(tableName('postgres', 'snapshot_meta', schema)));
  const rules = await db.query(RULES_SELECT(tableName('postgres', 'cleaning_rules', schema)));
  return toSnapshotMeta(meta.rows[0] as MetaRow | undefined, rules.rows as RuleRow[]);
}

export async function readDailyStatsFromPostgres(
  db: PostgresQueryable,
  schema: string,
  scope: DailyStatsScope = {},
  meta?: Pick<SnapshotMeta, 'period_start' | 'period_end'>,
): Promise<DailyStat[]> {
  const period = meta ?? (await readSnapshotMetaFromPostgres(db, schema));
  const result = await db.query(DAILY_SELECT(tableName('postgres', 'daily_stats', schema), ['$1', '$2', '$3', '$4']), dailyParameters(scope, period));
  return fillDays(period, result.rows as DailyRow[]);
}

export async function readComplaintTypeCountsFromPostgres(db: PostgresQueryable, schema: string): Promise<ComplaintTypeCount[]> {
  const result = await db.query(COUNTS_SELECT(tableName('postgres', 'complaint_type_counts', schema)));
  return (result.rows as { complaint_type: string; count: number | string }[]).map((r) => ({
    complaint_type: r.complaint_type,
    count: Number(r.count),
  }));
}
