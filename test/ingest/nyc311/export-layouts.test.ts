/**
 * The same requests in every layout an export comes in (test/fixtures/nyc311/layouts/, see its
 * README): the portal's CSV of 2025 and of 2013 (52 columns), the API's CSV, the API's JSON, JSON
 * Lines, a file re-written by pandas, and a spreadsheet's re-save as CSV and as "Unicode text"
 * (UTF-16, tabs). Each is found from its content and gives the same served rows and the same counts
 * (the 2013 generation lacks the channel and the council district, which are null). The synthetic
 * export written in its three layouts gives one snapshot.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CleanedExport } from '../../../src/ingest/nyc311/clean-export.js';
import { readFileTextChunks } from '../../../src/ingest/nyc311/csv-reader.js';
import { cleanExportText } from '../../../src/ingest/nyc311/parallel-staging.js';
import { generateSyntheticHistory } from '../../../src/ingest/nyc311/synthetic-export.js';
import type { ServiceRequest } from '../../../src/snapshot/service-request.js';
import { FIXTURES } from './fixture-paths.js';

const LAYOUTS = join(FIXTURES, 'layouts');
const clean = (file: string): Promise<CleanedExport> => cleanExportText(readFileTextChunks(join(LAYOUTS, file)), { applyFilters: false });

const row = (fields: Partial<ServiceRequest> & Pick<ServiceRequest, 'id' | 'created_at'>): ServiceRequest => ({
  closed_at: null,
  status: 'closed',
  complaint_type: null,
  descriptor: null,
  location_type: null,
  borough: null,
  community_board: null,
  council_district: null,
  incident_zip: null,
  channel: null,
  latitude: null,
  longitude: null,
  days_to_close: null,
  ...fields,
});

/** The six requests of the layouts' fixtures, served. */
const EXPECTED: ServiceRequest[] = [
  row({ id: 3001, created_at: '2025-01-06T08:15:00', closed_at: '2025-01-08T09:00:00', complaint_type: 'Street Condition', descriptor: 'Pothole', location_type: 'Street', borough: 'manhattan', community_board: '12 MANHATTAN', council_district: 10, incident_zip: '10033', channel: 'phone', latitude: 40.8473568205, longitude: -73.9351713775, days_to_close: 2.03 }),
  row({ id: 3002, created_at: '2025-02-14T23:30:00', status: 'in_progress', complaint_type: 'Street Light Condition', descriptor: 'Street Light Out', borough: 'queens', community_board: '04 QUEENS', council_district: 25, incident_zip: '11373', channel: 'mobile' }),
  // 01:45 EST to 03:15 EDT on the day the clocks go forward: 30 minutes.
  row({ id: 3003, created_at: '2025-03-09T01:45:00', closed_at: '2025-03-09T03:15:00', complaint_type: 'Traffic Signal Condition', descriptor: 'Controller', borough: 'brooklyn', channel: 'online', latitude: 40.65, longitude: -73.95, days_to_close: 0.02 }),
  row({ id: 3004, created_at: '2025-04-01T22:00:00', closed_at: '2025-04-02T01:00:00', complaint_type: 'Noise - Residential', descriptor: 'Loud Music/Party', location_type: 'Residential Building/House', borough: 'brooklyn', community_board: '06 BROOKLYN', council_district: 39, incident_zip: '11215', channel: 'online', latitude: 40.6712345678, longitude: -73.9812345678, days_to_close: 0.13 }),
  row({ id: 3005, created_at: '2025-05-05T00:00:00', closed_at: '2025-05-20T12:00:00', complaint_type: 'Sidewalk Condition', descriptor: 'Broken Sidewalk', location_type: 'Sidewalk', borough: 'staten_island', community_board: '01 STATEN ISLAND', council_district: 50, incident_zip: '10314', latitude: 40.58, longitude: -74.15, days_to_close: 15.5 }),
  row({ id: 3006, created_at: '2025-06-30T23:59:00', status: 'open', complaint_type: 'Highway Condition', descriptor: 'Pothole - Highway', location_type: 'Highway', channel: 'phone' }),
];

describe('the same requests in every layout of an export', () => {
  it.each([
    ['portal-2025.csv', 'portal_csv', ',', 43],
    ['api.csv', 'api_csv', ',', 43],
    ['api.json', 'api_json', ',', 25],
    ['api.jsonl', 'json_lines', ',', 25],
    ['pandas.csv', 'api_csv', ',', 44],
    ['spreadsheet.csv', 'portal_csv', ',', 43],
    ['spreadsheet-unicode-text.txt', 'portal_csv', '\t', 43],
  ] as const)('%s: read as %s, every request served as in the file', async (file, format, delimiter, columns) => {
    const result = await clean(file);
    expect(result.report.format).toEqual({ kind: format, delimiter });
    expect(result.report.columnCount).toBe(columns);
    expect(result.report.missingColumns).toEqual([]);
    expect(result.rawRowsRead).toBe(6);
    expect(result.rows).toEqual(EXPECTED);
  });

  it('every layout gives the counts of the portal CSV, rule by rule', async () => {
    const portal = (await clean('portal-2025.csv')).rules;
    for (const file of ['api.csv', 'api.json', 'api.jsonl', 'pandas.csv', 'spreadsheet.csv', 'spreadsheet-unicode-text.txt']) {
      expect((await clean(file)).rules, file).toEqual(portal);
    }
  });

  it('the 52-column generation of 2013 (no channel, no council district): those fields null, named as missing, the rest alike', async () => {
    const result = await clean('portal-2013-52-columns.csv');
    expect(result.report.format.kind).toBe('portal_csv');
    expect(result.report.columnCount).toBe(52);
    expect(result.report.missingColumns).toEqual(['channel', 'councilDistrict']);
    expect(result.rows).toEqual(EXPECTED.map((r) => ({ ...r, channel: null, council_district: null })));
  });
});

describe('the synthetic export in its three layouts', () => {
  it('a history written as the portal CSV, the API CSV and the API JSON gives the same rows and counts', async () => {
    const history = { rows: 4000, fromYear: 2023, toYear: 2025, seed: 48 };
    const cleaned = async (layout: 'portal-csv' | 'api-csv' | 'api-json'): Promise<unknown> => {
      const result = await cleanExportText(generateSyntheticHistory({ ...history, layout }).chunks, { applyFilters: false });
      return { rows: result.rows, rules: result.rules, rawRowsRead: result.rawRowsRead, missing: result.report.missingColumns };
    };
    const portal = await cleaned('portal-csv');
    expect(await cleaned('api-csv')).toEqual(portal);
    expect(await cleaned('api-json')).toEqual(portal);
  }, 60_000);

  it('is the same records in each layout: the JSON is an array of objects with every value a string, empty fields left out', () => {
    const json = [...generateSyntheticHistory({ rows: 50, fromYear: 2025, toYear: 2025, layout: 'api-json' }).chunks].join('');
    const records = JSON.parse(json) as Record<string, unknown>[];
    const csv = [...generateSyntheticHistory({ rows: 50, fromYear: 2025, toYear: 2025, layout: 'api-csv' }).chunks].join('');
    expect(csv.startsWith('"unique_key","created_date","closed_date",')).toBe(true);
    expect(records.length).toBe(csv.match(/^"\d+",/gm)?.length);
    for (const record of records) {
      expect(typeof record.unique_key).toBe('string');
      expect(record.created_date).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.000$/);
      expect(Object.values(record)).not.toContain('');
    }
  });
});
