import { ApiError } from '../../../platform/error-registry.js';
import { UnavailableDependencyError } from '../../../platform/error-handler.js';
import type { CursorPosition } from '../cursor.js';
import { EQUALITY_FILTERS, type FilterValue, type ListFilters } from '../list-filters.js';
import type { GroupQuery } from '../engine/group-query.js';
import { SERVICE_REQUEST_FIELDS, type ServiceRequest, type SummaryUnit } from '../../../snapshot/index.js';

/**
 * What the routes read, the same on SQLite and PostgreSQL. Every method rejects with
 * DatabaseUnavailableError when the database cannot be read; the platform's error handler answers it
 * with 503 database_unavailable (never 500), wherever a route lets it through.
 */

/** One request, the contract's ServiceRequest field for field, as the snapshot stores it. */
export type ServiceRequestRecord = ServiceRequest;

/** The contract's field order; the SELECT lists follow it. */
export const SERVICE_REQUEST_COLUMNS = SERVICE_REQUEST_FIELDS;

/** The columns a facet counts: the equality filters, and location_type. */
export const FACET_COLUMNS = [...EQUALITY_FILTERS, 'location_type'] as const;
export type FacetColumn = (typeof FACET_COLUMNS)[number];

export interface ValueCount {
  value: FilterValue;
  count: number;
}

/**
 * The numbers of one bucket's requests (a day, an ISO week or a month), as the aggregate summaries
 * keep them (summary-answers.ts) and as the stores count them from the rows (bucketsFromRows).
 */
export interface BucketSummary {
  opened: number;
  closedWithin: number;
  /** The two middle days_to_close of the bucket's requests that have one (null when none has). */
  lowMiddle: number | null;
  highMiddle: number | null;
}

/** The numbers of a group of `/v1/stats/groups` (engine/group-scan.ts). */
export interface GroupNumbers {
  opened: number;
  closed: number;
  closed_within_14_days: number;
  share_closed_within_14_days: number | null;
  median_days_to_close: number | null;
  p90_days_to_close: number | null;
}

/** The groups kept (each key's periods in time order) and, per period, the numbers of those left out. */
export interface GroupsRecord {
  items: ({ key: Record<string, FilterValue>; period?: string } & GroupNumbers)[];
  others: ({ period?: string } & GroupNumbers)[];
}

export interface ListPageQuery {
  filters: ListFilters;
  /** Rows strictly after this (created_at, id); null for the first page. */
  after: CursorPosition | null;
  /** How many rows to fetch (the page size plus one, to know whether more follow). */
  fetch: number;
}

export interface ComplaintTypeCountRecord {
  complaint_type: string;
  count: number;
}

export interface DailyStatRecord {
  date: string;
  opened: number;
  closed_within_14_days: number;
  share_closed_within_14_days: number | null;
  median_days_to_close: number | null;
  /** False while the day's 14-day window reaches past the snapshot date (period-stats.ts). */
  complete: boolean;
}

export interface DailyScope {
  borough: string | null;
  complaint_type: string | null;
}

/** Days from `first` to `last`, both included (`YYYY-MM-DD`). */
export interface DayInterval {
  first: string;
  last: string;
}

export interface CleaningRuleRecord {
  id: string;
  kind: string;
  description: string;
  rows_removed: number;
  values_changed: number;
  applied: boolean;
}

export interface DatasetRecord {
  snapshot_id: string;
  snapshot_date: string;
  source: {
    kind: string;
    description: string;
    dataset: string;
    file_name: string;
    sha256: string;
    seed: number | null;
    generator_version: string | null;
    layout: string;
    format: string | null;
    column_count: number | null;
    missing_columns: string[] | null;
  };
  /** Whether the data is synthetic or a real export, in one plain sentence (data-notice.ts). */
  notice: string;
  row_count: number;
  raw_rows_read: number;
  created_at_min: string | null;
  created_at_max: string | null;
  period: { start: string; end: string };
  cleaning_rules: CleaningRuleRecord[];
}

