import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { expect } from 'vitest';
import { buildSnapshot, type BuildSnapshotResult } from '../../../src/ingest/nyc311/build-snapshot.js';
import { SERVICE_REQUEST_FIELDS, type ServiceRequest } from '../../../src/snapshot/service-request.js';
import { REAL_EXPORTS_DIR, TWINS, expectServedAsInFile, sourceRecords } from './real-exports.js';

/**
 * The checks of real-exports*.test.ts: each real export built by the snapshot command into SQLite
 * (filters off), read whole in its layout, every served row as in the file. The fast tier reads one
 * file of each kind (SAMPLED: the twins of the API's CSV and JSON, a portal CSV of the present
 * layout, one of the 52-column generation); the machine tier the others.
 */
export const SAMPLED = [...TWINS, 'jun-yan__nyc311clean__data__test_sample2.csv', 'RJHCarto__Cegeg076__data__nyc__311_Service_Requests_from_2010_to_Present.csv'];

/** The layout each file has (its README), found by the command from the content. */
export function expectedFormat(file: string): string {
  if (file.endsWith('.json')) return 'api_json';
  return /AnthonyUPF|JasonLIN0226|kexinjiao|mohrum12/.test(file) ? 'api_csv' : 'portal_csv';
}

/** The read columns each file lacks: the channel before 2019 (52/53-column generations), the council district before the newest layout. */
function expectedMissing(file: string): string[] {
  if (/RJHCarto|nikeiubel/.test(file)) return ['Open Data Channel Type', 'Council District'];
  if (/JasonLIN0226/.test(file)) return [];
  return ['Council District'];
}

interface Built {
  result: BuildSnapshotResult;
  rows: ServiceRequest[];
  path: string;
}

/** A folder for the snapshots of a test file, removed by `remove`; `build` builds each file once into it. */
export function realExportBuilds(): { build: (file: string) => Promise<Built>; remove: () => void } {
  const directory = mkdtempSync(join(tmpdir(), 'real-exports-'));
  const builds = new Map<string, Promise<Built>>();
  const buildOnce = async (file: string): Promise<Built> => {
    const path = join(directory, `${file}.sqlite`);
    const result = await buildSnapshot({ kind: 'file', path: join(REAL_EXPORTS_DIR, file) }, { kind: 'sqlite', path }, { applyFilters: false });
    const db = new Database(path, { readonly: true });
    try {
      return { result, rows: db.prepare(`SELECT ${SERVICE_REQUEST_FIELDS.join(', ')} FROM service_requests ORDER BY created_at, id`).all() as ServiceRequest[], path };
    } finally {
      db.close();
    }
  };
  return {
    build(file) {
      const known = builds.get(file);
      if (known !== undefined) return known;
      const built = buildOnce(file);
      builds.set(file, built);
      return built;
    },
    remove: () => rmSync(directory, { recursive: true, force: true }),
  };
}

/** `file`, built: read whole in its layout (no record malformed, every record served or left out by a named rule), every served row as in the file. */
export function expectReadWhole(file: string, { result, rows }: Built): void {
  const { meta, report } = result;
  const removed = Object.fromEntries(meta.cleaning_rules.filter((r) => r.kind !== 'transformation').map((r) => [r.id, r.rows_removed]));
  expect(meta.raw_rows_read).toBe(sourceRecords(file).length);
  expect(removed.malformed_record).toBe(0);
  expect(rows.length + Object.values(removed).reduce((a, b) => a + b, 0)).toBe(meta.raw_rows_read);
  expect(rows.length).toBe(meta.row_count);
  expect(meta.row_count).toBeGreaterThan(meta.raw_rows_read * 0.6);
  expect(meta.source).toMatchObject({ kind: 'file', file_name: file, format: expectedFormat(file), missing_columns: expectedMissing(file) });
  // Each rule that left rows out shows up to three of them.
  for (const [reason, { rows: count, examples }] of Object.entries(report.notServed)) {
    expect(examples.length, reason).toBe(Math.min(3, count));
  }
  expect(expectServedAsInFile(file, rows)).toBe(meta.row_count);
}
