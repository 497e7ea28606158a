/**
 * The column layout of NYC Open Data's "311 Service Requests from 2010 to Present" (erm2-nwe9)
 * CSV export. Columns are found by header name, never by position, so the classic 41-column layout
 * and newer layouts with extra columns (Council District, Police Precinct, ...) are both read.
 * Header names are compared after normalisation (lower case, runs of other characters -> `_`), so
 * the Socrata API field names (`unique_key`, `created_date`, ...) are accepted too.
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

/** Columns the ingestion reads. `required` ones must be present, the others are used when present. */
export const EXPORT_COLUMN_SPECS = {
  uniqueKey: { header: 'Unique Key', required: true, aliases: [] },
  createdDate: { header: 'Created Date', required: true, aliases: [] },
  closedDate: { header: 'Closed Date', required: true, aliases: [] },
  agency: { header: 'Agency', required: true, aliases: [] },
  complaintType: { header: 'Complaint Type', required: true, aliases: ['Problem (formerly Complaint Type)'] },
  descriptor: { header: 'Descriptor', required: true, aliases: ['Problem Detail (formerly Descriptor)'] },
  locationType: { header: 'Location Type', required: true, aliases: [] },
  incidentZip: { header: 'Incident Zip', required: true, aliases: [] },
  status: { header: 'Status', required: true, aliases: [] },
  communityBoard: { header: 'Community Board', required: true, aliases: [] },
  borough: { header: 'Borough', required: true, aliases: [] },
  channel: { header: 'Open Data Channel Type', required: true, aliases: [] },
  latitude: { header: 'Latitude', required: true, aliases: [] },
  longitude: { header: 'Longitude', required: true, aliases: [] },
  location: { header: 'Location', required: false, aliases: [] },
  councilDistrict: { header: 'Council District', required: false, aliases: [] },
  // Read only to recognise repeated submissions at a place without coordinates; never stored.
  incidentAddress: { header: 'Incident Address', required: false, aliases: [] },
  intersectionStreet1: { header: 'Intersection Street 1', required: false, aliases: [] },
  intersectionStreet2: { header: 'Intersection Street 2', required: false, aliases: [] },
} as const satisfies Record<string, { header: string; required: boolean; aliases: readonly string[] }>;

export type ExportColumnName = keyof typeof EXPORT_COLUMN_SPECS;

/** Position of each read column in a record; -1 for an optional column that is absent. */
export type ExportColumnIndexes = Record<ExportColumnName, number>;

export interface ExportLayout {
  columns: ExportColumnIndexes;
  /** 'standard-41' for exactly the classic 41 columns, otherwise 'extended'. */
  layout: 'standard-41' | 'extended';
  /** Header names beyond the classic 41. */
  extraColumns: string[];
  fieldCount: number;
}

export class MissingColumnError extends Error {
  readonly missing: string[];
  constructor(missing: string[]) {
    super(
      `The export lacks the needed column${missing.length > 1 ? 's' : ''} ${missing
        .map((name) => `"${name}"`)
        .join(', ')}: expected a CSV in the layout of NYC Open Data's 311 Service Requests (erm2-nwe9) with a header row.`,
    );
    this.name = 'MissingColumnError';
    this.missing = missing;
  }
}

export function normaliseHeaderName(name: string): string {
  return name
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
}

/** Find the read columns in a header row; throws MissingColumnError naming every missing needed column. */
export function locateExportColumns(header: readonly string[]): ExportLayout {
  const positions = new Map<string, number>();
  header.forEach((name, index) => {
    const key = normaliseHeaderName(name);
    if (!positions.has(key)) positions.set(key, index);
  });
  const columns = {} as ExportColumnIndexes;
  const missing: string[] = [];
  for (const [name, spec] of Object.entries(EXPORT_COLUMN_SPECS) as [ExportColumnName, (typeof EXPORT_COLUMN_SPECS)[ExportColumnName]][]) {
    let index = -1;
    for (const candidate of [spec.header, ...spec.aliases]) {
      const found = positions.get(normaliseHeaderName(candidate));
      if (found !== undefined) {
        index = found;
        break;
      }
    }
    if (index < 0 && spec.required) missing.push(spec.header);
    columns[name] = index;
  }
  if (missing.length > 0) throw new MissingColumnError(missing);
  const standard = new Set(STANDARD_EXPORT_COLUMNS.map(normaliseHeaderName));
  const extraColumns = header.filter((name) => !standard.has(normaliseHeaderName(name)));
  const isStandard =
    extraColumns.length === 0 &&
    header.length === STANDARD_EXPORT_COLUMNS.length &&
    header.every((name, i) => normaliseHeaderName(name) === normaliseHeaderName(STANDARD_EXPORT_COLUMNS[i] ?? ''));
  return { columns, layout: isStandard ? 'standard-41' : 'extended', extraColumns, fieldCount: header.length };
}
