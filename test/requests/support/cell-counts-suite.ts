import { describe, expect, it } from 'vitest';
import type { ServiceRequestRecord } from '../../../src/services/requests/store/service-request-store.js';
import { CELL_SIZES, gridCellsAcross } from '../../../src/snapshot/index.js';
import { CELLS_MAXIMUM } from '../../../src/services/requests/schemas.js';
import { expectError } from '../../support/http.js';
import type { Backend } from './fixture-database.js';
import { fixtureDuringSuite } from './fixture-database.js';
import { json, testAppDuringSuite } from './requests-app.js';

/**
 * GET /v1/stats/cells on a backend, checked against the fixture's rows: each cell's count and bounds,
 * the total, the filters, and each rule of the parameters (the cap on the cells a box spans, at its
 * boundary).
 */
interface CellAnswer {
  cell: string;
  cells: { bounds: [number, number, number, number]; count: number }[];
  total: number;
}

interface Box {
  minLongitude: number;
  minLatitude: number;
  maxLongitude: number;
  maxLatitude: number;
}

const NEW_YORK: Box = { minLongitude: -74.26, minLatitude: 40.49, maxLongitude: -73.69, maxLatitude: 40.92 };

const boxText = (box: Box): string => [box.minLongitude, box.minLatitude, box.maxLongitude, box.maxLatitude].join(',');

