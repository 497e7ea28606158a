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
  type KeySet,
  type SpellingTally,
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
import { type Candidate, CandidateStage, makeStageDirectory, mergeSortedStages } from './candidate-stage.js';
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

/** What an export without a header line fails with. */
export const EMPTY_EXPORT_MESSAGE = 'The export is empty: no header row was found.';

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

/** Records that passed the rules before duplicate_unique_key, waiting for its decision (RecordCleaner.admit). */
export interface ScreenedRecords {
  /** Their Unique Keys, in file order. */
  ids: Float64Array;
  fields: string[][];
  createdAt: string[];
  closedAt: (string | null)[];
}

/**
 * The rules that look at one record at a time, on one thread, into a stage of its own: `screen`
 * applies those before duplicate_unique_key, `admit` the rest to the records that rule keeps.
 * duplicate_unique_key needs the Unique Keys in file order: whoever holds them decides between the
 * two steps (markDuplicates), so that parts of an export can be screened and admitted on several
 * threads with the result of one.
 */
export class RecordCleaner {
  readonly counts = Object.fromEntries(CLEANING_RULES.map((rule) => [rule.id, 0])) as CleaningCounts;
  readonly spellings = canonicalSpelling.newTally();
  rawRowsRead = 0;
  /** Latest valid Created or Closed Date read (local time), or null. */
  latestTimestamp: string | null = null;

  constructor(
    readonly layout: ExportLayout,
    private readonly applyFilters: boolean,
    readonly stage: CandidateStage,
  ) {}

  /** Apply the rules before duplicate_unique_key to `records` (from `start`). */
  screen(records: readonly string[][], start = 0): ScreenedRecords {
    const layout = this.layout;
    const counts = this.counts;
    const kept: ScreenedRecords = { ids: new Float64Array(records.length - start), fields: [], createdAt: [], closedAt: [] };
    for (let r = start; r < records.length; r++) {
      const f = records[r] as string[];
      this.rawRowsRead++;
      const record = malformedRecord.read(f, layout);
      if (record === null) {
        counts.malformed_record++;
        continue;
      }
      const { id, createdAt } = record;
      const closedRaw = f[layout.columns.closedDate] as string;
      const closedAt = closedRaw.length === 0 ? null : localTimestamps.parse(closedRaw);
      if (this.latestTimestamp === null || createdAt > this.latestTimestamp) this.latestTimestamp = createdAt;
      if (closedAt !== null && closedAt > this.latestTimestamp) this.latestTimestamp = closedAt;
      if (this.applyFilters) {
        if (agencyNotDot.removes(f, layout)) {
          counts.agency_not_dot++;
          continue;
        }
        if (createdOutsidePeriod.removes(createdAt)) {
          counts.created_outside_period++;
          continue;
        }
      }
      kept.ids[kept.fields.length] = id;
      kept.fields.push(f);
      kept.createdAt.push(createdAt);
      kept.closedAt.push(closedAt);
    }
    kept.ids = kept.ids.slice(0, kept.fields.length);
    return kept;
  }

  /** Stage the screened records that are not marked in `duplicates` (from markDuplicates), through the remaining rules. */
  admit(screened: ScreenedRecords, duplicates: Uint8Array): void {
    const layout = this.layout;
    const counts = this.counts;
    for (let i = 0; i < screened.fields.length; i++) {
      if (duplicates[i] === 1) {
        counts.duplicate_unique_key++;
        continue;
      }
      const createdAt = screened.createdAt[i] as string;
      const closedAt = screened.closedAt[i] as string | null;
      if (closedBeforeCreated.removes(createdAt, closedAt)) {
        counts.closed_before_created++;
        continue;
      }
      const f = screened.fields[i] as string[];
      const candidate = readCandidate(f, layout, screened.ids[i] as number, createdAt, closedAt, f[layout.columns.closedDate] as string, counts);
      canonicalSpelling.tally(candidate.row, this.spellings);
      this.stage.add(candidate);
    }
  }
}

