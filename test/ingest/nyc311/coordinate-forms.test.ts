/**
 * Two forms of a coordinate that real files hold, read through the whole staging of an export as
 * docs/service-requests-data.md ("The forms of the values") says: a decimal comma (`40,7128`, as a
 * spreadsheet of a European locale writes it, in a quoted field or in a `;`-separated file) is read as
 * the number; a Location that is a GeoJSON point (`{"type": "Point", "coordinates": [lon, lat]}`,
 * longitude first, an altitude allowed) gives the coordinates when Latitude and Longitude are empty.
 * A coordinate in no form (`40,71,28`) makes its record malformed, with the message naming the forms.
 */
import { describe, expect, it } from 'vitest';
import type { CleanedExport } from '../../../src/ingest/nyc311/clean-export.js';
import { UnreadableExportError } from '../../../src/ingest/nyc311/export-summary.js';
import { cleanExportText } from '../../../src/ingest/nyc311/parallel-staging.js';

const clean = (text: string): Promise<CleanedExport> => cleanExportText([text], { applyFilters: false });
const coordinates = (result: CleanedExport): [number, number | null, number | null][] => result.rows.map((row) => [row.id, row.latitude, row.longitude]);

const HEADER = ['Unique Key', 'Created Date', 'Closed Date', 'Agency', 'Status', 'Latitude', 'Longitude', 'Location'];
const DAY = '01/06/2025 08:15:00 AM';

describe('a coordinate with a decimal comma', () => {
  it('in a quoted field of a comma-separated file: read as the number', async () => {
    const result = await clean(`${HEADER.join(',')}\n1,${DAY},,DOT,Open,"40,7128","-74,0060",\n2,${DAY},,DOT,Open,40.75,-73.99,\n`);
    expect(result.report.format).toEqual({ kind: 'portal_csv', delimiter: ',' });
    expect(coordinates(result)).toEqual([
      [1, 40.7128, -74.006],
      [2, 40.75, -73.99],
    ]);
    expect(result.report.notServed.malformed_record.rows).toBe(0);
  });

  it('in a semicolon-separated file (a European spreadsheet): read as the number', async () => {
    const result = await clean(`${HEADER.join(';')}\n1;${DAY};;DOT;Open;40,7128;-74,0060;\n`);
    expect(result.report.format).toEqual({ kind: 'portal_csv', delimiter: ';' });
    expect(coordinates(result)).toEqual([[1, 40.7128, -74.006]]);
  });

  it('with two commas: malformed, counted under Latitude with the forms it is read in', async () => {
    const rows = Array.from({ length: 99 }, (_, i) => `${i + 2},${DAY},,DOT,Open,40.75,-73.99,`);
    const text = `${HEADER.join(',')}\n1,${DAY},,DOT,Open,"40,71,28","-74,0060",\n${rows.join('\n')}\n`;
    const result = await clean(text);
    expect(result.rows.map((row) => row.id)).not.toContain(1);
    expect(result.report.notServed.malformed_record.rows).toBe(1);
    expect(result.report.malformed.Latitude).toEqual({ rows: 1, examples: [{ line: 2, unique_key: '1', column: 'Latitude', value: '40,71,28' }] });
    const refusal = new UnreadableExportError(1, 1, result.report.malformed).message;
    expect(refusal).toContain('Latitude: 1 records, e.g. line 2, Unique Key 1: Latitude "40,71,28". Read as: a decimal number (40.7128; also 40,7128, as a spreadsheet of a European locale writes it), or empty.');
  });
});

describe('a Location that is a GeoJSON point', () => {
  it("in the API's JSON (an object, longitude first): gives the coordinates", async () => {
    const records = [
      { unique_key: '1', created_date: '2025-01-06T08:15:00.000', agency: 'DOT', status: 'Open', location: { type: 'Point', coordinates: [-73.935, 40.847] } },
      { unique_key: '2', created_date: '2025-01-06T08:15:00.000', agency: 'DOT', status: 'Open', location: { type: 'Point', coordinates: [-73.9, 40.7, 12.5] } },
      { unique_key: '3', created_date: '2025-01-06T08:15:00.000', agency: 'DOT', status: 'Open', location: { type: 'Feature', geometry: { type: 'Point', coordinates: [-74.1, 40.6] }, properties: {} } },
    ];
    const result = await clean(JSON.stringify(records));
    expect(result.report.format.kind).toBe('api_json');
    expect(coordinates(result)).toEqual([
      [1, 40.847, -73.935],
      [2, 40.7, -73.9],
      [3, 40.6, -74.1],
    ]);
  });

  it('as the text of a CSV field, Latitude and Longitude empty: gives the coordinates; beside them, they win', async () => {
    const point = '"{""type"": ""Point"", ""coordinates"": [-73.935, 40.847]}"';
    const result = await clean(`${HEADER.join(',')}\n1,${DAY},,DOT,Open,,,${point}\n2,${DAY},,DOT,Open,40.75,-73.99,${point}\n`);
    expect(coordinates(result)).toEqual([
      [1, 40.847, -73.935],
      [2, 40.75, -73.99],
    ]);
    expect(result.report.notServed.malformed_record.rows).toBe(0);
  });

  it('of another geometry (a line): no coordinates, not malformed', async () => {
    const line = '"{""type"": ""LineString"", ""coordinates"": [[-73.9, 40.7], [-73.8, 40.6]]}"';
    const result = await clean(`${HEADER.join(',')}\n1,${DAY},,DOT,Open,,,${line}\n`);
    expect(coordinates(result)).toEqual([[1, null, null]]);
    expect(result.report.notServed.malformed_record.rows).toBe(0);
  });
});
