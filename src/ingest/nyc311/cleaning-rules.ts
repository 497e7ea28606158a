/**
 * The cleaning rules of the snapshot, written down as data (id, kind, description) so that
 * `GET /v1/dataset` can show each rule with the number of rows it removed, and the value mappings
 * that the rules use (placeholders, borough, status and channel codes).
 */
import type { Borough, Channel, CleaningRuleKind, Status } from './service-request.js';

/** Default filter of the snapshot: agency and creation period (inclusive days, local time). */
export const SNAPSHOT_AGENCY = 'DOT';
export const SNAPSHOT_PERIOD = { start: '2025-01-01', end: '2025-06-30' } as const;
/** Two submissions this close in time (minutes) at the same place, same type and descriptor are one request. */
export const REPEAT_WINDOW_MINUTES = 60;

export interface CleaningRuleDefinition {
  id: CleaningRuleId;
  kind: CleaningRuleKind;
  description: string;
}

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

/**
 * The rules in the order they are applied. Removal rules run first to last: a row removed by one
 * rule is counted there and never reaches the later ones. Transformations never remove a row; their
 * `values_changed` counts what they did (as each description says) to the requests that reach the
 * repeated-submission check, i.e. the rows left after the rules before it.
 */
export const CLEANING_RULES: readonly CleaningRuleDefinition[] = [
  {
    id: 'malformed_record',
    kind: 'removal',
    description:
      'A record whose number of fields differs from the header, or whose Unique Key is not a positive integer, or whose Created Date is empty or not a valid time, is left out.',
  },
  {
    id: 'agency_not_dot',
    kind: 'filter',
    description: `Only requests of the Department of Transportation are kept: Agency equals "${SNAPSHOT_AGENCY}" (any case). Switched off by --no-filter.`,
  },
  {
    id: 'created_outside_period',
    kind: 'filter',
    description: `Only requests created from ${SNAPSHOT_PERIOD.start}T00:00:00 to ${SNAPSHOT_PERIOD.end}T23:59:59 local time (both included) are kept. Switched off by --no-filter.`,
  },
  {
    id: 'duplicate_unique_key',
    kind: 'removal',
    description: 'A record whose Unique Key was already read is left out; the first record in file order is kept.',
  },
  {
    id: 'closed_before_created',
    kind: 'removal',
    description: 'A request whose Closed Date is earlier than its Created Date is left out.',
  },
  {
    id: 'repeated_submission',
    kind: 'removal',
    description:
      `A repeated submission is left out: a request with the same complaint type and descriptor (compared without case; two missing values are equal) at the same place as a kept request created at most ${REPEAT_WINDOW_MINUTES} minutes (real time) before it, or at the same time with a smaller Unique Key. ` +
      'The place is the latitude and longitude rounded to 5 decimals; without coordinates, the incident address with the borough; without an address, the two intersection streets with the borough; a request with none of these is never a repeat. ' +
      'Requests are taken in order of creation, then Unique Key, so the earliest submission is kept.',
  },
  {
    id: 'free_text_dropped',
    kind: 'transformation',
    description:
      'No street address and no free text is kept: incident address, street name, cross and intersection streets, address type, city, landmark, facility type, BBL, state-plane coordinates, the Location text, park, vehicle, taxi and bridge/highway fields, due date and resolution description and date are not stored. values_changed: rows that had an incident address or intersection.',
  },
  {
    id: 'placeholder_to_null',
    kind: 'transformation',
    description:
      'Placeholder values become null in every stored field except status (see status_code): empty text and "Unspecified", "Unknown", "N/A", "NA", "None", "Null", "-" (any case, surrounding spaces ignored). A community board naming no board ("Unspecified MANHATTAN", "0 Unspecified") becomes null; the borough stays in borough. values_changed: non-empty placeholder values turned into null.',
  },
  {
    id: 'canonical_spelling',
    kind: 'transformation',
    description:
      'Complaint type, descriptor and location type are trimmed, runs of spaces become one space, and spellings that differ only in case are written one way: the most frequent spelling in the export (ties: the first in code-point order). Community board is written in upper case ("04 BRONX"). values_changed: values rewritten to another spelling.',
  },
  {
    id: 'borough_code',
    kind: 'transformation',
    description:
      'Borough (any case) becomes a code: BRONX -> bronx, BROOKLYN -> brooklyn, MANHATTAN -> manhattan, QUEENS -> queens, STATEN ISLAND -> staten_island; any other value becomes null. values_changed: values not recognised (not placeholders) turned into null.',
  },
  {
    id: 'status_code',
    kind: 'transformation',
    description:
      'Status (any case) becomes a code: Open -> open, Assigned -> assigned, In Progress and Started -> in_progress, Pending -> pending, Closed -> closed. Status is never null: an Unspecified, empty or unrecognised status becomes closed when the request has a close time, otherwise open. values_changed: statuses inferred this way.',
  },
  {
    id: 'channel_code',
    kind: 'transformation',
    description:
      'Open Data Channel Type (any case) becomes a code: ONLINE -> online, PHONE -> phone, MOBILE -> mobile, OTHER -> other; UNKNOWN and other placeholders become null (not recorded); any other non-empty value becomes other. values_changed: unrecognised values turned into other.',
  },
  {
    id: 'incident_zip_text',
    kind: 'transformation',
    description:
      'Incident Zip is kept as text of 5 digits (leading zeros kept); ZIP+4 keeps its first 5 digits; any other value, and 00000, becomes null. values_changed: values turned into null or shortened.',
  },
  {
    id: 'council_district_integer',
    kind: 'transformation',
    description:
      'Council District becomes an integer from 1 to 51, otherwise null; an export without that column gives null. values_changed: non-empty values turned into null.',
  },
  {
    id: 'coordinates_numeric',
    kind: 'transformation',
    description:
      'Latitude and Longitude become numbers; when both are empty they are read from the Location text "(lat, lon)"; a value that is not a number, or 0, becomes null, and both are null when either is. values_changed: coordinates turned into null.',
  },
  {
    id: 'local_timestamps',
    kind: 'transformation',
    description:
      'Created and Closed Date (MM/DD/YYYY hh:mm:ss AM/PM, also ISO 8601) are written as local New York time YYYY-MM-DDTHH:MM:SS without zone. A Closed Date that is not a valid time becomes null. values_changed: closed dates turned into null.',
  },
  {
    id: 'days_to_close',
    kind: 'transformation',
    description:
      'days_to_close is the real elapsed time from created_at to closed_at in days, 2 decimals, with the America/New_York zone (so the daylight-saving change of 2025-03-09 counts 23 hours for that day); null without a close time. values_changed: rows with a value. (values_changed of the transformations counts the rows that reach the repeated-submission check.)',
  },
];

