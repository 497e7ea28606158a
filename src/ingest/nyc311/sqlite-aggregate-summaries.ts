/**
 * The aggregate summaries (aggregate-summaries.ts) of a SQLite snapshot: built as the snapshot writer
 * stores the rows (SqliteSummaryWriter), or from the loaded rows of a snapshot written without them,
 * read back in (created_at, id) order in batches (a statement cannot run while another one iterates).
 */
import type Database from 'better-sqlite3';
import {
  AggregateSummaryBuilder,
  SUMMARY_BUCKET_COLUMNS,
  SUMMARY_PAIR_COLUMNS,
  SUMMARY_FACET_TABLE_COLUMNS,
  createSummaryTablesSql,
  indexSummaryTablesSql,
  summarySourceColumns,
  type SummaryRow,
  type SummarySourceRow,
} from '../../snapshot/aggregate-summaries.js';

/** Rows read per batch. */
const READ_BATCH = 20_000;
/**
 * Inserts rows of the table, one statement run per row: better-sqlite3 binds one row's parameters faster
 * than a multi-row statement's sliced and flattened ones (bench/README.md, "Figures behind source
 * comments").
 */
function inserterOf(db: Database.Database, table: string, columns: readonly string[]): (rows: Iterable<SummaryRow>) => void {
  const insert = db.prepare(`INSERT INTO ${table} (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`);
  return (rows) => {
    for (const row of rows) insert.run(row);
  };
}

/**
 * The summary tables of the open database, created at once and filled as rows are added in created_at
 * order (inside the caller's transaction): `flush` between batches of rows stores the buckets closed so
 * far, `finish` the rest, then indexes the tables.
 */
export class SqliteSummaryWriter {
  private readonly builder = new AggregateSummaryBuilder();
  private readonly insertBuckets: (rows: Iterable<SummaryRow>) => void;
  private readonly insertPairs: (rows: Iterable<SummaryRow>) => void;
  private readonly insertFacets: (rows: Iterable<SummaryRow>) => void;

  constructor(private readonly db: Database.Database) {
    for (const sql of createSummaryTablesSql('sqlite')) db.exec(sql);
    this.insertBuckets = inserterOf(db, 'summary_buckets', SUMMARY_BUCKET_COLUMNS);
    this.insertPairs = inserterOf(db, 'summary_pairs', SUMMARY_PAIR_COLUMNS);
    this.insertFacets = inserterOf(db, 'summary_facets', SUMMARY_FACET_TABLE_COLUMNS);
  }

  add(row: SummarySourceRow): void {
    this.builder.add(row);
  }

  flush(): void {
    this.insertBuckets(this.builder.takeBuckets());
    this.insertPairs(this.builder.takePairs());
    this.insertFacets(this.builder.takeFacets());
  }

  finish(): void {
    this.builder.finish();
    this.flush();
    for (const sql of indexSummaryTablesSql('sqlite')) this.db.exec(sql);
  }
}

/** Creates and fills the summary tables of the open database from its loaded service_requests (inside the caller's transaction). */
export function writeSqliteAggregateSummaries(db: Database.Database): void {
  const writer = new SqliteSummaryWriter(db);
  // The id comes last, after what the builder reads, for the keyset of the next batch.
  const select = `SELECT ${summarySourceColumns()}, id FROM service_requests`;
  const first = db.prepare(`${select} ORDER BY created_at, id LIMIT ?`).raw();
  const next = db.prepare(`${select} WHERE (created_at, id) > (?, ?) ORDER BY created_at, id LIMIT ?`).raw();
  let last: unknown[] | undefined;
  for (;;) {
    const rows = (last === undefined ? first.all(READ_BATCH) : next.all(last[0], last.at(-1), READ_BATCH)) as unknown[][];
    for (const row of rows) writer.add(row as SummarySourceRow);
    writer.flush();
    if (rows.length < READ_BATCH) break;
    last = rows.at(-1);
  }
  writer.finish();
}
