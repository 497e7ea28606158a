/**
 * The cleaning rules of the snapshot, one entry per rule: its id, its kind, its description (shown by
 * `GET /v1/dataset` with the number of rows it removed or values it changed) and its logic. Look a
 * rule up by its id (`closed_before_created`) or its entry's name (`closedBeforeCreated`): the
 * synthetic export plants its bad records with `plantClosedBeforeCreated` (synthetic-export.ts), and
 * test/ingest/nyc311/cleaning-rules.test.ts checks it by the same id. clean-export.ts reads the
 * records and calls the rules in the order of CLEANING_RULES.
 *
 * A rule's logic adds to its own count in `counts`; the placeholder rule is the one rule whose count
 * grows from many fields (placeholderToNull.applies, called by the field rules).
 */
import { type ExportLayout, fieldOf } from './export-columns.js';
import { EXPORT_TIMESTAMP_FORMS, cityLocalTimeToEpochMs, parseExportTimestamp, readExportTimestamp } from '../../snapshot/new-york-time.js';
import type { Borough, Channel, CleaningRuleKind, ServiceRequest, Status } from '../../snapshot/service-request.js';

/** Default filter of the snapshot: agency and creation period (inclusive days, local time). */
export const SNAPSHOT_AGENCY = 'DOT';
export const SNAPSHOT_PERIOD = { start: '2025-01-01', end: '2025-06-30' } as const;
/** Two submissions this close in time (minutes) at the same place, same type and descriptor are one request. */
export const REPEAT_WINDOW_MINUTES = 60;

export type CleaningRuleId =
  | 'malformed_record'
  | 'agency_not_dot'
  | 'created_outside_period'
  | 'duplicate_unique_key'
  | 'closed_before_created'
  | 'repeated_submission'
  | 'free_text_dropped'
  | 'placeholder_to_null'
  | 'canonical_spelling'
  | 'borough_code'
  | 'status_code'
  | 'channel_code'
  | 'incident_zip_text'
  | 'council_district_integer'
  | 'coordinates_numeric'
  | 'local_timestamps'
  | 'days_to_close';

export interface CleaningRuleDefinition {
  id: CleaningRuleId;
  kind: CleaningRuleKind;
  description: string;
}

/** A rule's entry: its definition and its logic (functions named after what they decide or make). */
type CleaningRule = CleaningRuleDefinition & { readonly [logic: string]: unknown };

/** What each rule removed (removals, filters) or changed (transformations) so far. */
export type CleaningCounts = Record<CleaningRuleId, number>;

/** The request fields of an export record, before the rules that need all requests (spelling, repeats). */
export interface RepeatCandidate {
  row: ServiceRequest;
  /** Real instant of created_at. */
  createdMs: number;
  /** Case-folded complaint type, descriptor and place; null when the place is unknown. */
  repeatKey: string | null;
}

/** The Unique Keys read so far (a Set<number>, or UniqueKeySet for large exports). */
export interface KeySet {
  has(id: number): boolean;
  add(id: number): unknown;
}

/**
 * A set of Unique Keys as a bitmap in pages of 65,536 keys, allocated when a key falls in them:
 * 8 KiB per page, about one bit per key of the range the export's keys span (their numbers are dense).
 */
export class UniqueKeySet implements KeySet {
  private readonly pages = new Map<number, Uint32Array>();
  has(id: number): boolean {
    const page = this.pages.get(Math.floor(id / 65_536));
    if (page === undefined) return false;
    const bit = id % 65_536;
    return ((page[bit >>> 5] as number) & (1 << (bit & 31))) !== 0;
  }
  add(id: number): this {
    const index = Math.floor(id / 65_536);
    let page = this.pages.get(index);
    if (page === undefined) this.pages.set(index, (page = new Uint32Array(2048)));
    const bit = id % 65_536;
    page[bit >>> 5] = (page[bit >>> 5] as number) | (1 << (bit & 31));
    return this;
  }
}

