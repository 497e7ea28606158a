/**
 * The aggregate summaries (aggregate-summaries.ts) of a SQLite snapshot, written into it from its
 * loaded rows: read back in (created_at, id) order in batches (a statement cannot run while another
 * one iterates), summarised, inserted.
 */
import type Database from 'better-sqlite3';
import {
  AggregateSummaryBuilder,
  SUMMARY_BUCKET_COLUMNS,
  SUMMARY_FACET_TABLE_COLUMNS,
  createSummaryTablesSql,
  indexSummaryTablesSql,
  summarySourceColumns,
  type SummaryRow,
  type SummarySourceRow,
} from '../../snapshot/aggregate-summaries.js';

/** Rows read per batch. */
const READ_BATCH = 20_000;
/** Rows per INSERT statement (8 or 6 parameters each, well under SQLite's limit of 32,766). */
const INSERT_BATCH = 500;

/** Inserts rows of the table in multi-row statements. */
function inserterOf(db: Database.Database, table: string, columns: readonly string[]): (rows: SummaryRow[]) => void {
  const statementOf = (count: number): Database.Statement =>
    db.prepare(`INSERT INTO ${table} (${columns.join(', ')}) VALUES ${Array.from({ length: count }, () => `(${columns.map(() => '?').join(', ')})`).join(', ')}`);
  const full = statementOf(INSERT_BATCH);
  return (rows) => {
    let start = 0;
    for (; start + INSERT_BATCH <= rows.length; start += INSERT_BATCH) full.run(rows.slice(start, start + INSERT_BATCH).flat());
    if (start < rows.length) statementOf(rows.length - start).run(rows.slice(start).flat());
  };
}

/** Creates and fills the summary tables of the open database from its service_requests (inside the caller's transaction). */
export function writeSqliteAggregateSummaries(db: Database.Database): void {
  for (const sql of createSummaryTablesSql('sqlite')) db.exec(sql);
  // The id comes last, after what the builder reads, for the keyset of the next batch.
  const select = `SELECT ${summarySourceColumns()}, id FROM service_requests`;
  const first = db.prepare(`${select} ORDER BY created_at, id LIMIT ?`).raw();
  const next = db.prepare(`${select} WHERE (created_at, id) > (?, ?) ORDER BY created_at, id LIMIT ?`).raw();
  const insertBuckets = inserterOf(db, 'summary_buckets', SUMMARY_BUCKET_COLUMNS);
  const insertFacets = inserterOf(db, 'summary_facets', SUMMARY_FACET_TABLE_COLUMNS);
  const builder = new AggregateSummaryBuilder();
  let last: unknown[] | undefined;
  for (;;) {
    const rows = (last === undefined ? first.all(READ_BATCH) : next.all(last[0], last.at(-1), READ_BATCH)) as unknown[][];
    for (const row of rows) builder.add(row as SummarySourceRow);
    insertBuckets(builder.takeBuckets());
    insertFacets(builder.takeFacets());
    if (rows.length < READ_BATCH) break;
    last = rows.at(-1);
  }
  builder.finish();
  insertBuckets(builder.takeBuckets());
  insertFacets(builder.takeFacets());
  for (const sql of indexSummaryTablesSql('sqlite')) db.exec(sql);
}
