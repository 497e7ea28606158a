/**
 * Writes a snapshot into a SQLite file with better-sqlite3: one transaction, prepared statements,
 * indexes built after the rows are in. The file is written under a temporary name beside the target
 * and renamed at the end, so a reader never sees a half-written snapshot.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, renameSync, rmSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import type { SnapshotContent, SnapshotStream, SnapshotSummaries, WriteProgress } from './snapshot-content.js';
import { snapshotMetaValues, streamOf } from './snapshot-content.js';
import { FILTER_VALUE_COUNTS_TABLE, FILTERED_COLUMNS, SNAPSHOT_META_COLUMNS, createIndexesSql, createTablesSql } from '../../snapshot/snapshot-schema.js';
import { SERVICE_REQUEST_FIELDS } from '../../snapshot/service-request.js';
import { SqliteSummaryWriter } from './sqlite-aggregate-summaries.js';
import { summarySourceOf } from '../../snapshot/aggregate-summaries.js';
import { SqliteRowColumnsWriter } from './sqlite-row-columns.js';
import { turnOffRollbackJournal } from './rollback-journal.js';

const PROGRESS_EVERY = 10_000;
/** Rows per INSERT statement (15 parameters each, well under SQLite's limit of 32,766). */
const INSERT_BATCH = 100;
/** Page cache of the written database, KiB: also the size of each sorted run of an index build. */
const SORT_CACHE_KIB = 8192;
/** At most this many helper threads sort for an index build (SQLite's build allows 8). */
const MAX_SORTER_THREADS = 4;

/** How the files this process writes before renaming one onto `path` begin (the rest is random). */
export const temporarySnapshotPrefix = (path: string): string => `${path}.tmp-${process.pid}-`;