/** The fields canonical_spelling writes one way. */
const SPELLED_FIELDS = ['complaint_type', 'descriptor', 'location_type'] as const;
/** Per spelled field, a map from each exact spelling (to its count, or to its chosen spelling). */
export type SpellingTally<V = number> = Record<(typeof SPELLED_FIELDS)[number], Map<string, V>>;

const PLACEHOLDERS = new Set(['', 'unspecified', 'unknown', 'n/a', 'na', 'none', 'null', '-']);

/** True for empty text and placeholders such as "Unspecified", "N/A" (any case, spaces trimmed). */
export function isPlaceholder(raw: string): boolean {
  if (raw.length > 12) return false;
  return PLACEHOLDERS.has(raw.trim().toLowerCase());
}

/** Lower case, trimmed, runs of white space as one space. */
export function foldText(raw: string): string {
  const trimmed = raw.trim();
  return (/\s\s|[\t\r\n]/.test(trimmed) ? trimmed.replace(/\s+/g, ' ') : trimmed).toLowerCase();
}

/**
 * One shared copy of each distinct value of a repetitive field (complaint type, zip, ...). Values
 * read from the CSV are slices of a large chunk of text; storing them would keep every chunk alive.
 * The copy is made once per distinct value; later map lookups reuse its cached hash.
 */
class ValuePool {
  private readonly values = new Map<string, string>();
  intern(value: string): string {
    let pooled = this.values.get(value);
    if (pooled === undefined) {
      pooled = Buffer.from(value, 'utf8').toString('utf8');
      this.values.set(pooled, pooled);
    }
    return pooled;
  }
}

const pool = new ValuePool();

function nextDay(day: string): string {
  const t = Date.UTC(Number(day.slice(0, 4)), Number(day.slice(5, 7)) - 1, Number(day.slice(8, 10))) + 86_400_000;
  return new Date(t).toISOString().slice(0, 10);
}

const PERIOD_START = `${SNAPSHOT_PERIOD.start}T00:00:00`;
const PERIOD_END_EXCLUSIVE = `${nextDay(SNAPSHOT_PERIOD.end)}T00:00:00`;

// ---------------------------------------------------------------------------------------------
// Removal rules and filters, in the order they are applied to each record.

/** The column a malformed record is named by when its number of fields is wrong (or, in JSON, it is not an object). */
export const RECORD_COLUMN = '(record)';

/** The forms each column malformed_record checks is read in, as the messages name them. */
export const VALUE_FORMS: Readonly<Record<string, string>> = {
  [RECORD_COLUMN]: 'a record with as many fields as the header (in JSON: an object)',
  'Unique Key': 'a whole number above 0 (61276295; also 61276295.0, as pandas writes it)',
  'Created Date': EXPORT_TIMESTAMP_FORMS,
  'Closed Date': `${EXPORT_TIMESTAMP_FORMS}; or empty`,
  Latitude: 'a decimal number (40.7128; also 40,7128, as a spreadsheet of a European locale writes it), or empty',
  Longitude: 'a decimal number (-74.006; also -74,006), or empty',
};

/** What malformed_record reads of a record: its key and times, or the first value in a form no layout uses. */
export type RecordReading =
  | { ok: true; id: number; createdAt: string; closedAt: string | null }
  | { ok: false; column: string; value: string };

const UNIQUE_KEY = /^(\d{1,15})(?:\.0+)?$/;
const DECIMAL_NUMBER = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
/** A coordinate with a decimal comma (40,7128), as a spreadsheet of a European locale writes it: unambiguous, a coordinate has no thousands. */
const DECIMAL_COMMA = /^[+-]?\d{1,3},\d+$/;
const isCoordinateText = (value: string): boolean => DECIMAL_NUMBER.test(value) || DECIMAL_COMMA.test(value);
const clip = (text: string): string => (text.length > 80 ? `${text.slice(0, 80)}...` : text);
const malformed = (column: string, value: string): RecordReading => ({ ok: false, column, value: clip(value) });

