/** What a snapshot writer stores: the rows, the precomputed numbers and the metadata. */
import type { DailyStatRow } from '../../snapshot/snapshot-aggregates.js';
import { SNAPSHOT_META_COLUMNS } from '../../snapshot/snapshot-schema.js';
import type { ComplaintTypeCount, ServiceRequest, SnapshotMeta } from '../../snapshot/service-request.js';

/** Where a snapshot is stored: a SQLite file, or a PostgreSQL database (and schema). */
export type SnapshotOutput = { kind: 'sqlite'; path: string } | { kind: 'postgres'; url: string; schema?: string };

export interface SnapshotContent {
  /** Sorted by (created_at, id). */
  rows: readonly ServiceRequest[];
  dailyStats: readonly DailyStatRow[];
  complaintTypeCounts: readonly ComplaintTypeCount[];
  meta: SnapshotMeta;
}

/**
 * What a snapshot writer stores, as a stream: the rows, read once, then the summaries, which are
 * complete only once every row has been read (the numbers and the content hash are computed as the
 * rows pass). A writer stores the rows, builds the indexes, then calls `summaries()`.
 */
export interface SnapshotStream {
  /** Sorted by (created_at, id); iterated once. */
  rows: Iterable<ServiceRequest>;
  /** The number of rows, or an upper bound (for progress). */
  rowsExpected: number;
  summaries: () => SnapshotSummaries;
}

export interface SnapshotSummaries {
  dailyStats: Iterable<DailyStatRow>;
  complaintTypeCounts: readonly ComplaintTypeCount[];
  meta: SnapshotMeta;
}

/** Content held in memory as a stream. */
export function streamOf(content: SnapshotContent | SnapshotStream): SnapshotStream {
  if ('summaries' in content) return content;
  return { rows: content.rows, rowsExpected: content.rows.length, summaries: () => content };
}

/** Progress of a writer: rows stored so far out of the total. */
export type WriteProgress = (rowsWritten: number, rowsTotal: number) => void;

/** snapshot_meta values in the order of SNAPSHOT_META_COLUMNS. */
export function snapshotMetaValues(meta: SnapshotMeta): (string | number | null)[] {
  const values: Record<(typeof SNAPSHOT_META_COLUMNS)[number], string | number | null> = {
    snapshot_id: meta.snapshot_id,
    content_sha256: meta.content_sha256,
    schema_version: meta.schema_version,
    source_kind: meta.source.kind,
    source_description: meta.source.description,
    source_dataset: meta.source.dataset,
    source_file_name: meta.source.file_name,
    source_sha256: meta.source.sha256,
    source_seed: meta.source.seed,
    generator_version: meta.source.generator_version,
    source_layout: meta.source.layout,
    source_format: meta.source.format,
    source_column_count: meta.source.column_count,
    source_missing_columns: meta.source.missing_columns === null ? null : JSON.stringify(meta.source.missing_columns),
    snapshot_date: meta.snapshot_date,
    row_count: meta.row_count,
    raw_rows_read: meta.raw_rows_read,
    created_at_min: meta.created_at_min,
    created_at_max: meta.created_at_max,
    period_start: meta.period_start,
    period_end: meta.period_end,
    filters_applied: meta.filters_applied ? 1 : 0,
    built_at: meta.built_at,
  };
  return SNAPSHOT_META_COLUMNS.map((column) => values[column]);
}
