import { describe, expect, it } from 'vitest';
import type { CleanedExport } from '../../../src/ingest/nyc311/clean-export.js';
import { cleanExportText } from '../../../src/ingest/nyc311/parallel-staging.js';
import { readFileTextChunks } from '../../../src/ingest/nyc311/csv-reader.js';
import * as rule from '../../../src/ingest/nyc311/cleaning-rules.js';
import { MissingColumnError, STANDARD_EXPORT_COLUMNS, locateExportColumns } from '../../../src/ingest/nyc311/export-columns.js';
import { cityWallTimeExists, cityWallTimeToEpochMs, elapsedDaysBetween, parseExportTimestamp, readExportTimestamp } from '../../../src/snapshot/new-york-time.js';
import type { ServiceRequest } from '../../../src/snapshot/service-request.js';
import { COUNCIL_DISTRICT_FIXTURE, MALFORMED_FIXTURE, MISSING_COLUMNS_FIXTURE, STANDARD_41_FIXTURE } from './fixture-paths.js';

const clean = (path: string, applyFilters = true): Promise<CleanedExport> =>
  cleanExportText(readFileTextChunks(path), { applyFilters });

const base: Omit<ServiceRequest, 'id' | 'created_at'> = {
  closed_at: null,
  status: 'closed',
  complaint_type: 'Street Condition',
  descriptor: 'Pothole',
  location_type: 'Street',
  borough: 'brooklyn',
  community_board: '06 BROOKLYN',
  council_district: null,
  incident_zip: '11215',
  channel: 'phone',
  latitude: null,
  longitude: null,
  days_to_close: null,
};

/** The cleaned rows of the hand-written export (see test/fixtures/nyc311/README.md), 41-column layout. */
const EXPECTED_ROWS: ServiceRequest[] = [
  { ...base, id: 1006, created_at: '2025-01-01T00:00:00', status: 'in_progress', complaint_type: 'Street Light Condition', descriptor: 'Street Light Out', location_type: null, borough: 'queens', community_board: '12 QUEENS', incident_zip: '11434', channel: 'online', latitude: 40.68, longitude: -73.78 },
  { ...base, id: 1001, created_at: '2025-01-15T08:00:00', closed_at: '2025-01-17T08:00:00', latitude: 40.6712345678, longitude: -73.9812345678, days_to_close: 2 },
  { ...base, id: 1009, created_at: '2025-01-15T09:00:01', status: 'assigned', latitude: 40.6712345678, longitude: -73.9812345678 },
  { ...base, id: 1010, created_at: '2025-03-03T10:00:00', status: 'pending', complaint_type: 'Sidewalk Condition', descriptor: 'Broken Sidewalk', location_type: 'Sidewalk' },
  { ...base, id: 1019, created_at: '2025-03-08T12:00:00', closed_at: '2025-03-09T12:00:00', latitude: 40.65, longitude: -73.95, days_to_close: 0.96 },
  { ...base, id: 1020, created_at: '2025-03-09T01:30:00', closed_at: '2025-03-09T03:30:00', latitude: 40.66, longitude: -73.96, days_to_close: 0.04 },
  { ...base, id: 1012, created_at: '2025-04-04T13:00:00', closed_at: '2025-04-04T15:00:00', complaint_type: 'Traffic Signal Condition', descriptor: 'Controller', location_type: null, borough: 'manhattan', community_board: '05 MANHATTAN', incident_zip: '10010', days_to_close: 0.08 },
  { ...base, id: 1014, created_at: '2025-05-05T05:00:00', status: 'in_progress', complaint_type: 'Bridge Condition', descriptor: 'Guard Rail - Bridge', location_type: 'Bridge' },
  { ...base, id: 1015, created_at: '2025-05-05T05:01:00', status: 'in_progress', complaint_type: 'Bridge Condition', descriptor: 'Guard Rail - Bridge', location_type: 'Bridge' },
  { ...base, id: 1016, created_at: '2025-05-06T07:00:00', closed_at: '2025-05-06T19:30:00', location_type: null, borough: null, community_board: null, incident_zip: null, channel: null, latitude: 40.64, longitude: -73.94, days_to_close: 0.52 },
  { ...base, id: 1017, created_at: '2025-05-07T08:00:00', status: 'in_progress', borough: 'staten_island', community_board: null, incident_zip: '10314', channel: 'online', latitude: 40.58, longitude: -74.15 },
  { ...base, id: 1018, created_at: '2025-05-08T09:00:00', status: 'open', incident_zip: null, channel: 'other' },
  { ...base, id: 1021, created_at: '2025-05-09T10:00:00', closed_at: '2025-05-10T10:00:00', latitude: 40.67, longitude: -73.97, days_to_close: 1 },
  { ...base, id: 1022, created_at: '2025-05-10T11:00:00', status: 'open', latitude: 40.68, longitude: -73.98 },
  { ...base, id: 1005, created_at: '2025-06-30T23:59:59', status: 'open', latitude: 40.7, longitude: -73.9 },
];