export const malformedRecord = {
  id: 'malformed_record',
  kind: 'removal',
  description: 'A record no layout writes is left out: its number of fields differs from the header (in JSON: it is not an object), its Unique Key is not a whole number above 0, its Created Date is empty or not a time, or its Closed Date, Latitude or Longitude is in a form no export uses (a Closed Date that has a form but names no day, 02/30/2025, is read as none: see local_timestamps). More than 1% of such records stops the command unless --allow-malformed.',
  /** The record's Unique Key and Created and Closed Dates (local time), or its first value in a form no layout uses. */
  read(fields: readonly string[], layout: ExportLayout): RecordReading {
    if (fields.length !== layout.fieldCount) {
      return malformed(RECORD_COLUMN, fields.length === 1 ? (fields[0] as string) : `${fields.length} fields (the header has ${layout.fieldCount})`);
    }
    const c = layout.columns;
    const keyText = (fields[c.uniqueKey] as string).trim();
    const key = UNIQUE_KEY.exec(keyText);
    const id = key === null ? 0 : Number(key[1]);
    if (id <= 0) return malformed('Unique Key', keyText);
    const createdRaw = fields[c.createdDate] as string;
    const createdAt = readExportTimestamp(createdRaw);
    if (typeof createdAt !== 'string') return malformed('Created Date', createdRaw);
    const closedRaw = fieldOf(fields, c.closedDate);
    let closedAt: string | null = null;
    if (closedRaw.length > 0) {
      const read = readExportTimestamp(closedRaw);
      if (read === undefined && !isPlaceholder(closedRaw)) return malformed('Closed Date', closedRaw);
      closedAt = read ?? null;
    }
    const latitude = fieldOf(fields, c.latitude);
    if (latitude.length > 0 && !isCoordinateText(latitude.trim()) && !isPlaceholder(latitude)) return malformed('Latitude', latitude);
    const longitude = fieldOf(fields, c.longitude);
    if (longitude.length > 0 && !isCoordinateText(longitude.trim()) && !isPlaceholder(longitude)) return malformed('Longitude', longitude);
    return { ok: true, id, createdAt, closedAt };
  },
} satisfies CleaningRule;

export const agencyNotDot = {
  id: 'agency_not_dot',
  kind: 'filter',
  description: `Only requests of the Department of Transportation are kept: Agency equals "${SNAPSHOT_AGENCY}" (any case). Switched off by --no-filter.`,
  removes(fields: readonly string[], layout: ExportLayout): boolean {
    return fieldOf(fields, layout.columns.agency).trim().toUpperCase() !== SNAPSHOT_AGENCY;
  },
} satisfies CleaningRule;

export const createdOutsidePeriod = {
  id: 'created_outside_period',
  kind: 'filter',
  description: `Only requests created from ${SNAPSHOT_PERIOD.start}T00:00:00 to ${SNAPSHOT_PERIOD.end}T23:59:59 local time (both included) are kept. Switched off by --no-filter.`,
  removes(createdAt: string): boolean {
    return createdAt < PERIOD_START || createdAt >= PERIOD_END_EXCLUSIVE;
  },
} satisfies CleaningRule;

export const duplicateUniqueKey = {
  id: 'duplicate_unique_key',
  kind: 'removal',
  description: 'A record whose Unique Key was already read is left out; the first record in file order is kept.',
  /** True when `id` is in `seenKeys`; otherwise adds it. */
  removes(id: number, seenKeys: KeySet): boolean {
    if (seenKeys.has(id)) return true;
    seenKeys.add(id);
    return false;
  },
} satisfies CleaningRule;

export const closedBeforeCreated = {
  id: 'closed_before_created',
  kind: 'removal',
  description: 'A request whose Closed Date is earlier than its Created Date is left out.',
  removes(createdAt: string, closedAt: string | null): boolean {
    return closedAt !== null && closedAt < createdAt;
  },
} satisfies CleaningRule;

