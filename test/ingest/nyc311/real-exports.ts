/**
 * The real exports of ../shared/data/nyc311/real (its README says what each is), read here apart
 * from the command's reader, so that each served row can be compared field by field with its
 * source row: a plain CSV parser and JSON.parse, each field found by its portal name or its API
 * name, each value turned into what the contract serves by the rules written out below (the
 * reference the snapshot must agree with). The folder is found through SHARED_DATA_DIR.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { ServiceRequest } from '../../../src/snapshot/service-request.js';
import { SHARED_DATA_DIR } from './fixture-paths.js';

export const REAL_EXPORTS_DIR = join(SHARED_DATA_DIR, 'nyc311/real');

/** The export files of the folder (every .csv and .json), or none when the folder is absent (said once on stderr). */
export function realExportFiles(): string[] {
  if (!existsSync(REAL_EXPORTS_DIR)) {
    console.warn(`SKIPPED the real NYC 311 exports: folder ${REAL_EXPORTS_DIR} not found (set SHARED_DATA_DIR to the folder holding nyc311/real)`);
    return [];
  }
  return readdirSync(REAL_EXPORTS_DIR)
    .filter((name) => /\.(csv|json)$/.test(name))
    .sort();
}

/** The twins: the same 1,000 requests as the API's CSV (re-written by pandas) and as the API's JSON. */
export const TWINS = ['AnthonyUPF__lab-sql-intro-es__311_Service_Requests.csv', 'AnthonyUPF__lab-sql-intro-es__311_Service_Requests.json'] as const;

/** RFC 4180 records of a text (LF or CRLF), a byte order mark dropped: written apart from the command's reader. */
function csvRecords(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let quoted = false;
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  for (let i = 0; i < body.length; i++) {
    const c = body[i] as string;
    if (quoted) {
      if (c === '"' && body[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      record.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && body[i + 1] === '\n') i++;
      record.push(field);
      records.push(record);
      record = [];
      field = '';
    } else field += c;
  }
  if (field.length > 0 || record.length > 0) records.push([...record, field]);
  return records.filter((r) => !(r.length === 1 && r[0] === ''));
}

/** A source record: its fields by lower-case, underscored name (the API's names). */
type SourceRecord = Map<string, string>;
const apiName = (name: string): string => name.trim().toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_+|_+$/g, '');

/** The records of a real export, as read apart from the command. */
export function sourceRecords(file: string): SourceRecord[] {
  const text = readFileSync(join(REAL_EXPORTS_DIR, file), 'utf8');
  if (file.endsWith('.json')) {
    return (JSON.parse(text) as Record<string, unknown>[]).map(
      (object) => new Map(Object.entries(object).map(([key, value]) => [apiName(key), typeof value === 'string' ? value : JSON.stringify(value)])),
    );
  }
  const [header = [], ...records] = csvRecords(text);
  const names = header.map(apiName);
  return records.map((record) => new Map(names.map((name, i) => [name, record[i] ?? ''])));
}

const PLACEHOLDERS = new Set(['', 'unspecified', 'unknown', 'n/a', 'na', 'none', 'null', '-']);
const isPlaceholder = (value: string): boolean => PLACEHOLDERS.has(value.trim().toLowerCase());

/** `MM/DD/YYYY hh:mm:ss AM` or `YYYY-MM-DDTHH:MM:SS.000` as New York local time (the two forms of these files). */
function localTime(value: string): string | null {
  if (value === '') return null;
  const portal = /^(\d\d)\/(\d\d)\/(\d{4}) (\d\d):(\d\d):(\d\d) (AM|PM)$/.exec(value);
  if (portal) {
    const [, mo, d, y, h, mi, s, meridiem] = portal as unknown as string[];
    const hour = (Number(h) % 12) + (meridiem === 'PM' ? 12 : 0);
    return `${y}-${mo}-${d}T${String(hour).padStart(2, '0')}:${mi}:${s}`;
  }
  const api = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)\.000$/.exec(value);
  if (api) return api[1] as string;
  throw new Error(`a time in no form of these files: ${value}`);
}