/** Council District of the kept rows in the newer layout (1016: "Unspecified", 1018: "0"). */
const COUNCIL_DISTRICTS: Record<number, number | null> = {
  1006: 28, 1001: 39, 1009: 39, 1010: 39, 1019: 39, 1020: 39, 1012: 3, 1014: 39, 1015: 39, 1016: null, 1017: 50, 1018: null, 1021: 39, 1022: 39, 1005: 39,
};

const removed = (result: CleanedExport): Record<string, number> =>
  Object.fromEntries(result.rules.filter((r) => r.kind !== 'transformation').map((r) => [r.id, r.rows_removed]));
const changed = (result: CleanedExport): Record<string, number> =>
  Object.fromEntries(result.rules.filter((r) => r.kind === 'transformation').map((r) => [r.id, r.values_changed]));

describe.each([
  ['41-column layout', STANDARD_41_FIXTURE, 'standard-41'],
  ['layout with Council District', COUNCIL_DISTRICT_FIXTURE, 'extended'],
] as const)('cleaning a hand-written export, %s', (_name, path, layout) => {
  const withCouncil = layout === 'extended';
  const expectedRows = EXPECTED_ROWS.map((row) => ({ ...row, council_district: withCouncil ? (COUNCIL_DISTRICTS[row.id] ?? null) : null }));

  it('recognises the layout and reads every record', async () => {
    const result = await clean(path);
    expect(result.layout.layout).toBe(layout);
    expect(result.layout.extraColumns).toEqual(withCouncil ? ['Council District', 'Police Precinct'] : []);
    expect(result.rawRowsRead).toBe(23);
  });

  it('keeps exactly the expected rows, cleaned, in (created_at, id) order', async () => {
    const result = await clean(path);
    expect(result.rows).toEqual(expectedRows);
  });

  it('removes rows by the removal rules, each counted once by the first rule that removes it', async () => {
    const result = await clean(path);
    expect(removed(result)).toEqual({
      malformed_record: 0, // the malformed records are in malformed-records.csv
      agency_not_dot: 1, // 1002 NYPD
      created_outside_period: 2, // 1003 (2024-12-31T23:59:59), 1004 (2025-07-01T00:00:00)
      duplicate_unique_key: 1, // 1001 a second time
      closed_before_created: 1, // 1007
      repeated_submission: 3, // 1008 (30 min after 1001), 1011 (same address), 1013 (same intersection)
    });
    expect(result.rows.length + Object.values(removed(result)).reduce((a, b) => a + b, 0)).toBe(result.rawRowsRead);
  });

  it('counts what the transformations changed', async () => {
    const counts = changed(await clean(path));
    expect(counts).toMatchObject({
      canonical_spelling: 3, // STREET CONDITION, pothole (1008), street condition (1016)
      status_code: 2, // 1016, 1018 Unspecified
      channel_code: 1, // FAX -> other
      incident_zip_text: 2, // 10314-1234, 123
      coordinates_numeric: 1, // 0, 0
      local_timestamps: 1, // Closed Date 02/30/2025 (a form of the export, but no such day)
      council_district_integer: withCouncil ? 1 : 0, // "0"
      // 1016: N/A location type, Unspecified borough, 0 Unspecified board, UNKNOWN channel, N/A zip
      // (+ Unspecified council district); 1017: Unspecified STATEN ISLAND. (Unspecified statuses are inferred, not null.)
      placeholder_to_null: withCouncil ? 7 : 6,
    });
  });

  it('keeps the boundaries of the period: 2025-01-01T00:00:00 and 2025-06-30T23:59:59 are in', async () => {
    const ids = (await clean(path)).rows.map((r) => r.id);
    expect(ids).toContain(1006);
    expect(ids).toContain(1005);
    expect(ids).not.toContain(1003);
    expect(ids).not.toContain(1004);
  });

  it('treats a request 60 minutes and 1 second after a kept one at the same place as a new request', async () => {
    const ids = (await clean(path)).rows.map((r) => r.id);
    expect(ids).toContain(1009);
    expect(ids).not.toContain(1008);
    expect(ids).toEqual(expect.arrayContaining([1014, 1015])); // no place: never a repeat
  });

  it('stores no street address or free text', async () => {
    const text = JSON.stringify((await clean(path)).rows);
    for (const fragment of ['AVENUE', 'MAIN STREET', 'no defect', 'Queensboro', 'UNIQUE ROAD', 'Department of']) {
      expect(text).not.toContain(fragment);
    }
    for (const row of (await clean(path)).rows) expect(Object.keys(row)).toHaveLength(15);
  });

  it('with the filters off keeps the other agency and the requests outside the period', async () => {
    const result = await clean(path, false);
    expect(result.rows.map((r) => r.id)).toEqual(expect.arrayContaining([1002, 1003, 1004]));
    expect(result.rows).toHaveLength(EXPECTED_ROWS.length + 3);
    const rules = Object.fromEntries(result.rules.map((r) => [r.id, r]));
    expect(rules.agency_not_dot?.applied).toBe(false);
    expect(rules.created_outside_period?.applied).toBe(false);
    expect(rules.repeated_submission?.applied).toBe(true);
  });
});

