/**
 * The column layout of NYC Open Data's "311 Service Requests from 2010 to Present" (erm2-nwe9)
 * exports. Columns are found by name, never by position: every header generation of the portal's
 * CSV (41 columns; with computed-region columns; the 52/53 columns of 2013 to 2018; the newest with
 * Descriptor 2, Council District, Police Precinct), the API's field names (`unique_key`, ...) and the
 * keys of the API's JSON. Names are compared without case, spaces, underscores or punctuation
 * (normaliseHeaderName), so `Unique Key`, `unique_key`, `UNIQUE_KEY`, `UniqueKey` and R's
 * `Unique.Key` are one column. Columns the ingestion does not read are ignored.
 */
/** The 41 columns of the classic export, in their standard order. */
export const STANDARD_EXPORT_COLUMNS = [
  'Unique Key',
  'Created Date',
  'Closed Date',
  'Agency',
  'Agency Name',
  'Complaint Type',
  'Descriptor',
  'Location Type',
  'Incident Zip',
  'Incident Address',
  'Street Name',
  'Cross Street 1',
  'Cross Street 2',
  'Intersection Street 1',
  'Intersection Street 2',
  'Address Type',
  'City',
  'Landmark',
  'Facility Type',
  'Status',
  'Due Date',
  'Resolution Description',
  'Resolution Action Updated Date',
  'Community Board',
  'BBL',
  'Borough',
  'X Coordinate (State Plane)',
  'Y Coordinate (State Plane)',
  'Open Data Channel Type',
  'Park Facility Name',
  'Park Borough',
  'Vehicle Type',
  'Taxi Company Borough',
  'Taxi Pick Up Location',
  'Bridge Highway Name',
  'Bridge Highway Direction',
  'Road Ramp',
  'Bridge Highway Segment',
  'Latitude',
  'Longitude',
  'Location',
] as const;

/**
 * Columns the ingestion reads: one entry per column (adding a column is one entry here and one read
 * in clean-export.ts). Only the `required` ones (Unique Key and Created Date) must be present: an
 * export without another one is read with that field empty in every record, which `whenMissing`
 * says in the command's summary, one line per column.
 */
export const EXPORT_COLUMN_SPECS = {
  uniqueKey: { header: 'Unique Key', required: true, aliases: [], whenMissing: '' },
  createdDate: { header: 'Created Date', required: true, aliases: [], whenMissing: '' },
  closedDate: { header: 'Closed Date', required: false, aliases: [], whenMissing: 'closed_at and days_to_close are null for every row; a status that is not recognised is read as open' },
  agency: { header: 'Agency', required: false, aliases: [], whenMissing: 'no row has an agency: the DOT filter removes every row (--no-filter keeps them)' },
  complaintType: { header: 'Complaint Type', required: false, aliases: ['Problem (formerly Complaint Type)'], whenMissing: 'complaint_type is null for every row' },
  descriptor: { header: 'Descriptor', required: false, aliases: ['Problem Detail (formerly Descriptor)'], whenMissing: 'descriptor is null for every row' },
  locationType: { header: 'Location Type', required: false, aliases: [], whenMissing: 'location_type is null for every row' },
  incidentZip: { header: 'Incident Zip', required: false, aliases: [], whenMissing: 'incident_zip is null for every row' },
  status: { header: 'Status', required: false, aliases: [], whenMissing: 'status is inferred for every row: closed with a close time, otherwise open' },
  communityBoard: { header: 'Community Board', required: false, aliases: [], whenMissing: 'community_board is null for every row' },
  borough: { header: 'Borough', required: false, aliases: [], whenMissing: 'borough is null for every row' },
  channel: { header: 'Open Data Channel Type', required: false, aliases: [], whenMissing: 'channel is null for every row' },
  latitude: { header: 'Latitude', required: false, aliases: [], whenMissing: 'coordinates come from Location alone (null without it)' },
  longitude: { header: 'Longitude', required: false, aliases: [], whenMissing: 'coordinates come from Location alone (null without it)' },
  location: { header: 'Location', required: false, aliases: [], whenMissing: 'coordinates come from Latitude and Longitude alone' },
  councilDistrict: { header: 'Council District', required: false, aliases: [], whenMissing: 'council_district is null for every row' },
  // Read only to recognise repeated submissions at a place without coordinates; never stored.
  incidentAddress: { header: 'Incident Address', required: false, aliases: [], whenMissing: 'a request without coordinates is recognised as a repeat by its intersection only' },
  intersectionStreet1: { header: 'Intersection Street 1', required: false, aliases: [], whenMissing: 'a request without coordinates is recognised as a repeat by its address only' },
  intersectionStreet2: { header: 'Intersection Street 2', required: false, aliases: [], whenMissing: 'a request without coordinates is recognised as a repeat by its address only' },
} as const satisfies Record<string, { header: string; required: boolean; aliases: readonly string[]; whenMissing: string }>;