const STATUS: Record<string, ServiceRequest['status']> = { closed: 'closed', open: 'open', 'in progress': 'in_progress', assigned: 'assigned', pending: 'pending', started: 'in_progress' };
const BOROUGH: Record<string, ServiceRequest['borough']> = { BRONX: 'bronx', BROOKLYN: 'brooklyn', MANHATTAN: 'manhattan', QUEENS: 'queens', 'STATEN ISLAND': 'staten_island' };
const CHANNEL: Record<string, ServiceRequest['channel']> = { PHONE: 'phone', ONLINE: 'online', MOBILE: 'mobile', OTHER: 'other' };

function text(value: string | undefined): string | null {
  return value === undefined || isPlaceholder(value) ? null : value.trim().replace(/\s+/g, ' ');
}

function coordinate(value: string | undefined): number | null {
  if (value === undefined || value.trim() === '') return null;
  const n = Number(value);
  return n === 0 ? null : n;
}

/** What the snapshot must serve for a source record (before canonical spelling, which may change the case only). */
export function expectedRow(record: SourceRecord): Omit<ServiceRequest, 'days_to_close'> {
  const get = (name: string): string => record.get(name) ?? '';
  const closedAt = localTime(get('closed_date'));
  const zip = get('incident_zip').trim().replace(/^(\d{5})\.0+$/, '$1');
  const council = get('council_district').trim();
  const councilNumber = /^\d+$/.test(council) ? Number(council) : 0;
  const board = text(get('community_board'));
  return {
    id: Number(get('unique_key')),
    created_at: localTime(get('created_date')) as string,
    closed_at: closedAt,
    status: STATUS[get('status').trim().toLowerCase()] ?? (closedAt === null ? 'open' : 'closed'),
    complaint_type: text(get('complaint_type')),
    descriptor: text(get('descriptor')),
    location_type: text(get('location_type')),
    borough: BOROUGH[get('borough').trim().toUpperCase()] ?? null,
    community_board: board === null || /unspecified/i.test(board) ? null : board.toUpperCase(),
    council_district: councilNumber >= 1 && councilNumber <= 51 ? councilNumber : null,
    incident_zip: /^\d{5}$/.test(zip) && zip !== '00000' ? zip : /^(\d{5})-\d{4}$/.exec(zip)?.[1] ?? null,
    channel: isPlaceholder(get('open_data_channel_type')) ? null : (CHANNEL[get('open_data_channel_type').trim().toUpperCase()] ?? 'other'),
    latitude: coordinate(record.get('latitude')),
    longitude: coordinate(record.get('longitude')),
  };
}

/**
 * Every served row equals its source row (the first record of its Unique Key), field by field; the
 * spellings compared without case (canonical_spelling writes each spelling the way most of the file
 * does). Returns how many rows were compared.
 */
export function expectServedAsInFile(file: string, served: readonly ServiceRequest[]): number {
  const byKey = new Map<number, SourceRecord>();
  for (const record of sourceRecords(file)) {
    const id = Number(record.get('unique_key'));
    if (!byKey.has(id)) byKey.set(id, record);
  }
  for (const row of served) {
    const source = byKey.get(row.id);
    expect(source, `${file}: served request ${row.id} is in the file`).toBeDefined();
    const expected = expectedRow(source as SourceRecord);
    const fold = (value: string | null): string | null => (value === null ? null : value.toLowerCase());
    const { days_to_close: days, ...fields } = row;
    expect(
      { ...fields, complaint_type: fold(fields.complaint_type), descriptor: fold(fields.descriptor), location_type: fold(fields.location_type) },
      `${file}: request ${row.id}`,
    ).toEqual({ ...expected, complaint_type: fold(expected.complaint_type), descriptor: fold(expected.descriptor), location_type: fold(expected.location_type) });
    expect(days === null, `${file}: request ${row.id} days_to_close`).toBe(expected.closed_at === null);
  }
  return served.length;
}