describe('columns of the export', () => {
  it('reads a file without Borough and Status: borough null and the status inferred in every row, the columns named as missing', async () => {
    const result = await clean(MISSING_COLUMNS_FIXTURE, false);
    expect(result.rows.length).toBeGreaterThan(0);
    for (const row of result.rows) {
      expect(row.borough).toBeNull();
      expect(row.status).toBe(row.closed_at === null ? 'open' : 'closed');
    }
    expect(result.report.missingColumns).toEqual(['status', 'borough', 'councilDistrict']);
    expect(changed(result).status_code).toBe(result.rows.length);
  });

  it('refuses a file without Unique Key or Created Date, naming each missing one', async () => {
    const header = STANDARD_EXPORT_COLUMNS.filter((name) => name !== 'Unique Key' && name !== 'Created Date').join(',');
    await expect(cleanExportText([`${header}\n`])).rejects.toBeInstanceOf(MissingColumnError);
    await expect(cleanExportText([`${header}\n`])).rejects.toThrow(/lacks the needed columns "Unique Key", "Created Date"/);
  });

  it('leaves out each record with a value in a form no export uses, counted by column with its line, Unique Key and value', async () => {
    const result = await clean(MALFORMED_FIXTURE, false);
    expect(result.rows.map((row) => row.id)).toEqual([2001, 2002]);
    expect(result.rows[1]).toMatchObject({ created_at: '2025-02-03T09:15:00', closed_at: '2025-02-05T17:30:00' }); // a spreadsheet's 2/3/25 9:15
    expect(removed(result).malformed_record).toBe(6);
    expect(result.report.malformed).toEqual({
      'Closed Date': { rows: 1, examples: [{ line: 4, unique_key: '2003', column: 'Closed Date', value: 'not a date' }] },
      'Created Date': {
        rows: 2,
        examples: [
          { line: 5, unique_key: '2004', column: 'Created Date', value: '2025-02-03T10:30:00Z' },
          { line: 8, unique_key: '2007', column: 'Created Date', value: 'not a date' },
        ],
      },
      'Unique Key': { rows: 1, examples: [{ line: 6, unique_key: '6.1E+07', column: 'Unique Key', value: '6.1E+07' }] },
      Latitude: { rows: 1, examples: [{ line: 7, unique_key: '2006', column: 'Latitude', value: 'N40.676' }] },
      '(record)': { rows: 1, examples: [{ line: 9, unique_key: null, column: '(record)', value: '4 fields (the header has 41)' }] },
    });
    expect(result.report.notServed.malformed_record.examples.map((example) => example.line)).toEqual([4, 5, 6]);
  });

  it('refuses an empty file, and reads a header without rows as an empty export', async () => {
    await expect(cleanExportText([''])).rejects.toThrow(/empty: no header row/);
    const header = 'Unique Key,Created Date,Closed Date,Agency,Complaint Type,Descriptor,Location Type,Incident Zip,Status,Community Board,Borough,Open Data Channel Type,Latitude,Longitude\n';
    const result = await cleanExportText([header]);
    expect(result.rows).toEqual([]);
    expect(result.rawRowsRead).toBe(0);
  });

  it('matches a column whatever its case, spaces, underscores or punctuation (R writes Unique.Key); extra columns ignored', () => {
    const layout = locateExportColumns(['', 'UNIQUE_KEY', 'created date', 'Created.Date', 'OpenDataChannelType', ':@computed_region_efsh_h5xi', 'City Council Districts', 'descriptor_2']);
    expect(layout.columns).toMatchObject({ uniqueKey: 1, createdDate: 2, channel: 4, councilDistrict: -1, descriptor: -1 });
    expect(layout.missingColumns).toContain('councilDistrict');
    expect(layout.missingColumns).not.toContain('channel');
  });

  it('finds columns by name in any order, and accepts the Socrata API field names', () => {
    const layout = locateExportColumns([
      'borough', 'unique_key', 'created_date', 'closed_date', 'agency', 'complaint_type', 'descriptor', 'location_type',
      'incident_zip', 'status', 'community_board', 'open_data_channel_type', 'latitude', 'longitude', 'council_district',
    ]);
    expect(layout.columns.borough).toBe(0);
    expect(layout.columns.uniqueKey).toBe(1);
    expect(layout.columns.councilDistrict).toBe(14);
    expect(layout.columns.location).toBe(-1);
    expect(layout.layout).toBe('extended');
  });
});

