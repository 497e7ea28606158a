/**
 * Every real export of ../shared/data/nyc311/real (eleven files, 2011 to 2025, every layout NYC Open
 * Data has produced: its README) through the snapshot command's build into SQLite, with the filters
 * off: each is read whole (no record malformed, every record served or left out by a named rule),
 * in the layout it has, and every served row equals its source row field by field. The twins (the
 * same 1,000 requests as the API's CSV re-written by pandas and as the API's JSON) give the same
 * snapshot, table by table. PostgreSQL: real-exports.server.test.ts. Skipped, saying so, when the
 * folder is absent (SHARED_DATA_DIR).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { buildSnapshot, type BuildSnapshotResult } from '../../../src/ingest/nyc311/build-snapshot.js';
import { SERVICE_REQUEST_FIELDS, type ServiceRequest } from '../../../src/snapshot/service-request.js';
import { REAL_EXPORTS_DIR, TWINS, expectServedAsInFile, realExportFiles, sourceRecords } from './real-exports.js';

const files = realExportFiles();
const directory = mkdtempSync(join(tmpdir(), 'real-exports-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

/** The layout each file has (its README), found by the command from the content. */
function expectedFormat(file: string): string {
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

/** Each file built once in this file's run: the twins' check reads the snapshots the files' checks built. */
const builds = new Map<string, Promise<Built>>();
function build(file: string): Promise<Built> {
  const known = builds.get(file);
  if (known !== undefined) return known;
  const built = buildOnce(file);
  builds.set(file, built);
  return built;
}

async function buildOnce(file: string): Promise<Built> {
  const path = join(directory, `${file}.sqlite`);
  const result = await buildSnapshot({ kind: 'file', path: join(REAL_EXPORTS_DIR, file) }, { kind: 'sqlite', path }, { applyFilters: false });
  const db = new Database(path, { readonly: true });
  try {
    return { result, rows: db.prepare(`SELECT ${SERVICE_REQUEST_FIELDS.join(', ')} FROM service_requests ORDER BY created_at, id`).all() as ServiceRequest[], path };
  } finally {
    db.close();
  }
}

describe.skipIf(files.length === 0)('the real exports, into SQLite', () => {
  it('are eleven files, every layout of the README', () => {
    expect(files).toHaveLength(11);
    expect(new Set(files.map(expectedFormat))).toEqual(new Set(['api_csv', 'api_json', 'portal_csv']));
  });

  it.each(files)('%s: read whole in its layout, every served row as in the file', async (file) => {
    const { result, rows } = await build(file);
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
  }, 120_000); // a file spanning 2010 to 2024 has daily numbers for 5,000 days
});

describe.skipIf(!files.includes(TWINS[0]) || !files.includes(TWINS[1]))('the twins: the same 1,000 requests as the API CSV (through pandas) and as the API JSON', () => {
  it('give the same snapshot: every table alike, the metadata but for the file', async () => {
    const [csv, json] = await Promise.all(TWINS.map((file) => build(file)));
    const tables = (path: string): Record<string, unknown[]> => {
      const db = new Database(path, { readonly: true });
      try {
        const names = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name <> 'snapshot_meta' ORDER BY name").pluck().all() as string[]);
        return Object.fromEntries(names.map((name) => [name, db.prepare(`SELECT * FROM ${name} ORDER BY 1, 2`).raw(true).all()]));
      } finally {
        db.close();
      }
    };
    const csvTables = tables(csv!.path);
    expect(Object.keys(csvTables)).toEqual(expect.arrayContaining(['service_requests', 'daily_stats', 'complaint_type_counts', 'cleaning_rules']));
    expect(tables(json!.path)).toEqual(csvTables);
    expect(csv!.rows).toHaveLength(850);
    const sameMeta = ({ snapshot_id: _id, content_sha256: _content, built_at: _built, source: _source, ...rest }: BuildSnapshotResult['meta']): unknown => rest;
    expect(sameMeta(json!.result.meta)).toEqual(sameMeta(csv!.result.meta));
    expect(json!.result.report.notServed).toEqual(csv!.result.report.notServed);
  }, 120_000);
});