export type ExportColumnName = keyof typeof EXPORT_COLUMN_SPECS;

const COLUMN_NAMES = Object.keys(EXPORT_COLUMN_SPECS) as ExportColumnName[];

/** Position of each read column in a record; -1 for an optional column that is absent. */
export type ExportColumnIndexes = Record<ExportColumnName, number>;

export interface ExportLayout {
  columns: ExportColumnIndexes;
  /** 'standard-41' for exactly the classic 41 columns in their order, otherwise 'extended'. */
  layout: 'standard-41' | 'extended';
  /** Header names beyond the classic 41. */
  extraColumns: string[];
  /** Fields of a record: the header's. */
  fieldCount: number;
  /** The read columns the export lacks (each then gives what its `whenMissing` says). */
  missingColumns: ExportColumnName[];
}

export class MissingColumnError extends Error {
  readonly missing: string[];
  constructor(missing: string[]) {
    super(
      `The export lacks the needed column${missing.length > 1 ? 's' : ''} ${missing
        .map((name) => `"${name}"`)
        .join(', ')}: expected an export of NYC Open Data's 311 Service Requests (erm2-nwe9), a CSV with a header row naming at least Unique Key and Created Date (the portal's names or the API's field names).`,
    );
    this.name = 'MissingColumnError';
    this.missing = missing;
  }
}

/** A column name as compared: lower case, without spaces, underscores or punctuation (`unique_key`, `Unique Key` -> `uniquekey`). */
export function normaliseHeaderName(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9]+/g, '');
}

/** The API's field name of a portal column (`X Coordinate (State Plane)` -> `x_coordinate_state_plane`). */
export function apiFieldName(name: string): string {
  return name
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
}

/** Each normalised name a read column is known by (its header and aliases) -> the column. */
const COLUMN_BY_NAME: ReadonlyMap<string, ExportColumnName> = new Map(
  COLUMN_NAMES.flatMap((name) => {
    const spec: { header: string; aliases: readonly string[] } = EXPORT_COLUMN_SPECS[name];
    return [spec.header, ...spec.aliases].map((candidate) => [normaliseHeaderName(candidate), name] as const);
  }),
);

/** The read column a header name or JSON key names, or undefined. */
export function exportColumnNamed(name: string): ExportColumnName | undefined {
  return COLUMN_BY_NAME.get(normaliseHeaderName(name));
}

/** The fields of a JSON export's records: the read columns, in the order of EXPORT_COLUMN_SPECS (a record's keys are mapped onto them). */
export const JSON_RECORD_COLUMNS: readonly ExportColumnName[] = COLUMN_NAMES;
/** The header of a JSON export's records, as a CSV header would name them. */
export const JSON_RECORD_HEADER: readonly string[] = COLUMN_NAMES.map((name) => EXPORT_COLUMN_SPECS[name].header);

/** The field at `index` of a record, '' for a column the export lacks (index -1). */
export function fieldOf(fields: readonly string[], index: number): string {
  return index < 0 ? '' : (fields[index] as string);
}

/** The name of a read column as the messages give it (`Open Data Channel Type`). */
export function columnLabel(name: ExportColumnName): string {
  return EXPORT_COLUMN_SPECS[name].header;
}

/** What a missing read column gives, for the summary. */
export function missingColumnEffect(name: ExportColumnName): string {
  return EXPORT_COLUMN_SPECS[name].whenMissing;
}

/** Find the read columns in a header row; throws MissingColumnError naming every missing needed column. */
export function locateExportColumns(header: readonly string[]): ExportLayout {
  const columns = Object.fromEntries(COLUMN_NAMES.map((name) => [name, -1])) as ExportColumnIndexes;
  header.forEach((name, index) => {
    const column = exportColumnNamed(name);
    if (column !== undefined && columns[column] < 0) columns[column] = index;
  });
  const missingColumns = COLUMN_NAMES.filter((name) => columns[name] < 0);
  const missingNeeded = missingColumns.filter((name) => EXPORT_COLUMN_SPECS[name].required).map(columnLabel);
  if (missingNeeded.length > 0) throw new MissingColumnError(missingNeeded);
  const standard = new Set(STANDARD_EXPORT_COLUMNS.map(normaliseHeaderName));
  const extraColumns = header.filter((name) => !standard.has(normaliseHeaderName(name)));
  const isStandard =
    extraColumns.length === 0 &&
    header.length === STANDARD_EXPORT_COLUMNS.length &&
    header.every((name, i) => normaliseHeaderName(name) === normaliseHeaderName(STANDARD_EXPORT_COLUMNS[i] ?? ''));
  return { columns, layout: isStandard ? 'standard-41' : 'extended', extraColumns, fieldCount: header.length, missingColumns };
}