describe('rules as data', () => {
  it('every rule has a unique id, a kind and a description', () => {
    const ids = rule.CLEANING_RULES.map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const definition of rule.CLEANING_RULES) {
      expect(['filter', 'removal', 'transformation']).toContain(definition.kind);
      expect(definition.description.length).toBeGreaterThan(30);
    }
  });
});

/** Each rule's logic alone, by the rule's id (its entry in cleaning-rules.ts has the camelCase name). */
describe('each cleaning rule by its id', () => {
  const LAYOUT = locateExportColumns(STANDARD_EXPORT_COLUMNS);
  /** A record of the 41-column layout with the given fields; the others are empty. */
  const record = (fields: Partial<Record<(typeof STANDARD_EXPORT_COLUMNS)[number], string>>): string[] =>
    STANDARD_EXPORT_COLUMNS.map((name) => fields[name] ?? '');
  const zeroCounts = (): rule.CleaningCounts => Object.fromEntries(rule.CLEANING_RULES.map((rule) => [rule.id, 0])) as rule.CleaningCounts;
  const row = (fields: Partial<ServiceRequest>): ServiceRequest => ({ ...base, id: 1, created_at: '2025-05-01T10:00:00', ...fields });

  it('lists the entries in the order they are applied, each under its own id', () => {
    expect(rule.CLEANING_RULES.map((rule) => rule.id)).toEqual([
      rule.malformedRecord, rule.agencyNotDot, rule.createdOutsidePeriod, rule.duplicateUniqueKey, rule.closedBeforeCreated, rule.repeatedSubmission,
      rule.freeTextDropped, rule.placeholderToNull, rule.canonicalSpelling, rule.boroughCode, rule.statusCode, rule.channelCode, rule.incidentZipText,
      rule.councilDistrictInteger, rule.coordinatesNumeric, rule.localTimestamps, rule.daysToClose,
    ].map((rule) => rule.id));
  });

  it('malformed_record: a wrong field count, a key that is not a whole number above 0, a bad Created Date, a Closed Date or coordinate in no form of an export', () => {
    const read = (fields: Parameters<typeof record>[0]) => rule.malformedRecord.read(record({ 'Unique Key': '7', 'Created Date': '05/01/2025 10:00:00 AM', ...fields }), LAYOUT);
    expect(read({})).toEqual({ ok: true, id: 7, createdAt: '2025-05-01T10:00:00', closedAt: null });
    expect(read({ 'Unique Key': '7.0', 'Closed Date': '5/2/25 0:00' })).toEqual({ ok: true, id: 7, createdAt: '2025-05-01T10:00:00', closedAt: '2025-05-02T00:00:00' });
    expect(read({ 'Closed Date': '02/30/2025 10:00:00 AM', Latitude: 'N/A', Longitude: '' })).toMatchObject({ ok: true, closedAt: null });
    expect(rule.malformedRecord.read(['7', '05/01/2025 10:00:00 AM'], LAYOUT)).toEqual({ ok: false, column: '(record)', value: '2 fields (the header has 41)' });
    expect(read({ 'Unique Key': 'ABC' })).toEqual({ ok: false, column: 'Unique Key', value: 'ABC' });
    expect(read({ 'Unique Key': '0' })).toEqual({ ok: false, column: 'Unique Key', value: '0' });
    expect(read({ 'Unique Key': '6.1E+07' })).toEqual({ ok: false, column: 'Unique Key', value: '6.1E+07' });
    expect(read({ 'Created Date': 'not a date' })).toEqual({ ok: false, column: 'Created Date', value: 'not a date' });
    expect(read({ 'Created Date': '02/30/2025 10:00:00 AM' })).toEqual({ ok: false, column: 'Created Date', value: '02/30/2025 10:00:00 AM' });
    expect(read({ 'Closed Date': '2025-05-02T10:00:00Z' })).toEqual({ ok: false, column: 'Closed Date', value: '2025-05-02T10:00:00Z' });
    expect(read({ Latitude: 'N40.7' })).toEqual({ ok: false, column: 'Latitude', value: 'N40.7' });
    expect(read({ Latitude: '40,7', Longitude: '-73,9' })).toMatchObject({ ok: true }); // a European spreadsheet's decimal comma
    expect(read({ Longitude: 'west' })).toEqual({ ok: false, column: 'Longitude', value: 'west' });
  });

  it('agency_not_dot: keeps DOT in any case', () => {
    expect(rule.agencyNotDot.removes(record({ Agency: ' dot ' }), LAYOUT)).toBe(false);
    expect(rule.agencyNotDot.removes(record({ Agency: 'NYPD' }), LAYOUT)).toBe(true);
  });

  it('created_outside_period: keeps 2025-01-01T00:00:00 to 2025-06-30T23:59:59', () => {
    expect(rule.createdOutsidePeriod.removes('2025-01-01T00:00:00')).toBe(false);
    expect(rule.createdOutsidePeriod.removes('2025-06-30T23:59:59')).toBe(false);
    expect(rule.createdOutsidePeriod.removes('2024-12-31T23:59:59')).toBe(true);
    expect(rule.createdOutsidePeriod.removes('2025-07-01T00:00:00')).toBe(true);
  });

  it('duplicate_unique_key: the first record of a key is kept', () => {
    const seen = new Set<number>();
    expect(rule.duplicateUniqueKey.removes(5, seen)).toBe(false);
    expect(rule.duplicateUniqueKey.removes(5, seen)).toBe(true);
    expect(rule.duplicateUniqueKey.removes(6, seen)).toBe(false);
  });

  it('closed_before_created: only a Closed Date earlier than the Created Date', () => {
    expect(rule.closedBeforeCreated.removes('2025-05-01T10:00:00', '2025-05-01T09:59:59')).toBe(true);
    expect(rule.closedBeforeCreated.removes('2025-05-01T10:00:00', '2025-05-01T10:00:00')).toBe(false);
    expect(rule.closedBeforeCreated.removes('2025-05-01T10:00:00', null)).toBe(false);
  });

  it('repeated_submission: the same complaint at the same place within 60 minutes', () => {
    const at = (id: number, created: string, place: Partial<ServiceRequest>, address = '') => {
      const r = row({ id, created_at: created, ...place });
      return { row: r, createdMs: Date.parse(`${created}Z`), repeatKey: rule.repeatedSubmission.keyOf(r, address, '', '') };
    };
    const point = { latitude: 40.6712345, longitude: -73.9812345 };
    const candidates = [
      at(1, '2025-05-01T10:00:00', point),
      at(2, '2025-05-01T11:00:00', { ...point, descriptor: 'POTHOLE' }), // 60 minutes later: a repeat
      at(3, '2025-05-01T12:00:01', point), // 60 minutes and 1 second after the kept 1
      at(4, '2025-05-01T10:00:00', { complaint_type: 'Street Light Condition', ...point }),
      at(5, '2025-05-01T10:00:00', {}), // no place: never a repeat
      at(6, '2025-05-01T10:00:00', {}),
      at(7, '2025-05-01T10:00:00', {}, '10 MAIN STREET'),
      at(8, '2025-05-01T10:30:00', {}, ' 10  main street'),
    ];
    const counts = zeroCounts();
    expect(rule.repeatedSubmission.keepFirstSubmissions(candidates, counts).map((r) => r.id)).toEqual([1, 3, 4, 5, 6, 7]);
    expect(counts.repeated_submission).toBe(2);
  });

  it('free_text_dropped: counts rows that had an address or an intersection', () => {
    const counts = zeroCounts();
    rule.freeTextDropped.count('10 MAIN STREET', '', counts);
    rule.freeTextDropped.count('', 'BROADWAY', counts);
    rule.freeTextDropped.count('N/A', '', counts);
    expect(counts.free_text_dropped).toBe(2);
  });

  it('placeholder_to_null: placeholders become null, non-empty ones counted', () => {
    const counts = zeroCounts();
    expect(rule.placeholderToNull.text('  Street   Light ', counts)).toBe('Street Light');
    expect(rule.placeholderToNull.text('', counts)).toBeNull();
    expect(rule.placeholderToNull.text(' n/a ', counts)).toBeNull();
    expect(rule.placeholderToNull.communityBoard('04 Bronx', counts)).toBe('04 BRONX');
    expect(rule.placeholderToNull.communityBoard('Unspecified MANHATTAN', counts)).toBeNull();
    expect(rule.placeholderToNull.communityBoard('0 Unspecified', counts)).toBeNull();
    expect(counts.placeholder_to_null).toBe(3);
  });

  it('canonical_spelling: the most frequent spelling of each case-folded value', () => {
    const candidates = [row({ descriptor: 'Pothole' }), row({ descriptor: 'Pothole' }), row({ descriptor: 'POTHOLE' }), row({ descriptor: 'Cave-in' })].map((r) => ({ row: r }));
    const counts = zeroCounts();
    rule.canonicalSpelling.apply(candidates, counts);
    expect(candidates.map((c) => c.row.descriptor)).toEqual(['Pothole', 'Pothole', 'Pothole', 'Cave-in']);
    expect(counts.canonical_spelling).toBe(1);
  });

  it('borough_code: borough names in any case become codes, others null', () => {
    const counts = zeroCounts();
    expect(rule.boroughCode.apply('Staten Island', counts)).toBe('staten_island');
    expect(rule.boroughCode.apply('BRONX', counts)).toBe('bronx');
    expect(rule.boroughCode.apply('Unspecified', counts)).toBeNull();
    expect(rule.boroughCode.apply('NEW JERSEY', counts)).toBeNull();
    expect(counts).toMatchObject({ borough_code: 1, placeholder_to_null: 1 });
  });

  it('status_code: codes in any case; an unrecognised status inferred from the close time', () => {
    const counts = zeroCounts();
    expect(rule.statusCode.apply('IN PROGRESS', null, counts)).toBe('in_progress');
    expect(rule.statusCode.apply('Started', null, counts)).toBe('in_progress');
    expect(rule.statusCode.apply('Unspecified', '2025-05-02T10:00:00', counts)).toBe('closed');
    expect(rule.statusCode.apply('', null, counts)).toBe('open');
    expect(counts).toMatchObject({ status_code: 2, placeholder_to_null: 0 });
  });

  it('channel_code: codes in any case, UNKNOWN null, anything else other', () => {
    const counts = zeroCounts();
    expect(rule.channelCode.apply('Mobile', counts)).toBe('mobile');
    expect(rule.channelCode.apply('UNKNOWN', counts)).toBeNull();
    expect(rule.channelCode.apply('FAX', counts)).toBe('other');
    expect(counts).toMatchObject({ channel_code: 1, placeholder_to_null: 1 });
  });

  it('incident_zip_text: 5 digits kept, ZIP+4 shortened, anything else null', () => {
    const counts = zeroCounts();
    expect(rule.incidentZipText.apply('01234', counts)).toBe('01234');
    expect(rule.incidentZipText.apply('10314-1234', counts)).toBe('10314');
    expect(rule.incidentZipText.apply('00000', counts)).toBeNull();
    expect(rule.incidentZipText.apply('123', counts)).toBeNull();
    expect(rule.incidentZipText.apply('N/A', counts)).toBeNull();
    expect(counts).toMatchObject({ incident_zip_text: 3, placeholder_to_null: 1 });
    // pandas writes a zip column with an empty cell as floats: 10033.0 is read as 10033, not counted as a change.
    expect(rule.incidentZipText.apply('10033.0', counts)).toBe('10033');
    expect(counts.incident_zip_text).toBe(3);
  });

  it('council_district_integer: 1 to 51, otherwise null; no column gives null', () => {
    const counts = zeroCounts();
    expect(rule.councilDistrictInteger.apply('39', counts)).toBe(39);
    expect(rule.councilDistrictInteger.apply('7.0', counts)).toBe(7);
    expect(rule.councilDistrictInteger.apply('0', counts)).toBeNull();
    expect(rule.councilDistrictInteger.apply('52', counts)).toBeNull();
    expect(rule.councilDistrictInteger.apply(undefined, counts)).toBeNull();
    expect(counts.council_district_integer).toBe(2);
  });

  it('coordinates_numeric: numbers, read from the Location text when both are empty; 0 makes both null', () => {
    const counts = zeroCounts();
    expect(rule.coordinatesNumeric.apply(record({ Latitude: '40.7', Longitude: '-73.9' }), LAYOUT, counts)).toEqual([40.7, -73.9]);
    expect(rule.coordinatesNumeric.apply(record({ Location: '(40.6, -73.8)' }), LAYOUT, counts)).toEqual([40.6, -73.8]);
    expect(rule.coordinatesNumeric.apply(record({}), LAYOUT, counts)).toEqual([null, null]);
    expect(rule.coordinatesNumeric.apply(record({ Latitude: '0', Longitude: '0' }), LAYOUT, counts)).toEqual([null, null]);
    expect(rule.coordinatesNumeric.apply(record({ Latitude: '40.7' }), LAYOUT, counts)).toEqual([null, null]);
    expect(counts.coordinates_numeric).toBe(2);
  });

  it('coordinates_numeric: every form of Location an export writes', () => {
    const counts = zeroCounts();
    const at = (location: string) => rule.coordinatesNumeric.apply(record({ Location: location }), LAYOUT, counts);
    expect(at('\n,  \n(40.748188757281845, -73.86453746090947)')).toEqual([40.748188757281845, -73.86453746090947]); // the API's CSV
    expect(at('POINT (-73.9277 40.5851)')).toEqual([40.5851, -73.9277]); // well-known text, longitude first
    expect(at(`{'latitude': '40.847', 'longitude': '-73.935', 'human_address': '{"address": ""}'}`)).toEqual([40.847, -73.935]); // pandas' dict
    expect(at('{"latitude":"40.847","longitude":"-73.935","human_address":"{}"}')).toEqual([40.847, -73.935]); // the API's JSON
    expect(at('{"type":"Point","coordinates":[-73.935,40.847]}')).toEqual([40.847, -73.935]); // GeoJSON
    expect(at('123 MAIN STREET')).toEqual([null, null]);
    expect(rule.coordinatesNumeric.apply(record({ Latitude: '40,7', Longitude: '-73,9' }), LAYOUT, counts)).toEqual([40.7, -73.9]);
    expect(counts.coordinates_numeric).toBe(0);
  });

  it('local_timestamps: export spellings as local time; a bad Closed Date counted', () => {
    const counts = zeroCounts();
    expect(rule.localTimestamps.parse('05/01/2025 01:30:00 PM')).toBe('2025-05-01T13:30:00');
    rule.localTimestamps.countClosedDate('not a date', null, counts);
    rule.localTimestamps.countClosedDate('N/A', null, counts);
    rule.localTimestamps.countClosedDate('', null, counts);
    expect(counts).toMatchObject({ local_timestamps: 1, placeholder_to_null: 1 });
  });

  it('days_to_close: real elapsed days, 2 decimals', () => {
    const counts = zeroCounts();
    const created = Date.UTC(2025, 2, 8, 17); // 2025-03-08T12:00:00 EST
    expect(rule.daysToClose.apply(created, '2025-03-09T12:00:00', counts)).toBe(0.96);
    expect(rule.daysToClose.apply(created, null, counts)).toBeNull();
    expect(counts.days_to_close).toBe(1);
  });
});