/** duplicate_unique_key on Unique Keys taken in file order: 1 for each one already in `seenKeys` (the others are added). */
export function markDuplicates(ids: Float64Array, seenKeys: KeySet): Uint8Array {
  const duplicates = new Uint8Array(ids.length);
  for (let i = 0; i < ids.length; i++) if (duplicateUniqueKey.removes(ids[i] as number, seenKeys)) duplicates[i] = 1;
  return duplicates;
}

/** What cleaning found on one thread, or on all of them added up, besides the stages. */
export interface CleaningTally {
  /** Each rule's count, the spelling counts, records read and the latest date. */
  counts: CleaningCounts;
  spellings: SpellingTally;
  rawRowsRead: number;
  latestTimestamp: string | null;
  /** Candidates staged. */
  candidates: number;
  /** created_at of the first and last candidate in order, or null when none was staged. */
  range: { first: string; last: string } | null;
}

/** What the threads that screened and admitted an export's records found, each into its stage. */
export interface CleanedParts extends CleaningTally {
  layout: ExportLayout;
  applyFilters: boolean;
  stages: CandidateStage[];
}

/** The staged export of finished stages: the rules that need all requests (spelling, repeats) run as `rows()` reads them in order. */
export function stagedExportOf(parts: CleanedParts): StagedExport {
  const { counts, spellings, stages, applyFilters } = parts;
  const closeStages = (): void => {
    for (const stage of stages) stage.close();
  };
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
      for (const candidate of mergeSortedStages(stages)) {
        canonicalSpelling.respell(candidate.row, chosen, counts);
        if (firstSubmissions.keeps(candidate)) yield candidate.row;
      }
    } finally {
      closeStages();
    }
  }
  return {
    rawRowsRead: parts.rawRowsRead,
    layout: parts.layout,
    filtersApplied: applyFilters,
    latestTimestamp: parts.latestTimestamp,
    candidates: parts.candidates,
    firstCreatedAt: parts.range?.first ?? null,
    lastStagedCreatedAt: parts.range?.last ?? null,
    rows,
    rules,
    close: closeStages,
  };
}

/**
 * Read CSV record batches (the first record of the first batch is the header), apply the rules that
 * look at one record at a time, and stage the requests that pass, on this thread. Throws
 * MissingColumnError when a needed column is absent.
 */
export async function stageExportRecords(batches: AsyncIterable<string[][]>, options: CleaningOptions = {}): Promise<StagedExport> {
  const applyFilters = options.applyFilters ?? true;
  const seenKeys = new UniqueKeySet();
  const stage = new CandidateStage(makeStageDirectory(options.stageDirectory), 'new');
  let cleaner: RecordCleaner | undefined;
  let range: { first: string; last: string } | null;
  try {
    for await (const batch of batches) {
      let start = 0;
      if (cleaner === undefined) {
        const header = batch[0];
        if (header === undefined) continue;
        cleaner = new RecordCleaner(locateExportColumns(header), applyFilters, stage);
        start = 1;
      }
      const screened = cleaner.screen(batch, start);
      cleaner.admit(screened, markDuplicates(screened.ids, seenKeys));
      options.onRecords?.(cleaner.rawRowsRead);
    }
    if (cleaner === undefined) throw new Error(EMPTY_EXPORT_MESSAGE);
    range = stage.finish();
  } catch (error) {
    stage.close();
    throw error;
  }
  return stagedExportOf({
    layout: cleaner.layout,
    applyFilters,
    stages: [stage],
    counts: cleaner.counts,
    spellings: cleaner.spellings,
    rawRowsRead: cleaner.rawRowsRead,
    latestTimestamp: cleaner.latestTimestamp,
    candidates: stage.size,
    range,
  });
}

/** Clean CSV record batches into an array of requests (for exports that fit in memory: tests, fixtures). */
export async function cleanExportRecords(batches: AsyncIterable<string[][]>, options: CleaningOptions = {}): Promise<CleanedExport> {
  const staged = await stageExportRecords(batches, options);
  const rows = [...staged.rows()];
  const { rawRowsRead, layout, filtersApplied, latestTimestamp } = staged;
  return { rows, rules: staged.rules(), rawRowsRead, layout, filtersApplied, latestTimestamp };
}

/** Columns the cleaning reads, as a mask for the CSV reader. */
export function usedColumnMask(header: readonly string[]): boolean[] {
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
