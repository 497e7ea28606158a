/**
 * Cleaning of an export: reads its records (any layout, export-reader.ts), applies the rules of
 * cleaning-rules.ts in the order of CLEANING_RULES and yields the cleaned requests sorted by
 * (created_at, id), with each rule's count. Each rule's logic is in its entry in cleaning-rules.ts;
 * this file only reads the records and calls them, and keeps the first rows each removal rule left
 * out (their line, Unique Key, column and value) for the command's summary.
 *
 * Memory does not grow with the export: the requests that pass the removal rules are staged in a
 * temporary SQLite file (candidate-stage.ts) and read back in order; what stays in memory is the
 * Unique Keys' bitmap, the spelling counts and the places kept in the repeat window.
 */
import {
  CLEANING_RULES,
  type CleaningCounts,
  type CleaningRuleId,
  FirstSubmissions,
  REPEAT_WINDOW_MINUTES,
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
import { type ExportPiece, countNewlines } from './export-format-error.js';
import { type ExportColumnName, type ExportLayout, JSON_RECORD_COLUMNS, fieldOf } from './export-columns.js';
import { type ExportFormat, type OpenedExport, PieceParser } from './export-reader.js';
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

/** One row left out, as the summary shows it: where it is, its Unique Key, and the column and value that decided. */
export interface RowExample {
  /** The line of the file where the record starts (1: the first line); null when not known (repeated submissions). */
  line: number | null;
  unique_key: string | null;
  column: string;
  value: string;
}

/** The removal rules and filters: the reasons a row read is not served. */
export type RemovalRuleId = Extract<CleaningRuleId, 'malformed_record' | 'agency_not_dot' | 'created_outside_period' | 'duplicate_unique_key' | 'closed_before_created' | 'repeated_submission'>;

/** Rows left out under one reason (or one column, for the malformed records), with the first examples in file order. */
export interface LeftOut {
  rows: number;
  examples: RowExample[];
}

/** Examples kept per reason, and per column of the malformed records. */
export const EXAMPLES_PER_REASON = 3;

/** The first rows each removal rule left out, in the order they were read (plain data: it crosses threads). */
export interface RemovalExamples {
  byReason: Partial<Record<RemovalRuleId, RowExample[]>>;
  /** Malformed records by the column of their first bad value: their number and first examples. */
  malformedByColumn: Record<string, LeftOut>;
}

const byLine = (a: RowExample, b: RowExample): number => (a.line ?? Number.MAX_SAFE_INTEGER) - (b.line ?? Number.MAX_SAFE_INTEGER);

/** The examples of several threads as one: each list the first in file order. */
export function mergeRemovalExamples(parts: readonly RemovalExamples[]): RemovalExamples {
  const merged: RemovalExamples = { byReason: {}, malformedByColumn: {} };
  for (const part of parts) {
    for (const [reason, examples] of Object.entries(part.byReason) as [RemovalRuleId, RowExample[]][]) {
      merged.byReason[reason] = [...(merged.byReason[reason] ?? []), ...examples].sort(byLine).slice(0, EXAMPLES_PER_REASON);
    }
    for (const [column, { rows, examples }] of Object.entries(part.malformedByColumn)) {
      const into = (merged.malformedByColumn[column] ??= { rows: 0, examples: [] });
      into.rows += rows;
      into.examples = [...into.examples, ...examples].sort(byLine).slice(0, EXAMPLES_PER_REASON);
    }
  }
  return merged;
}

function keepExample(examples: RemovalExamples, reason: RemovalRuleId, example: () => RowExample): void {
  const list = (examples.byReason[reason] ??= []);
  if (list.length < EXAMPLES_PER_REASON) list.push(example());
}

/** What reading the export found, before the cleaned requests are taken out. */
interface ExportReading {
  rawRowsRead: number;
  layout: ExportLayout;
  format: ExportFormat;
  filtersApplied: boolean;
  /** Latest valid Created or Closed Date read in the whole export (local time), or null. */
  latestTimestamp: string | null;
  /** Records left out as malformed, by the column of their first bad value (complete once staged). */
  malformed: Record<string, LeftOut>;
}

export interface CleanedExport extends ExportReading {
  /** Sorted by created_at, then id. */
  rows: ServiceRequest[];
  rules: CleaningRuleResult[];
  report: ExportReport;
}

/** What the command's summary says of the export: its layout, the columns it lacks, and every row not served. */
export interface ExportReport {
  format: ExportFormat;
  /** Columns of the CSV's header, or keys the JSON's records have. */
  columnCount: number;
  /** The read columns the export lacks (in JSON: that no record holds). */
  missingColumns: ExportColumnName[];
  /** Per removal rule and filter: the rows it left out and the first ones. */
  notServed: Record<RemovalRuleId, LeftOut>;
  /** The malformed records by the column of their first bad value. */
  malformed: Record<string, LeftOut>;
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
  /** The summary of the export; its repeated submissions are complete once `rows()` has been read to its end. */
  report(): ExportReport;
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
  /** Where each starts in its piece (for the line of an example). */
  starts: number[];
  piece: ExportPiece;
}

/** The line of the file where a record starts, from its offset in its piece. */
function lineOf(piece: ExportPiece, start: number): number {
  return piece.linesBefore + 1 + countNewlines(piece.text, 0, start);
}

/**
 * The rules that look at one record at a time, on one thread, into a stage of its own: `screen`
 * applies those before duplicate_unique_key, `admit` the rest to the records that rule keeps.
 * duplicate_unique_key needs the Unique Keys in file order: whoever holds them decides between the
 * two steps (markDuplicates), so that parts of an export can be screened and admitted on several
 * threads with the result of one. Pieces must be screened, and admitted, in file order.
 */
export class RecordCleaner {
  readonly counts = Object.fromEntries(CLEANING_RULES.map((rule) => [rule.id, 0])) as CleaningCounts;
  readonly spellings = canonicalSpelling.newTally();
  readonly examples: RemovalExamples = { byReason: {}, malformedByColumn: {} };
  rawRowsRead = 0;
  /** Latest valid Created or Closed Date read (local time), or null. */
  latestTimestamp: string | null = null;

  constructor(
    readonly layout: ExportLayout,
    private readonly applyFilters: boolean,
    readonly stage: CandidateStage,
  ) {}

  /** Apply the rules before duplicate_unique_key to the records of `piece` (each starting at `starts[r]` in it). */
  screen(records: readonly string[][], starts: readonly number[], piece: ExportPiece): ScreenedRecords {
    const layout = this.layout;
    const c = layout.columns;
    const counts = this.counts;
    const kept: ScreenedRecords = { ids: new Float64Array(records.length), fields: [], createdAt: [], closedAt: [], starts: [], piece };
    for (let r = 0; r < records.length; r++) {
      const f = records[r] as string[];
      this.rawRowsRead++;
      const read = malformedRecord.read(f, layout);
      if (!read.ok) {
        counts.malformed_record++;
        const column = (this.examples.malformedByColumn[read.column] ??= { rows: 0, examples: [] });
        column.rows++;
        if (column.examples.length < EXAMPLES_PER_REASON) {
          const key = f.length === layout.fieldCount ? fieldOf(f, c.uniqueKey).trim() : '';
          column.examples.push({ line: lineOf(piece, starts[r] as number), unique_key: key.length > 0 ? key : null, column: read.column, value: read.value });
        }
        continue;
      }
      const { id, createdAt, closedAt } = read;
      if (this.latestTimestamp === null || createdAt > this.latestTimestamp) this.latestTimestamp = createdAt;
      if (closedAt !== null && closedAt > this.latestTimestamp) this.latestTimestamp = closedAt;
      if (this.applyFilters) {
        if (agencyNotDot.removes(f, layout)) {
          counts.agency_not_dot++;
          keepExample(this.examples, 'agency_not_dot', () => ({ line: lineOf(piece, starts[r] as number), unique_key: String(id), column: 'Agency', value: fieldOf(f, c.agency) }));
          continue;
        }
        if (createdOutsidePeriod.removes(createdAt)) {
          counts.created_outside_period++;
          keepExample(this.examples, 'created_outside_period', () => ({ line: lineOf(piece, starts[r] as number), unique_key: String(id), column: 'Created Date', value: f[c.createdDate] as string }));
          continue;
        }
      }
      kept.ids[kept.fields.length] = id;
      kept.fields.push(f);
      kept.createdAt.push(createdAt);
      kept.closedAt.push(closedAt);
      kept.starts.push(starts[r] as number);
    }
    kept.ids = kept.ids.slice(0, kept.fields.length);
    return kept;
  }

  /** Stage the screened records that are not marked in `duplicates` (from markDuplicates), through the remaining rules. */
  admit(screened: ScreenedRecords, duplicates: Uint8Array): void {
    const layout = this.layout;
    const c = layout.columns;
    const counts = this.counts;
    const line = (i: number): number => lineOf(screened.piece, screened.starts[i] as number);
    for (let i = 0; i < screened.fields.length; i++) {
      const f = screened.fields[i] as string[];
      const id = screened.ids[i] as number;
      if (duplicates[i] === 1) {
        counts.duplicate_unique_key++;
        keepExample(this.examples, 'duplicate_unique_key', () => ({ line: line(i), unique_key: String(id), column: 'Unique Key', value: (f[c.uniqueKey] as string).trim() }));
        continue;
      }
      const createdAt = screened.createdAt[i] as string;
      const closedAt = screened.closedAt[i] as string | null;
      if (closedBeforeCreated.removes(createdAt, closedAt)) {
        counts.closed_before_created++;
        keepExample(this.examples, 'closed_before_created', () => ({
          line: line(i),
          unique_key: String(id),
          column: 'Closed Date',
          value: `${fieldOf(f, c.closedDate)} (Created Date ${f[c.createdDate] as string})`,
        }));
        continue;
      }
      const candidate = readCandidate(f, layout, id, createdAt, closedAt, counts);
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
  examples: RemovalExamples;
  /** JSON: the read columns some record held, and the keys met (null for a CSV). */
  jsonColumns: { held: ExportColumnName[]; keys: string[] } | null;
}

/** What the threads that screened and admitted an export's records found, each into its stage. */
export interface CleanedParts extends CleaningTally {
  layout: ExportLayout;
  format: ExportFormat;
  /** Columns of the CSV's header. */
  header: readonly string[];
  applyFilters: boolean;
  stages: CandidateStage[];
}

const REMOVAL_RULES: readonly RemovalRuleId[] = ['malformed_record', 'agency_not_dot', 'created_outside_period', 'duplicate_unique_key', 'closed_before_created', 'repeated_submission'];

/** The staged export of finished stages: the rules that need all requests (spelling, repeats) run as `rows()` reads them in order. */
export function stagedExportOf(parts: CleanedParts): StagedExport {
  const { counts, spellings, stages, applyFilters, examples } = parts;
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
  const repeats: RowExample[] = [];
  function* rows(): Generator<ServiceRequest> {
    try {
      const chosen = canonicalSpelling.choose(spellings);
      const firstSubmissions = new FirstSubmissions(counts);
      for (const candidate of mergeSortedStages(stages)) {
        canonicalSpelling.respell(candidate.row, chosen, counts);
        if (firstSubmissions.keeps(candidate)) {
          yield candidate.row;
        } else if (repeats.length < EXAMPLES_PER_REASON) {
          const row = candidate.row;
          repeats.push({
            line: null,
            unique_key: String(row.id),
            column: 'Complaint Type',
            value: `${row.complaint_type ?? ''} / ${row.descriptor ?? ''} (created ${row.created_at}, within ${REPEAT_WINDOW_MINUTES} minutes of request ${firstSubmissions.repeatOf} at the same place)`,
          });
        }
      }
    } finally {
      closeStages();
    }
  }
  const json = parts.jsonColumns;
  const missingColumns = json === null ? parts.layout.missingColumns : JSON_RECORD_COLUMNS.filter((name) => !json.held.includes(name));
  const report = (): ExportReport => ({
    format: parts.format,
    columnCount: json === null ? parts.header.length : json.keys.length,
    missingColumns,
    notServed: Object.fromEntries(
      REMOVAL_RULES.map((id) => [id, { rows: counts[id], examples: id === 'repeated_submission' ? [...repeats] : [...(examples.byReason[id] ?? [])] }]),
    ) as Record<RemovalRuleId, LeftOut>,
    malformed: examples.malformedByColumn,
  });
  // The malformed records' examples, all columns together, are malformed_record's.
  examples.byReason.malformed_record = Object.values(examples.malformedByColumn)
    .flatMap((column) => column.examples)
    .sort(byLine)
    .slice(0, EXAMPLES_PER_REASON);
  return {
    rawRowsRead: parts.rawRowsRead,
    layout: { ...parts.layout, missingColumns },
    format: parts.format,
    filtersApplied: applyFilters,
    latestTimestamp: parts.latestTimestamp,
    malformed: examples.malformedByColumn,
    candidates: parts.candidates,
    firstCreatedAt: parts.range?.first ?? null,
    lastStagedCreatedAt: parts.range?.last ?? null,
    rows,
    rules,
    report,
    close: closeStages,
  };
}

/**
 * Stage an opened export on this thread: parse each piece, apply the rules that look at one record
 * at a time, and stage the requests that pass.
 */
export async function stageOnThisThread(opened: OpenedExport, options: CleaningOptions = {}): Promise<StagedExport> {
  const applyFilters = options.applyFilters ?? true;
  const seenKeys = new UniqueKeySet();
  const stage = new CandidateStage(makeStageDirectory(options.stageDirectory), 'new');
  const parser = new PieceParser(opened.format, opened.header);
  const cleaner = new RecordCleaner(opened.layout, applyFilters, stage);
  let range: { first: string; last: string } | null;
  try {
    for (let next = await opened.pieces.next(); next.done !== true; next = await opened.pieces.next()) {
      const starts: number[] = [];
      const records = parser.parse(next.value, starts);
      const screened = cleaner.screen(records, starts, next.value);
      cleaner.admit(screened, markDuplicates(screened.ids, seenKeys));
      options.onRecords?.(cleaner.rawRowsRead);
    }
    range = stage.finish();
  } catch (error) {
    stage.close();
    throw error;
  }
  return stagedExportOf({
    layout: opened.layout,
    format: opened.format,
    header: opened.header,
    applyFilters,
    stages: [stage],
    counts: cleaner.counts,
    spellings: cleaner.spellings,
    rawRowsRead: cleaner.rawRowsRead,
    latestTimestamp: cleaner.latestTimestamp,
    candidates: stage.size,
    range,
    examples: cleaner.examples,
    jsonColumns: parser.jsonColumns(),
  });
}

/** The stored fields of a record that passed the removal rules, through the transformation rules. */
function readCandidate(f: string[], layout: ExportLayout, id: number, createdAt: string, closedAt: string | null, counts: CleaningCounts): Candidate {
  const c = layout.columns;
  localTimestamps.countClosedDate(fieldOf(f, c.closedDate), closedAt, counts);
  const [latitude, longitude] = coordinatesNumeric.apply(f, layout, counts);
  const createdMs = cityLocalTimeToEpochMs(createdAt);
  const row: ServiceRequest = {
    id,
    created_at: createdAt,
    closed_at: closedAt,
    status: statusCode.apply(fieldOf(f, c.status), closedAt, counts),
    complaint_type: placeholderToNull.text(fieldOf(f, c.complaintType), counts),
    descriptor: placeholderToNull.text(fieldOf(f, c.descriptor), counts),
    location_type: placeholderToNull.text(fieldOf(f, c.locationType), counts),
    borough: boroughCode.apply(fieldOf(f, c.borough), counts),
    community_board: placeholderToNull.communityBoard(fieldOf(f, c.communityBoard), counts),
    council_district: councilDistrictInteger.apply(c.councilDistrict >= 0 ? f[c.councilDistrict] : undefined, counts),
    incident_zip: incidentZipText.apply(fieldOf(f, c.incidentZip), counts),
    channel: channelCode.apply(fieldOf(f, c.channel), counts),
    latitude,
    longitude,
    days_to_close: daysToClose.apply(createdMs, closedAt, counts),
  };

  const address = fieldOf(f, c.incidentAddress);
  const street1 = fieldOf(f, c.intersectionStreet1);
  const street2 = fieldOf(f, c.intersectionStreet2);
  freeTextDropped.count(address, street1, counts);
  return {
    row,
    createdMs,
    createdWallMs: wallTimeMs(createdAt),
    repeatKey: repeatedSubmission.keyOf(row, address, street1, street2),
  };
}
