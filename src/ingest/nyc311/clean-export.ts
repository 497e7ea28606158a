/**
 * Cleaning of an export: reads CSV records (header first), applies the rules of cleaning-rules.ts
 * in the order of CLEANING_RULES and yields the cleaned requests sorted by (created_at, id), with
 * each rule's count. Each rule's logic is in its entry in cleaning-rules.ts; this file only reads
 * the records and calls them.
 *
 * Memory does not grow with the export: the requests that pass the removal rules are staged in a
 * temporary SQLite file (candidate-stage.ts) and read back in order; what stays in memory is the
 * Unique Keys' bitmap, the spelling counts and the places kept in the repeat window.
 */
import {
  CLEANING_RULES,
  type CleaningCounts,
  FirstSubmissions,
  UniqueKeySet,
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
import { type Candidate, CandidateStage } from './candidate-stage.js';
import { readCsvRecordBatches } from './csv-reader.js';
import { type ExportLayout, locateExportColumns } from './export-columns.js';
import { cityLocalTimeToEpochMs, wallTimeMs } from '../../snapshot/new-york-time.js';
import type { CleaningRuleResult, ServiceRequest } from '../../snapshot/service-request.js';

export interface CleaningOptions {
  /** Apply the DOT and period filters (default true). Off for exports of other agencies or years. */
  applyFilters?: boolean;
  /** Called after each batch with the number of data records read so far. */
  onRecords?: (recordsRead: number) => void;
  /** Where the temporary staging file goes (default: the system's temporary directory). */
  stageDirectory?: string;
}

/** What reading the export found, before the cleaned requests are taken out. */
interface ExportReading {
  rawRowsRead: number;
  layout: ExportLayout;
  filtersApplied: boolean;
  /** Latest valid Created or Closed Date read in the whole export (local time), or null. */
  latestTimestamp: string | null;
}

export interface CleanedExport extends ExportReading {
  /** Sorted by created_at, then id. */
  rows: ServiceRequest[];
  rules: CleaningRuleResult[];
}

/** An export read and staged: its cleaned requests are taken out once, in order, by `rows()`. */
export interface StagedExport extends ExportReading {
  /** Requests staged: an upper bound of the rows (repeated submissions are removed while reading them out). */
  candidates: number;
  /** created_at of the first cleaned request (null when none). */
  firstCreatedAt: string | null;
  /** created_at of the last request staged: the last cleaned request's, or later when that one is a repeat. */
  lastStagedCreatedAt: string | null;
  /** The cleaned requests, sorted by created_at, then id. */
  rows(): Generator<ServiceRequest>;
  /** Each rule's count; complete once `rows()` has been read to its end. */
  rules(): CleaningRuleResult[];
  /** Delete the staging file (also done when `rows()` ends). */
  close(): void;
}

/**
 * Read CSV record batches (the first record of the first batch is the header), apply the rules that
 * look at one record at a time, and stage the requests that pass. Throws MissingColumnError when a
 * needed column is absent.
 */
export async function stageExportRecords(batches: AsyncIterable<string[][]>, options: CleaningOptions = {}): Promise<StagedExport> {
  const applyFilters = options.applyFilters ?? true;
  const counts = Object.fromEntries(CLEANING_RULES.map((rule) => [rule.id, 0])) as CleaningCounts;
  const seenKeys = new UniqueKeySet();
  const spellings = canonicalSpelling.newTally();
  const stage = new CandidateStage(options.stageDirectory);
  let layout: ExportLayout | undefined;
  let rawRowsRead = 0;
  let latestTimestamp: string | null = null;
  let range: { first: string; last: string } | null;

  try {
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
        const candidate = readCandidate(f, layout, id, createdAt, closedAt, closedRaw, counts);
        canonicalSpelling.tally(candidate.row, spellings);
        stage.add(candidate);
      }
      options.onRecords?.(rawRowsRead);
    }
    if (layout === undefined) throw new Error('The export is empty: no header row was found.');
    range = stage.finish();
  } catch (error) {
    stage.close();
    throw error;
  }

  const rules = (): CleaningRuleResult[] =>
    CLEANING_RULES.map((rule) => {
      const count = counts[rule.id];
      return {
        id: rule.id,
        kind: rule.kind,
        description: rule.description,
        rows_removed: rule.kind === 'transformation' ? 0 : count,
        values_changed: rule.kind === 'transformation' ? count : 0,
        applied: rule.kind !== 'filter' || applyFilters,
      };
    });
  function* rows(): Generator<ServiceRequest> {
    try {
      const chosen = canonicalSpelling.choose(spellings);
      const firstSubmissions = new FirstSubmissions(counts);
      for (const candidate of stage.sorted()) {
        canonicalSpelling.respell(candidate.row, chosen, counts);
        if (firstSubmissions.keeps(candidate)) yield candidate.row;
      }
    } finally {
      stage.close();
    }
  }
  return {
    rawRowsRead,
    layout,
    filtersApplied: applyFilters,
    latestTimestamp,
    candidates: stage.size,
    firstCreatedAt: range?.first ?? null,
    lastStagedCreatedAt: range?.last ?? null,
    rows,
    rules,
    close: () => stage.close(),
  };
}

/** Clean CSV record batches into an array of requests (for exports that fit in memory: tests, fixtures). */
export async function cleanExportRecords(batches: AsyncIterable<string[][]>, options: CleaningOptions = {}): Promise<CleanedExport> {
  const staged = await stageExportRecords(batches, options);
  const rows = [...staged.rows()];
  const { rawRowsRead, layout, filtersApplied, latestTimestamp } = staged;
  return { rows, rules: staged.rules(), rawRowsRead, layout, filtersApplied, latestTimestamp };
}

/** Columns the cleaning reads, as a mask for the CSV reader. */
function usedColumnMask(header: readonly string[]): boolean[] {
  const used = new Set(Object.values(locateExportColumns(header).columns));
  return header.map((_, i) => used.has(i));
}

/** Clean CSV text chunks (header first) into an array: the CSV reader skips the columns cleaning never reads. */
export function cleanExportText(
  chunks: AsyncIterable<string> | Iterable<string>,
  options: CleaningOptions = {},
): Promise<CleanedExport> {
  return cleanExportRecords(readCsvRecordBatches(chunks, { selectColumns: usedColumnMask }), options);
}

/** Read and stage CSV text chunks (header first), for `rows()` to take the cleaned requests out in order. */
export function stageExportText(chunks: AsyncIterable<string> | Iterable<string>, options: CleaningOptions = {}): Promise<StagedExport> {
  return stageExportRecords(readCsvRecordBatches(chunks, { selectColumns: usedColumnMask }), options);
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
