/**
 * Every real export of ../shared/data/nyc311/real (eleven files, 2011 to 2025, every layout NYC Open
 * Data has produced: its README) through the snapshot command's build into SQLite, with the filters
 * off: each is read whole (no record malformed, every record served or left out by a named rule),
 * in the layout it has, and every served row equals its source row field by field. The twins (the
 * same 1,000 requests as the API's CSV re-written by pandas and as the API's JSON) give the same
 * snapshot, table by table. Here one file of each kind (real-exports-checks.ts, SAMPLED); the others
 * in real-exports.machine.test.ts. PostgreSQL: real-exports.server.test.ts. Skipped, saying so, when
 * the folder is absent (SHARED_DATA_DIR).
 */
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import type { BuildSnapshotResult } from '../../../src/ingest/nyc311/build-snapshot.js';
import { TWINS, realExportFiles } from './real-exports.js';
import { SAMPLED, expectReadWhole, expectedFormat, realExportBuilds } from './real-exports-checks.js';

const files = realExportFiles();
const builds = realExportBuilds();
afterAll(() => builds.remove());

describe.skipIf(files.length === 0)('the real exports, into SQLite', () => {
  it('are eleven files, every layout of the README', () => {
    expect(files).toHaveLength(11);
    expect(new Set(files.map(expectedFormat))).toEqual(new Set(['api_csv', 'api_json', 'portal_csv']));
  });

  it.each(files.filter((file) => SAMPLED.includes(file)))('%s: read whole in its layout, every served row as in the file', async (file) => {
    expectReadWhole(file, await builds.build(file));
  }, 120_000); // a file spanning 2010 to 2024 has daily numbers for 5,000 days
});

describe.skipIf(!files.includes(TWINS[0]) || !files.includes(TWINS[1]))('the twins: the same 1,000 requests as the API CSV (through pandas) and as the API JSON', () => {
  it('give the same snapshot: every table alike, the metadata but for the file', async () => {
    const [csv, json] = await Promise.all(TWINS.map((file) => builds.build(file)));
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