/** What a store may hold in memory. */
export interface StoreMemoryOptions {
  /**
   * The most bytes the row columns of a snapshot may take (row-columns-memory.ts); a snapshot whose
   * row columns are larger is served without them (its walks, or SQL). Default: no bound.
   */
  rowColumnsMaxBytes?: number;
}

export interface ServiceRequestStore {
  /**
   * The ids of the rows matching the filters after the position, ordered by (created_at, id), at
   * most `fetch`: the keyset query, answered from the indexes.
   */
  listIds(query: ListPageQuery): Promise<number[]>;
  /** How many rows match the filters. */
  count(filters: ListFilters): Promise<number>;
  /** Each value of the column among the matching rows with its count, largest first, then by value, null last. */
  facet(column: FacetColumn, filters: ListFilters): Promise<ValueCount[]>;
  /**
   * The matching rows' numbers per bucket of the unit (buckets without one are absent), counted from
   * the rows where they are (the database, or a worker thread): no value per row reaches the event loop.
   */
  bucketsFromRows(filters: ListFilters, unit: SummaryUnit): Promise<Map<string, BucketSummary>>;
  /**
   * The same from the snapshot's aggregate summaries; null when they do not hold them (then
   * bucketsFromRows answers).
   */
  periodSummaries(filters: ListFilters, unit: SummaryUnit): Promise<Map<string, BucketSummary> | null>;
  /**
   * [cell, count] of the matching requests (the filters hold a box) per cell of `multiple` map grid
   * cells across (map-cells.ts, coarseCellSql), by cell number, non-empty cells only: counted where
   * the rows are (the database, or a worker thread).
   */
  cellCounts(filters: ListFilters, multiple: number): Promise<[cell: number, count: number][]>;
  /**
   * The matching rows grouped (engine/group-scan.ts), counted by a walk worker over the row columns;
   * rejects with 503 overloaded while they are not loaded (and for a snapshot without them).
   */
  groups(filters: ListFilters, query: GroupQuery): Promise<GroupsRecord>;
  /** The rows with these ids, in any order; unknown ids are absent. */
  rowsById(ids: readonly number[]): Promise<ServiceRequestRecord[]>;
  /** Every complaint type with its count, largest first, then by name. */
  complaintTypeCounts(): Promise<ComplaintTypeCountRecord[]>;
  /**
   * One row per day of the snapshot's period (or of its days from `days.first` to `days.last`), for
   * all requests or one borough and/or complaint type.
   */
  dailyStats(scope: DailyScope, days?: DayInterval): Promise<DailyStatRecord[]>;
  dataset(): Promise<DatasetRecord>;
  /**
   * The id of the snapshot the store reads now. A refresh (a new snapshot published while the service
   * runs) changes it at the moment the store's reads move to the new snapshot, never before nor after:
   * when it is the same before and after a series of reads, they all read that one snapshot.
   */
  snapshotId(): Promise<string>;
  /** Calls `listener` each time the store moves to a new snapshot (what was kept of the old one is stale). */
  onSnapshotChange(listener: () => void): void;
  /** PostgreSQL: connections of the pool in use, idle, and queries waiting for one; absent for SQLite. */
  poolUse?(): { total: number; idle: number; waiting: number };
  /** Reads the database; rejects when it cannot be read. */
  ping(): Promise<void>;
  /**
   * Makes the store ready to answer at full speed (its threads started, the file or snapshot opened,
   * its row columns loaded); the requests app starts it as the service starts, and ping waits for the
   * first one to end. Rejects when the database cannot be read.
   */
  warmUp(): Promise<void>;
  close(): Promise<void>;
}

/** The database could not be read (missing file, closed connection, server down, missing table...). */
export class DatabaseUnavailableError extends UnavailableDependencyError {
  constructor(cause: unknown) {
    super(new ApiError('database_unavailable'), cause);
    this.name = 'DatabaseUnavailableError';
  }
}
