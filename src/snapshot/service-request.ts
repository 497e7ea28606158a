/**
 * Types of the service-request snapshot: the cleaned rows (fields exactly as the contract's
 * ServiceRequest table), the precomputed numbers and the snapshot's metadata.
 */

export const BOROUGHS = ['bronx', 'brooklyn', 'manhattan', 'queens', 'staten_island'] as const;
export type Borough = (typeof BOROUGHS)[number];

export const STATUSES = ['open', 'assigned', 'in_progress', 'pending', 'closed'] as const;
export type Status = (typeof STATUSES)[number];

export const CHANNELS = ['online', 'phone', 'mobile', 'other'] as const;
export type Channel = (typeof CHANNELS)[number];

/** One cleaned request: the contract's ServiceRequest, field for field. */
export interface ServiceRequest {
  id: number;
  /** Local time of New York, `YYYY-MM-DDTHH:MM:SS`. */
  created_at: string;
  closed_at: string | null;
  status: Status;
  complaint_type: string | null;
  descriptor: string | null;
  location_type: string | null;
  borough: Borough | null;
  community_board: string | null;
  council_district: number | null;
  incident_zip: string | null;
  channel: Channel | null;
  latitude: number | null;
  longitude: number | null;
  /** Real elapsed days from created_at to closed_at (America/New_York), 2 decimals. */
  days_to_close: number | null;
}

/** The contract's field order; the storage columns follow it. */
export const SERVICE_REQUEST_FIELDS = [
  'id',
  'created_at',
  'closed_at',
  'status',
  'complaint_type',
  'descriptor',
  'location_type',
  'borough',
  'community_board',
  'council_district',
  'incident_zip',
  'channel',
  'latitude',
  'longitude',
  'days_to_close',
] as const satisfies readonly (keyof ServiceRequest)[];

/** Value of the `borough` / `complaint_type` scope columns of daily_stats meaning "all". */
export const ALL_SCOPE = '*';

/** One day of `GET /v1/stats/daily`. */
export interface DailyStat {
  /** `YYYY-MM-DD`, local date of created_at. */
  day: string;
  /** Requests created that day (matching the scope). */
  opened: number;
  /** Of those, requests with days_to_close <= 14. */
  closed_within_14_days: number;
  /** closed_within_14_days / opened, 4 decimals; null when opened is 0. */
  share_closed_within_14_days: number | null;
  /** Median days_to_close of the requests opened that day that have a close time, 2 decimals; null when none. */
  median_days_to_close: number | null;
}

export interface ComplaintTypeCount {
  complaint_type: string;
  count: number;
}

export type CleaningRuleKind = 'filter' | 'removal' | 'transformation';

/** One cleaning rule as applied to one snapshot. */
export interface CleaningRuleResult {
  id: string;
  kind: CleaningRuleKind;
  description: string;
  /** Rows this rule removed (rules are applied in order; a row is counted by the first rule that removes it). */
  rows_removed: number;
  /** For transformations: values this rule changed in the kept rows (0 for filters and removals). */
  values_changed: number;
  /** False when the rule was switched off (the filters under --no-filter). */
  applied: boolean;
}

export type SnapshotSourceKind = 'synthetic' | 'file';

export interface SnapshotSource {
  kind: SnapshotSourceKind;
  /** Human text, e.g. "synthetic, in the layout of NYC Open Data erm2-nwe9 (seed 311, generator 1.1.0)". */
  description: string;
  /** Dataset the layout comes from. */
  dataset: 'erm2-nwe9';
  /** File name (without directories) of a real export, or of the synthetic export as it would be written. */
  file_name: string;
  /** SHA-256 of the raw export bytes. */
  sha256: string;
  /** Synthetic only. */
  seed: number | null;
  generator_version: string | null;
  /** Layout found: 'standard-41' or 'extended' (extra columns such as Council District). */
  layout: string;
  /**
   * The export's layout as read: 'portal_csv', 'api_csv', 'api_json' or 'json_lines' (null in a
   * snapshot written before it was recorded, schema_version 3).
   */
  format: string | null;
  /** Columns of the export's header (JSON: distinct keys of its records); null as format. */
  column_count: number | null;
  /** The read columns the export lacked (their fields are null in every row), by their portal names; null as format. */
  missing_columns: string[] | null;
}

export interface SnapshotMeta {
  /** 16 hex characters: start of content_sha256. Changes when any row, count or rule changes. */
  snapshot_id: string;
  /** SHA-256 of the canonical content (rows in (created_at, id) order, then the rules). */
  content_sha256: string;
  schema_version: number;
  source: SnapshotSource;
  /** `YYYY-MM-DD`: the day the export reflects (statuses are as of that day). */
  snapshot_date: string;
  row_count: number;
  raw_rows_read: number;
  /** Smallest and largest created_at of the rows (null when there are no rows). */
  created_at_min: string | null;
  created_at_max: string | null;
  /** Days covered by daily_stats, inclusive, `YYYY-MM-DD`. */
  period_start: string;
  period_end: string;
  /** Whether the DOT and date filters were applied. */
  filters_applied: boolean;
  cleaning_rules: CleaningRuleResult[];
  /** Wall-clock time of the build, ISO 8601 UTC (informative, not part of snapshot_id). */
  built_at: string;
}