describe('timestamps', () => {
  it('reads the export spellings as local time', () => {
    expect(parseExportTimestamp('05/01/2022 12:04:47 AM')).toBe('2022-05-01T00:04:47');
    expect(parseExportTimestamp('05/01/2022 12:04:47 PM')).toBe('2022-05-01T12:04:47');
    expect(parseExportTimestamp('12/31/2024 11:59:59 PM')).toBe('2024-12-31T23:59:59');
    expect(parseExportTimestamp('2025-03-09T01:30:00.000')).toBe('2025-03-09T01:30:00');
    expect(parseExportTimestamp('02/30/2025 10:00:00 AM')).toBeNull();
    expect(parseExportTimestamp('13/01/2025 10:00:00 AM')).toBeNull();
    expect(parseExportTimestamp('')).toBeNull();
  });

  it('reads the forms a spreadsheet or pandas writes, and no time with a zone', () => {
    expect(readExportTimestamp('10/21/18 0:00')).toBe('2018-10-21T00:00:00');
    expect(readExportTimestamp('3/9/2025 13:05')).toBe('2025-03-09T13:05:00');
    expect(readExportTimestamp('3/9/25 1:05 PM')).toBe('2025-03-09T13:05:00');
    expect(readExportTimestamp('2024-05-27 02:08:51')).toBe('2024-05-27T02:08:51');
    expect(readExportTimestamp('2024-05-27')).toBe('2024-05-27T00:00:00');
    expect(readExportTimestamp('05/27/2024')).toBe('2024-05-27T00:00:00');
    expect(readExportTimestamp('2024/05/27 02:08')).toBe('2024-05-27T02:08:00');
    // A form of the export naming no time: null; no form at all: undefined.
    expect(readExportTimestamp('02/30/2025 10:00:00 AM')).toBeNull();
    expect(readExportTimestamp('3/9/25 0:05 PM')).toBeNull();
    expect(readExportTimestamp('2024-05-27T02:08:51Z')).toBeUndefined();
    expect(readExportTimestamp('2024-05-27T02:08:51+00:00')).toBeUndefined();
    expect(readExportTimestamp('1716775731000')).toBeUndefined();
    expect(readExportTimestamp('not a date')).toBeUndefined();
    expect(readExportTimestamp('  ')).toBeUndefined();
  });

  it('counts real elapsed time across the daylight-saving changes of New York', () => {
    expect(elapsedDaysBetween('2025-03-08T12:00:00', '2025-03-09T12:00:00')).toBe(0.96); // 23 hours
    expect(elapsedDaysBetween('2025-11-01T12:00:00', '2025-11-02T12:00:00')).toBe(1.04); // 25 hours
    expect(elapsedDaysBetween('2025-01-01T00:00:00', '2025-01-11T00:00:00')).toBe(10);
  });

  it('turns the wall times of the synthetic export into instants, and knows the hour skipped in spring', () => {
    expect(cityWallTimeToEpochMs(Date.UTC(2025, 0, 15, 8))).toBe(Date.UTC(2025, 0, 15, 13)); // EST
    expect(cityWallTimeToEpochMs(Date.UTC(2025, 2, 9, 1, 59, 59))).toBe(Date.UTC(2025, 2, 9, 6, 59, 59));
    expect(cityWallTimeToEpochMs(Date.UTC(2025, 2, 9, 3))).toBe(Date.UTC(2025, 2, 9, 7)); // EDT
    expect(cityWallTimeToEpochMs(Date.UTC(2025, 6, 1, 6))).toBe(Date.UTC(2025, 6, 1, 10));
    expect(cityWallTimeExists(Date.UTC(2025, 2, 9, 1, 59, 59))).toBe(true);
    expect(cityWallTimeExists(Date.UTC(2025, 2, 9, 2, 30))).toBe(false);
    expect(cityWallTimeExists(Date.UTC(2025, 2, 9, 3))).toBe(true);
    expect(cityWallTimeExists(Date.UTC(2025, 10, 2, 1, 30))).toBe(true); // occurs twice, exists
  });
});