const PLACEHOLDERS = new Set(['', 'unspecified', 'unknown', 'n/a', 'na', 'none', 'null', '-']);

/** True for empty text and placeholders such as "Unspecified", "N/A" (any case, spaces trimmed). */
export function isPlaceholder(raw: string): boolean {
  if (raw.length > 12) return false;
  return PLACEHOLDERS.has(raw.trim().toLowerCase());
}

const BOROUGH_CODES: ReadonlyMap<string, Borough> = new Map([
  ['bronx', 'bronx'],
  ['brooklyn', 'brooklyn'],
  ['manhattan', 'manhattan'],
  ['queens', 'queens'],
  ['staten island', 'staten_island'],
  ['staten_island', 'staten_island'],
]);

const STATUS_CODES: ReadonlyMap<string, Status> = new Map([
  ['open', 'open'],
  ['assigned', 'assigned'],
  ['in progress', 'in_progress'],
  ['in_progress', 'in_progress'],
  ['started', 'in_progress'],
  ['pending', 'pending'],
  ['closed', 'closed'],
]);

const CHANNEL_CODES: ReadonlyMap<string, Channel> = new Map([
  ['online', 'online'],
  ['phone', 'phone'],
  ['mobile', 'mobile'],
  ['other', 'other'],
]);

/** Lower case, trimmed, runs of white space as one space. */
export function foldText(raw: string): string {
  const trimmed = raw.trim();
  return (/\s\s|[\t\r\n]/.test(trimmed) ? trimmed.replace(/\s+/g, ' ') : trimmed).toLowerCase();
}

export function boroughCode(raw: string): Borough | null | undefined {
  if (isPlaceholder(raw)) return null;
  return BOROUGH_CODES.get(foldText(raw));
}

export function statusCode(raw: string): Status | undefined {
  return STATUS_CODES.get(foldText(raw));
}

export function channelCode(raw: string): Channel | undefined {
  return CHANNEL_CODES.get(foldText(raw));
}
