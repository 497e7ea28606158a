import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { buildSnapshot, prepareSnapshot, type PreparedSnapshot, type SnapshotInput } from '../../../src/ingest/nyc311/build-snapshot.js';
import { writeSqliteSnapshot } from '../../../src/ingest/nyc311/sqlite-snapshot-writer.js';

/**
 * An export prepared in memory and stored as a SQLite snapshot in a folder of its own, for the tests
 * that check the snapshot against what was prepared (in SQLite, then the same in PostgreSQL).
 */
export interface ExportSnapshot {
  directory: string;
  prepared: PreparedSnapshot;
  /** The SQLite snapshot, read-only. */
  db: Database.Database;
  remove(): void;
}

/**
 * `stored`: 'built' streams the export through the snapshot command's build; 'written' writes the
 * prepared content with the SQLite writer.
 */
export async function exportSnapshot(input: SnapshotInput, stored: 'built' | 'written'): Promise<ExportSnapshot> {
  const directory = mkdtempSync(join(tmpdir(), 'export-snapshot-'));
  const path = join(directory, 'snapshot.sqlite');
  const prepared = await prepareSnapshot(input);
  if (stored === 'built') await buildSnapshot(input, { kind: 'sqlite', path });
  else writeSqliteSnapshot(path, prepared.content);
  const db = new Database(path, { readonly: true });
  return {
    directory,
    prepared,
    db,
    remove() {
      db.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

/** The indexes of the service_requests table on both backends: the keyset pages' and each filter's. */
export const SERVICE_REQUEST_INDEXES = [
  'service_requests_created_at_id',
  'service_requests_borough_created_at_id',
  'service_requests_complaint_type_created_at_id',
  'service_requests_status_created_at_id',
  'service_requests_channel_created_at_id',
  'service_requests_council_district_created_at_id',
  'service_requests_incident_zip_created_at_id',
  'service_requests_descriptor_created_at_id',
];