/** The cells of the rows inside the box (the grid's arithmetic as the snapshot's column computes it), by cell number. */
function expectedCells(rows: readonly ServiceRequestRecord[], box: Box, size: (typeof CELL_SIZES)[number]): Map<string, number> {
  const multiple = gridCellsAcross(size);
  const counts = new Map<string, number>();
  for (const row of rows) {
    const { latitude, longitude } = row;
    if (latitude === null || longitude === null) continue;
    if (longitude < box.minLongitude || longitude > box.maxLongitude || latitude < box.minLatitude || latitude > box.maxLatitude) continue;
    const key = `${Math.floor(Math.trunc((latitude + 90.0005) * 100) / multiple)}:${Math.floor(Math.trunc((longitude + 180.0005) * 100) / multiple)}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

/** The answer's cells keyed as expectedCells, each row of the box checked to lie in the bounds of its cell. */
function answerCells(answer: CellAnswer, rows: readonly ServiceRequestRecord[], box: Box): Map<string, number> {
  const size = Number(answer.cell);
  const found = new Map<string, number>();
  for (const { bounds, count } of answer.cells) {
    const [west, south, east, north] = bounds;
    expect(east - west).toBeCloseTo(size, 9);
    expect(north - south).toBeCloseTo(size, 9);
    const inside = rows.filter(
      (row) =>
        row.latitude !== null &&
        row.longitude !== null &&
        row.longitude >= Math.max(west, box.minLongitude) &&
        row.longitude < east &&
        row.longitude <= box.maxLongitude &&
        row.latitude >= Math.max(south, box.minLatitude) &&
        row.latitude < north &&
        row.latitude <= box.maxLatitude,
    );
    expect(inside.length, `rows inside ${bounds.join(',')}`).toBe(count);
    found.set(`${Math.round((south + 90.0005) / size)}:${Math.round((west + 180.0005) / size)}`, count);
  }
  return found;
}

/**
 * The suite on `backend`, its cells counted by a scan of the row columns, and again without them
 * (ROW_COLUMNS_MAX_MB=0: a walk worker's SQL on SQLite, the database's on PostgreSQL).
 */
export function describeCellCounts(backend: Backend): void {
  for (const [how, env] of [
    ['row columns', {}],
    ['SQL', { ROW_COLUMNS_MAX_MB: '0' }],
  ] as const) describeCellCountsBy(backend, how, env);
}

function describeCellCountsBy(backend: Backend, how: string, env: Record<string, string>): void {
  describe(`GET /v1/stats/cells (${backend}, ${how})`, () => {
    const fixture = fixtureDuringSuite(backend);
    const service = testAppDuringSuite(fixture, env);
    const served = {
      get rows() {
        return fixture.rows;
      },
      service: {
        get: (path: string, headers?: Record<string, string>) => service.get(path, headers),
      },
    };

    async function cells(query: string): Promise<CellAnswer> {
      const response = await served.service.get(`/v1/stats/cells?${query}`);
      expect(response.statusCode, response.body).toBe(200);
      return json<CellAnswer>(response);
    }

    it('counts the requests of the box per cell of each size: non-empty cells only, their bounds, the total', async () => {
      const located = served.rows.filter((row) => row.latitude !== null);
      for (const size of CELL_SIZES) {
        const answer = await cells(`bbox=${boxText(NEW_YORK)}&cell=${size}`);
        expect(answer.cell).toBe(size);
        expect(answer.cells.every((cell) => cell.count > 0)).toBe(true);
        expect(answerCells(answer, served.rows, NEW_YORK)).toEqual(expectedCells(served.rows, NEW_YORK, size));
        expect(answer.total).toBe(located.length);
        // South to north, then west to east.
        const order = answer.cells.map(({ bounds }) => [bounds[1], bounds[0]] as const);
        expect(order).toEqual([...order].sort((a, b) => a[0] - b[0] || a[1] - b[1]));
      }
    });

    it('a box that cuts cells counts their requests inside the box only; the total is the count of the box', async () => {
      const box: Box = { minLongitude: -74, minLatitude: 40.6, maxLongitude: -73.9, maxLatitude: 40.75 };
      const answer = await cells(`bbox=${boxText(box)}&cell=0.05`);
      expect(answerCells(answer, served.rows, box)).toEqual(expectedCells(served.rows, box, '0.05'));
      const count = json<{ count: number }>(await served.service.get(`/v1/service-requests/count?bbox=${boxText(box)}`)).count;
      expect(answer.total).toBe(count);
      expect(count).toBeGreaterThan(0);
    });

    it('takes every filter of the list, the operators and q included', async () => {
      const queries = [
        'borough=queens',
        'borough=brooklyn&borough=bronx&status=closed',
        'created_from=2025-01-10&created_to=2025-01-20',
        'channel=none',
        'complaint_type=Street%20Condition&created_from=2025-01-05',
        'q=POT',
        'not_borough=queens',
        'closed=true&days_to_close_max=3',
        'near=40.7,-73.95&radius_m=5000',
      ];
      for (const query of queries) {
        const answer = await cells(`bbox=${boxText(NEW_YORK)}&cell=0.01&${query}`);
        const count = json<{ count: number }>(await served.service.get(`/v1/service-requests/count?bbox=${boxText(NEW_YORK)}&${query}`)).count;
        expect(answer.total, query).toBe(count);
        const matching = new Set(
          json<{ items: ServiceRequestRecord[] }>(await served.service.get(`/v1/service-requests?bbox=${boxText(NEW_YORK)}&limit=1000&${query}`)).items.map((row) => row.id),
        );
        const rows = served.rows.filter((row) => matching.has(row.id));
        expect(answerCells(answer, rows, NEW_YORK), query).toEqual(expectedCells(rows, NEW_YORK, '0.01'));
      }
    });

    it('a box without requests: no cell, a total of 0', async () => {
      expect(await cells('bbox=-10,10,-9.9,10.1&cell=0.01')).toEqual({ cell: '0.01', cells: [], total: 0 });
    });

    it(`at most ${CELLS_MAXIMUM} cells spanned: 100 by 100 answers, 101 by 100 is refused (422 invalid_request, bbox and cell)`, async () => {
      // Grid rows 13000 to 13099 and columns 10600 to 10699: 100 by 100 cells of 0.01.
      const atCap = await served.service.get('/v1/stats/cells?bbox=-74,40,-73.01,40.99&cell=0.01');
      expect(atCap.statusCode, atCap.body).toBe(200);
      const over = await served.service.get('/v1/stats/cells?bbox=-74,40,-73,40.99&cell=0.01');
      expectError(over, 422, 'invalid_request', ['bbox', 'cell']);
      expect(json<{ error: { message: string } }>(over).error.message).toMatch(/spans 10,100 cells of 0.01 degree \(101 by 100\), more than 10,000/);
      // The same box in larger cells answers.
      expect((await served.service.get('/v1/stats/cells?bbox=-74,40,-73,40.99&cell=0.02')).statusCode).toBe(200);
      // The whole world: 361 by 181 cells of 1 degree.
      expectError(await served.service.get('/v1/stats/cells?bbox=-180,-90,180,90&cell=1'), 422, 'invalid_request', ['bbox', 'cell']);
    });

    it('refuses a missing or invalid bbox or cell, an unknown parameter, and a reversed date range', async () => {
      expectError(await served.service.get('/v1/stats/cells?cell=0.01'), 422, 'invalid_request', ['bbox']);
      expectError(await served.service.get(`/v1/stats/cells?bbox=${boxText(NEW_YORK)}`), 422, 'invalid_request', ['cell']);
      expectError(await served.service.get(`/v1/stats/cells?bbox=${boxText(NEW_YORK)}&cell=0.03`), 422, 'invalid_request', ['cell']);
      expectError(await served.service.get('/v1/stats/cells?bbox=-73,40,-74,41&cell=0.01'), 422, 'invalid_request', ['bbox']);
      expectError(await served.service.get(`/v1/stats/cells?bbox=${boxText(NEW_YORK)}&cell=0.01&zoom=3`), 422, 'invalid_request', ['zoom']);
      expectError(
        await served.service.get(`/v1/stats/cells?bbox=${boxText(NEW_YORK)}&cell=0.01&created_from=2025-01-10&created_to=2025-01-05`),
        422,
        'invalid_range',
        ['created_from', 'created_to'],
      );
    });

    it('an ETag of the snapshot: the same query again with If-None-Match answers 304', async () => {
      const first = await served.service.get(`/v1/stats/cells?bbox=${boxText(NEW_YORK)}&cell=0.1`);
      const etag = String(first.headers.etag);
      expect(etag).toMatch(/^"/);
      expect((await served.service.get(`/v1/stats/cells?bbox=${boxText(NEW_YORK)}&cell=0.1`, { 'if-none-match': etag })).statusCode).toBe(304);
    });
  });
}
