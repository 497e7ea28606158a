/**
 * Cleaning of an export: reads CSV records (header first), applies the rules of cleaning-rules.ts
 * in the order of CLEANING_RULES and returns the cleaned requests sorted by (created_at, id), with
 * each rule's count. Each rule's logic is in its entry in cleaning-rules.ts; this file only reads
 * the records and calls them.
 */
import {
  CLEANING_RULES,
  type CleaningCounts,
  type RepeatCandidate,
  agencyNotDot,
  boroughCode,
  canonicalSpelling,
  channelCode,
  closedBeforeCreated,
  coordinatesNumeric,
  councilDistrictInteger,
  createdOutsidePeriod,
  daysToClose,
  duplicateUniqueKey,
  freeTextDropped,
  incidentZipText,
  localTimestamps,
  malformedRecord,
  placeholderToNull,
  repeatedSubmission,
  statusCode,
} from './cleaning-rules.js';
import { readCsvRecordBatches } from './csv-reader.js';
import { type ExportLayout, locateExportColumns } from './export-columns.js';
import { cityLocalTimeToEpochMs, wallTimeMs } from './new-york-time.js';
import type { CleaningRuleResult, ServiceRequest } from './service-request.js';

export interface CleaningOptions {
  /** Apply the DOT and period filters (default true). Off for exports of other agencies or years. */
  applyFilters?: boolean;
  /** Called after each batch with the number of data records read so far. */
  onRecords?: (recordsRead: number) => void;
}

export interface CleanedExport {
  /** Sorted by created_at, then id. */
  rows: ServiceRequest[];
  rules: CleaningRuleResult[];
  rawRowsRead: number;
  layout: ExportLayout;
  filtersApplied: boolean;
  /** Latest valid Created or Closed Date read in the whole export (local time), or null. */
  latestTimestamp: string | null;
}

/** A request that passed the removal rules before the repeat check. */
interface Candidate extends RepeatCandidate {
  /** created_at as a wall time (sorts like the text). */
  createdWallMs: number;
}

/**
 * Clean CSV record batches (the first record of the first batch is the header) into the snapshot's
 * requests. Throws MissingColumnError when a needed column is absent.
 */
export async function cleanExportRecords(
  batches: AsyncIterable<string[][]>,
  options: CleaningOptions = {},
): Promise<CleanedExport> {
  const applyFilters = options.applyFilters ?? true;
  const counts = Object.fromEntries(CLEANING_RULES.map((rule) => [rule.id, 0])) as CleaningCounts;
  const seenKeys = new Set<number>();
  const candidates: Candidate[] = [];
  let layout: ExportLayout | undefined;
  let rawRowsRead = 0;
  let latestTimestamp: string | null = null;

  for await (const batch of batches) {
    let start = 0;
    if (layout === undefined) {
      const header = batch[0];
      if (header === undefined) continue;
      layout = locateExportColumns(header);
      start = 1;
    }
    for (let r = start; r < batch.length; r++) {
      const f = batch[r] as string[];
      rawRowsRead++;
      const record = malformedRecord.read(f, layout);
      if (record === null) {
        counts.malformed_record++;
        continue;
      }
      const { id, createdAt } = record;
      const closedRaw = f[layout.columns.closedDate] as string;
      const closedAt = closedRaw.length === 0 ? null : localTimestamps.parse(closedRaw);
      if (latestTimestamp === null || createdAt > latestTimestamp) latestTimestamp = createdAt;
      if (closedAt !== null && closedAt > latestTimestamp) latestTimestamp = closedAt;
      if (applyFilters) {
        if (agencyNotDot.removes(f, layout)) {
          counts.agency_not_dot++;
          continue;
        }
        if (createdOutsidePeriod.removes(createdAt)) {
          counts.created_outside_period++;
          continue;
        }
      }
      if (duplicateUniqueKey.removes(id, seenKeys)) {
        counts.duplicate_unique_key++;
        continue;
      }
      if (closedBeforeCreated.removes(createdAt, closedAt)) {
        counts.closed_before_created++;
        continue;
      }
      candidates.push(readCandidate(f, layout, id, createdAt, closedAt, closedRaw, counts));
    }
    options.onRecords?.(rawRowsRead);
  }
  if (layout === undefined) throw new Error('The export is empty: no header row was found.');

  canonicalSpelling.apply(candidates, counts);
  candidates.sort((a, b) => a.createdWallMs - b.createdWallMs || a.row.id - b.row.id);
  const rows = repeatedSubmission.keepFirstSubmissions(candidates, counts);

  const rules: CleaningRuleResult[] = CLEANING_RULES.map((rule) => {
    const applied = rule.kind !== 'filter' || applyFilters;
    const count = counts[rule.id];
    return {
      id: rule.id,
      kind: rule.kind,
      description: rule.description,
      rows_removed: rule.kind === 'transformation' ? 0 : count,
      values_changed: rule.kind === 'transformation' ? count : 0,
      applied,
    };
  });
  return { rows, rules, rawRowsRead, layout, filtersApplied: applyFilters, latestTimestamp };
}