/** Write the snapshot into a new SQLite database at `path` (replacing any file there, atomically). */
export function writeSqliteSnapshot(path: string, content: SnapshotContent | SnapshotStream, onProgress?: WriteProgress): void {
  mkdirSync(dirname(path), { recursive: true });
  const temporary = `${temporarySnapshotPrefix(path)}${randomBytes(4).toString('hex')}`;
  try {
    const db = new Database(temporary);
    try {
      turnOffRollbackJournal(db);
      db.pragma('synchronous = OFF');
      // The sorts of the index builds spill to temporary files past the page cache's size: in memory
      // they would hold every row's index entry, so the command's memory would grow with the rows.
      db.pragma('temp_store = FILE');
      // A small cache: the rows come in key order (each insert touches the rightmost pages), and the
      // index sorts merge many small sorted runs faster than they sort one run of the whole cache.
      db.pragma(`cache_size = -${SORT_CACHE_KIB}`);
      // Helper threads of the sorter: the index builds sort their runs on the other cores.
      db.pragma(`threads = ${Math.min(availableParallelism(), MAX_SORTER_THREADS)}`);
      writeSnapshotTables(db, content, onProgress);
      db.pragma('journal_mode = DELETE');
    } finally {
      db.close();
    }
    renameSync(temporary, path);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
}

/**
 * Create the tables and store the content, in one transaction, into an open (empty) database: the
 * rows as they come, the indexes, then the post-load step (storeSummaries).
 */
export function writeSnapshotTables(db: Database.Database, content: SnapshotContent | SnapshotStream, onProgress?: WriteProgress): void {
  const { rows, rowsExpected, summaries } = streamOf(content);
  const store = db.transaction(() => {
    for (const sql of createTablesSql('sqlite')) db.exec(sql);
    const columns = SERVICE_REQUEST_FIELDS.join(', ');
    const placeholders = `(${SERVICE_REQUEST_FIELDS.map(() => '?').join(', ')})`;
    const insertBatch = db.prepare(
      `INSERT INTO service_requests (${columns}) VALUES ${Array.from({ length: INSERT_BATCH }, () => placeholders).join(', ')}`,
    );
    const insertOne = db.prepare(`INSERT INTO service_requests (${columns}) VALUES ${placeholders}`);
    // The aggregate summaries are built as the rows pass (they come in created_at order).
    const summaryWriter = new SqliteSummaryWriter(db);
    // So are the row columns that the walk workers scan.
    const rowColumns = new SqliteRowColumnsWriter(db);
    const values: (string | number | null)[] = new Array<string | number | null>(INSERT_BATCH * SERVICE_REQUEST_FIELDS.length);
    let written = 0;
    let k = 0;
    for (const r of rows) {
      values[k++] = r.id;
      values[k++] = r.created_at;
      values[k++] = r.closed_at;
      values[k++] = r.status;
      values[k++] = r.complaint_type;
      values[k++] = r.descriptor;
      values[k++] = r.location_type;
      values[k++] = r.borough;
      values[k++] = r.community_board;
      values[k++] = r.council_district;
      values[k++] = r.incident_zip;
      values[k++] = r.channel;
      values[k++] = r.latitude;
      values[k++] = r.longitude;
      values[k++] = r.days_to_close;
      summaryWriter.add(summarySourceOf(r));
      rowColumns.add(r);
      written++;
      if (k === values.length) {
        insertBatch.run(values);
        k = 0;
        if (written % PROGRESS_EVERY < INSERT_BATCH) {
          summaryWriter.flush();
          onProgress?.(written, rowsExpected);
        }
      }
    }
    for (let i = 0; i < k; i += SERVICE_REQUEST_FIELDS.length) insertOne.run(values.slice(i, i + SERVICE_REQUEST_FIELDS.length));
    onProgress?.(written, written);
    rowColumns.finish();
    for (const sql of createIndexesSql('sqlite')) db.exec(sql);
    storeFilterValueCounts(db);
    summaryWriter.finish();
    storeSummaries(db, summaries());
  });
  store();
}

/** The rows per value of each filtered column (FILTER_VALUE_COUNTS_TABLE), each counted on its own index. */
function storeFilterValueCounts(db: Database.Database): void {
  // No declared type: the value keeps its own (text, or integer for council_district).
  db.exec(`CREATE TABLE ${FILTER_VALUE_COUNTS_TABLE} (column_name TEXT NOT NULL, value, row_count INTEGER NOT NULL)`);
  for (const column of FILTERED_COLUMNS) {
    db.prepare(`INSERT INTO ${FILTER_VALUE_COUNTS_TABLE} SELECT ?, ${column}, count(*) FROM service_requests GROUP BY ${column}`).run(column);
  }
}

/**
 * The post-load step, once the rows, their indexes and the aggregate summaries are in: the summary
 * tables (daily numbers, complaint-type counts), the cleaning rules, the metadata, then the planner's statistics.
 */
function storeSummaries(db: Database.Database, { dailyStats, complaintTypeCounts, meta }: SnapshotSummaries): void {
  const insertDays = (count: number): Database.Statement =>
    db.prepare(
      `INSERT INTO daily_stats (borough, complaint_type, day, opened, closed_within_14_days, share_closed_within_14_days, median_days_to_close) VALUES ${Array.from({ length: count }, () => '(?, ?, ?, ?, ?, ?, ?)').join(', ')}`,
    );
  const insertDayBatch = insertDays(INSERT_BATCH);
  const days: (string | number | null)[] = [];
  for (const d of dailyStats) {
    days.push(d.borough, d.complaint_type, d.day, d.opened, d.closed_within_14_days, d.share_closed_within_14_days, d.median_days_to_close);
    if (days.length === INSERT_BATCH * 7) {
      insertDayBatch.run(days);
      days.length = 0;
    }
  }
  if (days.length > 0) insertDays(days.length / 7).run(days);
  const insertCount = db.prepare('INSERT INTO complaint_type_counts (complaint_type, request_count) VALUES (?, ?)');
  for (const c of complaintTypeCounts) insertCount.run(c.complaint_type, c.count);
  const insertRule = db.prepare(
    'INSERT INTO cleaning_rules (position, id, kind, description, rows_removed, values_changed, applied) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  meta.cleaning_rules.forEach((rule, i) => {
    insertRule.run(i + 1, rule.id, rule.kind, rule.description, rule.rows_removed, rule.values_changed, rule.applied ? 1 : 0);
  });
  db.prepare(
    `INSERT INTO snapshot_meta (id, ${SNAPSHOT_META_COLUMNS.join(', ')}) VALUES (1, ${SNAPSHOT_META_COLUMNS.map(() => '?').join(', ')})`,
  ).run(...snapshotMetaValues(meta));
  // Statistics for the query planner, from a sample of each index (enough for these few indexes).
  db.pragma('analysis_limit = 1000');
  db.exec('ANALYZE');
}