export const repeatedSubmission = {
  id: 'repeated_submission',
  kind: 'removal',
  description: `A repeated submission is left out: a request with the same complaint type and descriptor (compared without case; two missing values are equal) at the same place as a kept request created at most ${REPEAT_WINDOW_MINUTES} minutes (real time) before it, or at the same time with a smaller Unique Key. ` +
    'The place is the latitude and longitude rounded to 5 decimals; without coordinates, the incident address with the borough; without an address, the two intersection streets with the borough; a request with none of these is never a repeat. ' +
    'Requests are taken in order of creation, then Unique Key, so the earliest submission is kept.',
  /** The key of a request's complaint at its place, or null when the place is unknown (never a repeat). */
  keyOf(row: ServiceRequest, address: string, street1: string, street2: string): string | null {
    let place: string | null = null;
    if (row.latitude !== null && row.longitude !== null) {
      place = `@${row.latitude.toFixed(5)},${row.longitude.toFixed(5)}`;
    } else if (!isPlaceholder(address)) {
      place = `A${foldText(address)}|${row.borough ?? ''}`;
    } else if (!isPlaceholder(street1) && !isPlaceholder(street2)) {
      const streets = [foldText(street1), foldText(street2)].sort();
      place = `I${streets[0]}|${streets[1]}|${row.borough ?? ''}`;
    }
    if (place === null) return null;
    const type = row.complaint_type === null ? '' : foldText(row.complaint_type);
    const descriptor = row.descriptor === null ? '' : foldText(row.descriptor);
    return `${type}\u0001${descriptor}\u0001${place}`;
  },
  /** The rows of the candidates (sorted by creation, then id) that are not repeats of an earlier kept one. */
  keepFirstSubmissions(sorted: readonly RepeatCandidate[], counts: CleaningCounts): ServiceRequest[] {
    const kept = new FirstSubmissions(counts);
    return sorted.filter((candidate) => kept.keeps(candidate)).map((candidate) => candidate.row);
  },
} satisfies CleaningRule;

/**
 * The repeat check of repeated_submission one candidate at a time, candidates taken in order of
 * creation (wall time), then id. Only the places kept in the last hours are remembered: a later
 * candidate's real instant is at most one hour (a daylight-saving change) before the current one's,
 * so a place kept more than the window plus two hours earlier can never make it a repeat.
 */
export class FirstSubmissions {
  private readonly windowMs = REPEAT_WINDOW_MINUTES * 60_000;
  private readonly forgetAfterMs = this.windowMs + 2 * 3_600_000;
  private readonly lastKeptAt = new Map<string, number>();
  /** The Unique Key of the request kept last at each key of lastKeptAt. */
  private readonly lastKeptId = new Map<string, number>();
  /** Keys in the order they were kept, with the instant they were kept at (oldest at `head`). */
  private keptKeys: string[] = [];
  private keptAt: number[] = [];
  private head = 0;
  /** After keeps() returned false: the Unique Key of the kept request it repeats. */
  repeatOf = 0;

  constructor(private readonly counts: CleaningCounts) {}

  /** True when the candidate is kept; counts a repeat. */
  keeps(candidate: RepeatCandidate): boolean {
    const key = candidate.repeatKey;
    if (key === null) return true;
    this.forgetBefore(candidate.createdMs - this.forgetAfterMs);
    const previous = this.lastKeptAt.get(key);
    if (previous !== undefined && candidate.createdMs - previous <= this.windowMs) {
      this.counts.repeated_submission++;
      this.repeatOf = this.lastKeptId.get(key) ?? 0;
      return false;
    }
    this.lastKeptAt.set(key, candidate.createdMs);
    this.lastKeptId.set(key, candidate.row.id);
    this.keptKeys.push(key);
    this.keptAt.push(candidate.createdMs);
    return true;
  }