/** Columns the cleaning reads, as a mask for the CSV reader. */
function usedColumnMask(header: readonly string[]): boolean[] {
  const used = new Set(Object.values(locateExportColumns(header).columns));
  return header.map((_, i) => used.has(i));
}

/** Clean CSV text chunks (header first): the CSV reader skips the columns cleaning never reads. */
export function cleanExportText(
  chunks: AsyncIterable<string> | Iterable<string>,
  options: CleaningOptions = {},
): Promise<CleanedExport> {
  return cleanExportRecords(readCsvRecordBatches(chunks, { selectColumns: usedColumnMask }), options);
}

/** The stored fields of a record that passed the removal rules, through the transformation rules. */
function readCandidate(
  f: string[],
  layout: ExportLayout,
  id: number,
  createdAt: string,
  closedAt: string | null,
  closedRaw: string,
  counts: CleaningCounts,
): Candidate {
  const c = layout.columns;
  localTimestamps.countClosedDate(closedRaw, closedAt, counts);
  const [latitude, longitude] = coordinatesNumeric.apply(f, layout, counts);
  const createdMs = cityLocalTimeToEpochMs(createdAt);
  const row: ServiceRequest = {
    id,
    created_at: createdAt,
    closed_at: closedAt,
    status: statusCode.apply(f[c.status] as string, closedAt, counts),
    complaint_type: placeholderToNull.text(f[c.complaintType] as string, counts),
    descriptor: placeholderToNull.text(f[c.descriptor] as string, counts),
    location_type: placeholderToNull.text(f[c.locationType] as string, counts),
    borough: boroughCode.apply(f[c.borough] as string, counts),
    community_board: placeholderToNull.communityBoard(f[c.communityBoard] as string, counts),
    council_district: councilDistrictInteger.apply(c.councilDistrict >= 0 ? f[c.councilDistrict] : undefined, counts),
    incident_zip: incidentZipText.apply(f[c.incidentZip] as string, counts),
    channel: channelCode.apply(f[c.channel] as string, counts),
    latitude,
    longitude,
    days_to_close: daysToClose.apply(createdMs, closedAt, counts),
  };

  const address = c.incidentAddress >= 0 ? (f[c.incidentAddress] as string) : '';
  const street1 = c.intersectionStreet1 >= 0 ? (f[c.intersectionStreet1] as string) : '';
  const street2 = c.intersectionStreet2 >= 0 ? (f[c.intersectionStreet2] as string) : '';
  freeTextDropped.count(address, street1, counts);
  return {
    row,
    createdMs,
    createdWallMs: wallTimeMs(createdAt),
    repeatKey: repeatedSubmission.keyOf(row, address, street1, street2),
  };
}
