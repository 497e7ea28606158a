import type { ComplaintTypeCount, DailyStat, SnapshotMeta } from '../../../snapshot/index.js';
import { dataNotice } from '../data-notice.js';
import { lastCompleteDay } from '../engine/period-stats.js';
import type { ComplaintTypeCountRecord, DailyStatRecord, DatasetRecord, DayInterval } from './service-request-store.js';

/**
 * The one place that turns the snapshot builder's side tables, as its readers give them
 * (src/snapshot/snapshot-readers.ts: snapshot_meta with the cleaning rules,
 * daily_stats, complaint_type_counts), into the answers of this API.
 */
export function toDatasetRecord(meta: SnapshotMeta): DatasetRecord {
  return {
    snapshot_id: meta.snapshot_id,
    snapshot_date: meta.snapshot_date,
    source: { ...meta.source },
    notice: dataNotice(meta.source),
    row_count: meta.row_count,
    raw_rows_read: meta.raw_rows_read,
    created_at_min: meta.created_at_min,
    created_at_max: meta.created_at_max,
    period: { start: meta.period_start, end: meta.period_end },
    cleaning_rules: meta.cleaning_rules.map((rule) => ({ ...rule })),
  };
}

export function toDailyStatRecords(stats: readonly DailyStat[], snapshotDate: string): DailyStatRecord[] {
  const completeThrough = lastCompleteDay(snapshotDate);
  return stats.map((stat) => ({
    date: stat.day,
    opened: stat.opened,
    closed_within_14_days: stat.closed_within_14_days,
    share_closed_within_14_days: stat.share_closed_within_14_days,
    median_days_to_close: stat.median_days_to_close,
    complete: stat.day <= completeThrough,
  }));
}

/** The snapshot's period, or the days of it asked for (the period bounds of readDailyStats). */
export function periodPart(meta: Pick<SnapshotMeta, 'period_start' | 'period_end'>, days: DayInterval | undefined): Pick<SnapshotMeta, 'period_start' | 'period_end'> {
  if (days === undefined) return meta;
  return { period_start: days.first > meta.period_start ? days.first : meta.period_start, period_end: days.last < meta.period_end ? days.last : meta.period_end };
}

export function toComplaintTypeCountRecords(counts: readonly ComplaintTypeCount[]): ComplaintTypeCountRecord[] {
  return counts.map((count) => ({ complaint_type: count.complaint_type, count: count.count }));
}

/** The readiness probe: the snapshot's metadata row and one request can be read. */
export function readinessSql(table: (name: string) => string): string[] {
  return [`SELECT snapshot_id FROM ${table('snapshot_meta')} WHERE id = 1`, `SELECT id FROM ${table('service_requests')} LIMIT 1`];
}