  private forgetBefore(instant: number): void {
    while (this.head < this.keptAt.length && (this.keptAt[this.head] as number) < instant) {
      const key = this.keptKeys[this.head] as string;
      if (this.lastKeptAt.get(key) === this.keptAt[this.head]) {
        this.lastKeptAt.delete(key);
        this.lastKeptId.delete(key);
      }
      this.head++;
    }
    if (this.head > 65_536 && this.head * 2 > this.keptAt.length) {
      this.keptKeys = this.keptKeys.slice(this.head);
      this.keptAt = this.keptAt.slice(this.head);
      this.head = 0;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Transformations: they never remove a row.

export const freeTextDropped = {
  id: 'free_text_dropped',
  kind: 'transformation',
  description: 'No street address and no free text is kept: incident address, street name, cross and intersection streets, address type, city, landmark, facility type, BBL, state-plane coordinates, the Location text, park, vehicle, taxi and bridge/highway fields, due date and resolution description and date are not stored. values_changed: rows that had an incident address or intersection.',
  /** Counts a row that had an incident address or intersection (the fields are never stored). */
  count(address: string, street1: string, counts: CleaningCounts): void {
    if (!isPlaceholder(address) || !isPlaceholder(street1)) counts.free_text_dropped++;
  },
} satisfies CleaningRule;

export const placeholderToNull = {
  id: 'placeholder_to_null',
  kind: 'transformation',
  description: 'Placeholder values become null in every stored field except status (see status_code): empty text and "Unspecified", "Unknown", "N/A", "NA", "None", "Null", "-" (any case, surrounding spaces ignored). A community board naming no board ("Unspecified MANHATTAN", "0 Unspecified") becomes null; the borough stays in borough. values_changed: non-empty placeholder values turned into null.',
  /** True when `raw` is empty or a placeholder (the field becomes null); counts a non-empty one. */
  applies(raw: string, counts: CleaningCounts): boolean {
    if (raw.length === 0) return true;
    if (!isPlaceholder(raw)) return false;
    if (raw.trim().length > 0) counts.placeholder_to_null++;
    return true;
  },
  /** A text field: null for a placeholder, otherwise trimmed with runs of white space as one space. */
  text(raw: string, counts: CleaningCounts): string | null {
    if (placeholderToNull.applies(raw, counts)) return null;
    const trimmed = raw.trim();
    return pool.intern(/\s{2,}|[\t\r\n]/.test(trimmed) ? trimmed.replace(/\s+/g, ' ') : trimmed);
  },
  /** Community board in upper case; null for a placeholder or a board naming no board ("0 Unspecified"). */
  communityBoard(raw: string, counts: CleaningCounts): string | null {
    const text = placeholderToNull.text(raw, counts);
    if (text === null) return null;
    if (/(^|\s)unspecified(\s|$)/i.test(text)) {
      counts.placeholder_to_null++;
      return null;
    }
    return pool.intern(text.toUpperCase());
  },
} satisfies CleaningRule;

export const canonicalSpelling = {
  id: 'canonical_spelling',
  kind: 'transformation',
  description: 'Complaint type, descriptor and location type are trimmed, runs of spaces become one space, and spellings that differ only in case are written one way: the most frequent spelling in the export (ties: the first in code-point order). Community board is written in upper case ("04 BRONX"). values_changed: values rewritten to another spelling.',
  /** Write complaint type, descriptor and location type in one spelling per case-folded value. */
  apply(candidates: readonly { row: ServiceRequest }[], counts: CleaningCounts): void {
    const tally = canonicalSpelling.newTally();
    for (const { row } of candidates) canonicalSpelling.tally(row, tally);
    const chosen = canonicalSpelling.choose(tally);
    for (const { row } of candidates) canonicalSpelling.respell(row, chosen, counts);
  },
  /** Counts of each exact spelling, per field (few distinct values), filled by `tally`. */
  newTally(): SpellingTally {
    return { complaint_type: new Map(), descriptor: new Map(), location_type: new Map() };
  },
  tally(row: ServiceRequest, tally: SpellingTally): void {
    for (const field of SPELLED_FIELDS) {
      const value = row[field];
      if (value !== null) tally[field].set(value, (tally[field].get(value) ?? 0) + 1);
    }
  },
  /** Each spelling's chosen spelling, per field, from the counts of all the candidates. */
  choose(tally: SpellingTally): SpellingTally<string> {
    const chosen: SpellingTally<string> = { complaint_type: new Map(), descriptor: new Map(), location_type: new Map() };
    for (const field of SPELLED_FIELDS) {
      const exact = tally[field];
      const spellings = new Map<string, Map<string, number>>();
      for (const [value, count] of exact) {
        const folded = value.toLowerCase();
        let byCount = spellings.get(folded);
        if (byCount === undefined) spellings.set(folded, (byCount = new Map<string, number>()));
        byCount.set(value, count);
      }
      for (const byCount of spellings.values()) {
        let best = '';
        let bestCount = -1;
        for (const [spelling, count] of byCount) {
          if (count > bestCount || (count === bestCount && spelling < best)) {
            best = spelling;
            bestCount = count;
          }
        }
        for (const spelling of byCount.keys()) chosen[field].set(spelling, best);
      }
    }
    return chosen;
  },
  /** Rewrite the row's spellings to the chosen ones; counts each value rewritten. */
  respell(row: ServiceRequest, chosen: SpellingTally<string>, counts: CleaningCounts): void {
    for (const field of SPELLED_FIELDS) {
      const value = row[field];
      if (value === null) continue;
      const spelling = chosen[field].get(value) ?? value;
      if (spelling !== value) {
        row[field] = spelling;
        counts.canonical_spelling++;
      }
    }
  },
} satisfies CleaningRule;

const BOROUGH_CODES: ReadonlyMap<string, Borough> = new Map([
  ['bronx', 'bronx'],
  ['brooklyn', 'brooklyn'],
  ['manhattan', 'manhattan'],
  ['queens', 'queens'],
  ['staten island', 'staten_island'],
  ['staten_island', 'staten_island'],
]);

export const boroughCode = {
  id: 'borough_code',
  kind: 'transformation',
  description: 'Borough (any case) becomes a code: BRONX -> bronx, BROOKLYN -> brooklyn, MANHATTAN -> manhattan, QUEENS -> queens, STATEN ISLAND -> staten_island; any other value becomes null. values_changed: values not recognised (not placeholders) turned into null.',
  apply(raw: string, counts: CleaningCounts): Borough | null {
    if (placeholderToNull.applies(raw, counts)) return null;
    const code = BOROUGH_CODES.get(foldText(raw));
    if (code !== undefined) return code;
    counts.borough_code++;
    return null;
  },
} satisfies CleaningRule;

const STATUS_CODES: ReadonlyMap<string, Status> = new Map([
  ['open', 'open'],
  ['assigned', 'assigned'],
  ['in progress', 'in_progress'],
  ['in_progress', 'in_progress'],
  ['started', 'in_progress'],
  ['pending', 'pending'],
  ['closed', 'closed'],
]);

export const statusCode = {
  id: 'status_code',
  kind: 'transformation',
  description: 'Status (any case) becomes a code: Open -> open, Assigned -> assigned, In Progress and Started -> in_progress, Pending -> pending, Closed -> closed. Status is never null: an Unspecified, empty or unrecognised status becomes closed when the request has a close time, otherwise open. values_changed: statuses inferred this way.',
  /** Never null: an unrecognised status is inferred (counted here, not as a placeholder turned into null). */
  apply(raw: string, closedAt: string | null, counts: CleaningCounts): Status {
    const code = STATUS_CODES.get(foldText(raw));
    if (code !== undefined) return code;
    counts.status_code++;
    return closedAt !== null ? 'closed' : 'open';
  },
} satisfies CleaningRule;

const CHANNEL_CODES: ReadonlyMap<string, Channel> = new Map([
  ['online', 'online'],
  ['phone', 'phone'],
  ['mobile', 'mobile'],
  ['other', 'other'],
]);

export const channelCode = {
  id: 'channel_code',
  kind: 'transformation',
  description: 'Open Data Channel Type (any case) becomes a code: ONLINE -> online, PHONE -> phone, MOBILE -> mobile, OTHER -> other; UNKNOWN and other placeholders become null (not recorded); any other non-empty value becomes other. values_changed: unrecognised values turned into other.',
  apply(raw: string, counts: CleaningCounts): Channel | null {
    if (placeholderToNull.applies(raw, counts)) return null;
    const code = CHANNEL_CODES.get(foldText(raw));
    if (code !== undefined) return code;
    counts.channel_code++;
    return 'other';
  },
} satisfies CleaningRule;

export const incidentZipText = {
  id: 'incident_zip_text',
  kind: 'transformation',
  description: 'Incident Zip is kept as text of 5 digits (leading zeros kept; 10033.0, as pandas writes a zip, is read as 10033); ZIP+4 keeps its first 5 digits; any other value, and 00000, becomes null. values_changed: values turned into null or shortened.',
  apply(raw: string, counts: CleaningCounts): string | null {
    if (placeholderToNull.applies(raw, counts)) return null;
    let value = raw.trim();
    if (value.length > 5 && /^\d{5}\.0+$/.test(value)) value = value.slice(0, 5);
    if (/^\d{5}$/.test(value) && value !== '00000') return pool.intern(value);
    counts.incident_zip_text++;
    const plus4 = /^(\d{5})-\d{4}$/.exec(value);
    return plus4 && plus4[1] !== '00000' ? (plus4[1] ?? null) : null;
  },
} satisfies CleaningRule;

export const councilDistrictInteger = {
  id: 'council_district_integer',
  kind: 'transformation',
  description: 'Council District becomes an integer from 1 to 51, otherwise null; an export without that column gives null. values_changed: non-empty values turned into null.',
  /** `raw` is undefined for an export without the column. */
  apply(raw: string | undefined, counts: CleaningCounts): number | null {
    if (raw === undefined || placeholderToNull.applies(raw, counts)) return null;
    const value = raw.trim();
    if (/^\d{1,2}(\.0+)?$/.test(value)) {
      const n = Number.parseInt(value, 10);
      if (n >= 1 && n <= 51) return n;
    }
    counts.council_district_integer++;
    return null;
  },
} satisfies CleaningRule;

/** A coordinate: a number, null when it is not one (or 0), undefined when the field is empty. */
function parseCoordinate(raw: string | undefined): number | null | undefined {
  if (raw === undefined) return undefined;
  const value = raw.trim();
  if (value.length === 0 || isPlaceholder(value)) return undefined;
  const n = Number(DECIMAL_COMMA.test(value) ? value.replace(',', '.') : value);
  return Number.isFinite(n) && n !== 0 ? n : null;
}

const NUMBER_TEXT = '([+-]?\\d+(?:\\.\\d+)?)';
/** The forms of the Location column that hold coordinates: [pattern, index of the latitude's group]. */
const LOCATION_FORMS: readonly [RegExp, 1 | 2][] = [
  // The portal: "(40.83, -73.92)"; the API's CSV: the same after address lines ("\n,  \n(40.83, -73.92)").
  [new RegExp(`\\(\\s*${NUMBER_TEXT}\\s*,\\s*${NUMBER_TEXT}\\s*\\)\\s*$`), 1],
  // Well-known text: "POINT (-73.92 40.83)", longitude first.
  [new RegExp(`^POINT\\s*\\(\\s*${NUMBER_TEXT}\\s+${NUMBER_TEXT}\\s*\\)$`, 'i'), 2],
  // GeoJSON: {"type": "Point", "coordinates": [-73.92, 40.83]}, longitude first; a position may add an altitude.
  [new RegExp(`"coordinates"\\s*:\\s*\\[\\s*${NUMBER_TEXT}\\s*,\\s*${NUMBER_TEXT}\\s*(?:,\\s*[+-]?\\d+(?:\\.\\d+)?\\s*)?\\]`), 2],
];
/** The API's JSON location ({"latitude": "40.83", "longitude": "-73.92", ...}), also as Python writes it (single quotes). */
const LATITUDE_KEY = new RegExp(`["']latitude["']\\s*:\\s*["']?${NUMBER_TEXT}`);
const LONGITUDE_KEY = new RegExp(`["']longitude["']\\s*:\\s*["']?${NUMBER_TEXT}`);

/** The latitude and longitude texts a Location holds, or null. */
function coordinatesOfLocation(text: string): [string, string] | null {
  const value = text.trim();
  if (value.length === 0) return null;
  for (const [pattern, latitudeGroup] of LOCATION_FORMS) {
    const m = pattern.exec(value);
    if (m) return latitudeGroup === 1 ? [m[1] as string, m[2] as string] : [m[2] as string, m[1] as string];
  }
  const latitude = LATITUDE_KEY.exec(value);
  const longitude = LONGITUDE_KEY.exec(value);
  return latitude && longitude ? [latitude[1] as string, longitude[1] as string] : null;
}

export const coordinatesNumeric = {
  id: 'coordinates_numeric',
  kind: 'transformation',
  description: 'Latitude and Longitude become numbers; when both are empty they are read from Location ("(lat, lon)" after any address lines, "POINT (lon lat)", or an object with latitude and longitude, as the API writes it); 0 becomes null, and both are null when either is. values_changed: coordinates turned into null.',
  /** Latitude and longitude of a record, both numbers or both null. */
  apply(fields: readonly string[], layout: ExportLayout, counts: CleaningCounts): [number | null, number | null] {
    const c = layout.columns;
    let latitude = parseCoordinate(fields[c.latitude]);
    let longitude = parseCoordinate(fields[c.longitude]);
    if (latitude === undefined && longitude === undefined && c.location >= 0) {
      const found = coordinatesOfLocation(fields[c.location] as string);
      if (found !== null) {
        latitude = parseCoordinate(found[0]);
        longitude = parseCoordinate(found[1]);
      }
    }
    if (latitude === null || longitude === null || (latitude === undefined) !== (longitude === undefined)) {
      counts.coordinates_numeric++;
      return [null, null];
    }
    return [latitude ?? null, longitude ?? null];
  },
} satisfies CleaningRule;

export const localTimestamps = {
  id: 'local_timestamps',
  kind: 'transformation',
  description: 'Created and Closed Date (MM/DD/YYYY hh:mm:ss AM/PM as the portal writes them, YYYY-MM-DDTHH:MM:SS.000 as the API does, and the forms a spreadsheet or pandas writes: M/D/YY H:MM, YYYY-MM-DD HH:MM:SS, a day alone at midnight) are written as local New York time YYYY-MM-DDTHH:MM:SS without zone. A Closed Date in such a form that names no time (02/30/2025) becomes null. values_changed: closed dates turned into null.',
  /** A Created or Closed Date as local `YYYY-MM-DDTHH:MM:SS`, or null when empty or not a valid time. */
  parse: parseExportTimestamp,
  /** Counts a non-empty Closed Date that became null (a placeholder counts under placeholder_to_null). */
  countClosedDate(raw: string, closedAt: string | null, counts: CleaningCounts): void {
    if (closedAt !== null || raw.trim().length === 0) return;
    if (!placeholderToNull.applies(raw, counts)) counts.local_timestamps++;
  },
} satisfies CleaningRule;

export const daysToClose = {
  id: 'days_to_close',
  kind: 'transformation',
  description: 'days_to_close is the real elapsed time from created_at to closed_at in days, 2 decimals, with the America/New_York zone (so the daylight-saving change of 2025-03-09 counts 23 hours for that day); null without a close time. values_changed: rows with a value. (values_changed of the transformations counts the rows that reach the repeated-submission check.)',
  apply(createdMs: number, closedAt: string | null, counts: CleaningCounts): number | null {
    if (closedAt === null) return null;
    counts.days_to_close++;
    return Math.round(((cityLocalTimeToEpochMs(closedAt) - createdMs) / 86_400_000) * 100) / 100;
  },
} satisfies CleaningRule;

/**
 * The rules in the order they are applied. Removal rules run first to last: a row removed by one
 * rule is counted there and never reaches the later ones. Transformations never remove a row; their
 * `values_changed` counts what they did (as each description says) to the requests that reach the
 * repeated-submission check, i.e. the rows left after the rules before it.
 */
export const CLEANING_RULES: readonly CleaningRuleDefinition[] = [
  malformedRecord,
  agencyNotDot,
  createdOutsidePeriod,
  duplicateUniqueKey,
  closedBeforeCreated,
  repeatedSubmission,
  freeTextDropped,
  placeholderToNull,
  canonicalSpelling,
  boroughCode,
  statusCode,
  channelCode,
  incidentZipText,
  councilDistrictInteger,
  coordinatesNumeric,
  localTimestamps,
  daysToClose,
];
