/**
 * What a grouping of `/v1/stats/groups` names: its columns, periods and measures, and the question a
 * scan of the row columns is asked (group-scan.ts counts it). Definitions only: the store's
 * interface and the scans read them without importing the engine.
 */
import type { CodedColumn } from '../../../snapshot/index.js';

/** The columns a grouping may name (`by`). */
export const GROUP_COLUMNS = [
  'borough',
  'complaint_type',
  'descriptor',
  'status',
  'channel',
  'council_district',
  'incident_zip',
  'location_type',
  'community_board',
] as const satisfies readonly CodedColumn[];
export type GroupColumn = (typeof GROUP_COLUMNS)[number];

/** Codes are below 2^16: a key of a grouping is its first code * CODE_SPAN + its second (0 for one column), below 2^32. */
export const CODE_SPAN = 65_536;

/** The most columns one grouping names. */
export const GROUP_COLUMNS_MAXIMUM = 2;

export const GROUP_PERIODS = ['day', 'week', 'month', 'year'] as const;
export type GroupPeriod = (typeof GROUP_PERIODS)[number];

/** The numbers of a group, each of which may order the groups. */
export const GROUP_MEASURES = ['opened', 'closed', 'closed_within_14_days', 'share_closed_within_14_days', 'median_days_to_close', 'p90_days_to_close'] as const;
export type GroupMeasure = (typeof GROUP_MEASURES)[number];

/** What a grouping asks for. */
export interface GroupQuery {
  by: readonly GroupColumn[];
  period: GroupPeriod | null;
  order: GroupMeasure;
  descending: boolean;
  limit: number;
}

/** A grouping as a scan states it: with, per column of `by`, the rank of each code's value in the order of the values (compareFilterValues). */
export interface GroupScan extends GroupQuery {
  ranks: Uint32Array[];
}

