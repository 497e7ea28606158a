import Database from 'better-sqlite3';
import { EQUALITY_FILTERS, type EqualityFilter, type FilterValue, type ListFilters } from '../list-filters.js';
import { bucketRowsSql, cellCountsSql, countSql, facetSql, pageIdsQuery, rowsAtSecondsSql, sqliteRowsByIdSql, type FilterValueCounts } from './sqlite-queries.js';
import type { SqlParameter, TableLayout } from './filter-sql.js';
import { RowWalkPool } from '../engine/sqlite-row-walks.js';
import type { RowColumnScan } from '../engine/row-column-scan.js';
import { loadSqliteRowColumns } from '../engine/sqlite-row-columns.js';
import { cellScan, facetOfCodes, releaseRowColumns, rowColumnScanOf, rowColumnsLoaded, type RowColumns } from '../engine/row-columns-memory.js';
import { unpackBuckets } from '../engine/period-stats.js';
import {
  DatabaseUnavailableError,
  type BucketSummary,
  type ComplaintTypeCountRecord,
  type DailyScope,
  type DailyStatRecord,
  type DatasetRecord,
  type DayInterval,
  type FacetColumn,
  type GroupsRecord,
  type ListPageQuery,
  type ServiceRequestRecord,
  type ServiceRequestStore,
  type StoreMemoryOptions,
  type ValueCount,
} from './service-request-store.js';
import { FILTER_VALUE_COUNTS_TABLE, MAP_CELLS_SCHEMA_VERSION, readComplaintTypeCounts, readDailyStats, readSnapshotMeta, type SnapshotMeta, type SummaryUnit } from '../../../snapshot/index.js';
import { AggregateSummaries, type SummaryRowShape } from '../engine/summary-answers.js';
import { groupsFromRowColumns } from '../engine/group-answers.js';
import { PAGE_LOOP_LIMITS, pageIdsAmong, pageSecondsFromRowColumns, type PageLoopLimits } from '../engine/page-seconds.js';
import type { GroupQuery } from '../engine/group-query.js';
import { SqliteFileReplacement } from './sqlite-file-replacement.js';
import { SqliteStatements } from './sqlite-statements.js';
import { registerFilterFunctions } from './sqlite-functions.js';
import { periodPart, readinessSql, toComplaintTypeCountRecords, toDailyStatRecords, toDatasetRecord } from './snapshot-tables.js';

const READINESS_SQL = readinessSql((table) => table);

const TABLE = 'service_requests';

/** A read-only connection to the snapshot file. */
function openReadOnly(path: string): Database.Database {
  const database = new Database(path, { readonly: true, fileMustExist: true });
  database.pragma('query_only = ON');
  registerFilterFunctions(database);
  return database;
}

/** Every row of a kept statement, as objects or as arrays (raw for this run only: the statement is shared). */
function rowsOf(statement: Database.Statement, parameters: readonly SqlParameter[], shape: SummaryRowShape): unknown[] {
  if (shape === 'objects') return statement.all(...parameters);
  statement.raw(true);
  try {
    return statement.all(...parameters);
  } finally {
    statement.raw(false);
  }
}

/**
 * The snapshot in a SQLite file (better-sqlite3), opened read-only. The file is opened on first use
 * (and again after a failure), so that a missing or broken file answers 503 instead of stopping the
 * service. Nothing per row is held in memory: list pages are short walks of the file's indexes on
 * this thread (sqlite-queries.ts), at most `fetch` matching rows each; count, facets, the buckets
 * of the statistics and the pages that check the rows they walk (PageIdsQuery) walk rows in a pool
 * of worker threads (sqlite-row-walks.ts); count, facets and statistics scan the file's row columns
 * instead (sqlite-row-columns.ts), loaded once per file, when it has them.
 * Every page reads the file as it is, so a row that left the set between two pages is simply not
 * found (rule 4 of the contract). The statements (pages, rows by id, summaries, readiness) are
 * prepared on a connection of their own, bounded and closed when it has dropped as many as it keeps
 * (sqlite-statements.ts), and opened again with the file when a refresh replaces it.
 */
export class SqliteServiceRequestStore implements ServiceRequestStore {
  private database: Database.Database | null = null;
  private readonly statements: SqliteStatements;
  /** Rows per value of each equality filter, read at open: they choose the index a page walks. */
  private valueCounts: FilterValueCounts = new Map();
  /** The metadata of the file open, read once: a snapshot file is frozen. */
  private meta: SnapshotMeta | null = null;
  private readonly rowWalks: RowWalkPool;
  private closed = false;
  /** Whether a refresh renamed another file onto the path since the file was opened. */
  private replacement: SqliteFileReplacement | null = null;
  private readonly snapshotListeners: (() => void)[] = [];
  /** The row columns of the file open, once loaded and sent to the walk workers as `shared` (null until then, and for a file without them). */
  private rowColumns: { columns: RowColumns; shared: number } | null = null;
  /** The load of the row columns of the file open. */
  private rowColumnsLoad: Promise<void> = Promise.resolve();
  /**
   * Whether a warm-up has ended: /ready waits for the first one (the workers and the row columns of the
   * file served at start), not for the row columns of a file that a refresh brings later.
   */
  private warm = false;
  /** Count, facets and statistics from the summary tables, where they hold the answer. */
  private readonly summaries = new AggregateSummaries((sql, parameters, shape) => this.read(() => rowsOf(this.statement(sql), parameters, shape)), 'sqlite');

  constructor(
    readonly path: string,
    private readonly memory: StoreMemoryOptions = {},
    private readonly pageLoop: PageLoopLimits = PAGE_LOOP_LIMITS,
  ) {
    this.rowWalks = new RowWalkPool(path);
    this.statements = new SqliteStatements(() => openReadOnly(path));
  }

  private open(): Database.Database {
    if (this.closed) throw new Error('the store is closed');
    if (this.database !== null && this.database.open && this.replacement?.replaced() === true) {
      // A refresh renamed a new snapshot onto the path: everything kept of the old file goes with it.
      this.database.close();
      this.database = null;
      for (const listener of this.snapshotListeners) listener();
    }
    if (this.database === null || !this.database.open) {
      this.meta = null;
      this.statements.close();
      const database = openReadOnly(this.path);
      this.replacement = new SqliteFileReplacement(this.path);
      this.valueCounts = readValueCounts(database);
      this.database = database;
      this.rowColumns = null;
      this.rowColumnsLoad = loadSqliteRowColumns(database, () => this.database === database && database.open, this.memory.rowColumnsMaxBytes).then(
        (columns) => {
          if (columns === null) return;
          if (this.database === database) this.rowColumns = { columns, shared: this.rowWalks.shareRowColumns(columns) };
          else releaseRowColumns(columns.bytes);
        },
        // Unreadable row columns: the walks read the rows.
        () => undefined,
      );
    }
    return this.database;
  }

  onSnapshotChange(listener: () => void): void {
    this.snapshotListeners.push(listener);
  }

  /** Runs a read; any failure (missing file, corrupt file, missing table) becomes DatabaseUnavailableError. */
  private read<T>(work: (database: Database.Database) => T): Promise<T> {
    try {
      return Promise.resolve(work(this.open()));
    } catch (error) {
      return Promise.reject(new DatabaseUnavailableError(error));
    }
  }

  /** The prepared statement of `sql`, on the file open (a refresh is seen first). */
  private statement(sql: string): Database.Statement {
    this.open();
    return this.statements.statement(sql);
  }

  /** The statements kept on this thread and in each walk worker (tests). */
  async statementStats(): Promise<{ thread: ReturnType<SqliteStatements['stats']>; workers: ReturnType<SqliteStatements['stats']>[] }> {
    return { thread: this.statements.stats(), workers: await this.rowWalks.statementStats() };
  }

  /**
   * A page whose walk is bounded by its size runs here; one that checks the rows it walks (the map box,
   * a second equality filter) may read millions of them before its page is full: the row columns find
   * the seconds of its rows first, and which of the rows at those seconds match (page-seconds.ts).
   * Its ids are then read here from the (created_at, id) index alone, no row read, when those seconds
   * hold at most `pageLoop.indexRows` rows; else the rows of those seconds are walked in the row walk
   * workers.
   */
  async listIds(query: ListPageQuery): Promise<number[]> {
    const page = await this.read((database) => pageIdsQuery(query, this.valueCounts, this.table(database)));
    if (!page.checksRows) return this.read(() => this.statement(page.sql).pluck().all(...page.parameters) as number[]);
    const seconds = await pageSecondsFromRowColumns(this.rowWalks, () => this.read(() => this.loadedScanOf(query.filters)), query, this.pageLoop.scanRows);
    if (seconds === null) return (await this.rowWalks.answer('ids', page)).ids;
    if (seconds.texts.length === 0) return [];
    if (seconds.rowsAtSeconds <= this.pageLoop.indexRows) {
      const at = rowsAtSecondsSql(seconds.texts, TABLE);
      const ids = pageIdsAmong(seconds, await this.read(() => this.statement(at.sql).raw().all(...at.parameters) as [string, number][]), query);
      if (ids !== null) return ids;
    }
    return (await this.rowWalks.answer('ids', await this.read((database) => pageIdsQuery(query, this.valueCounts, this.table(database), seconds.texts)))).ids;
  }

  /** The scan of the row columns for these filters when they are loaded, without waiting for them. */
  private loadedScanOf(filters: ListFilters): { columns: RowColumns; scan: RowColumnScan } | null {
    const loaded = this.rowColumns;
    return loaded === null ? null : { columns: loaded.columns, scan: rowColumnScanOf(loaded.columns, loaded.shared, filters) };
  }

  /**
   * The scan of the row columns for these filters, when the file open has them and they can answer
   * (read after `open`, which forgets the row columns of a file a refresh replaced).
   */
  private async scanOf(filters: ListFilters, facet?: FacetColumn): Promise<{ columns: RowColumns; scan: RowColumnScan } | null> {
    // Opening the file starts the load of its row columns; a request that arrives meanwhile waits for
    // them (at most ROW_COLUMNS_WAIT_MS), since a scan of them is many times faster than a walk of the
    // rows (bench/README.md, "Figures behind source comments").
    await this.read(() => undefined);
    await rowColumnsLoaded(this.rowColumnsLoad);
    return this.read(() => {
      const loaded = this.rowColumns;
      return loaded === null ? null : { columns: loaded.columns, scan: rowColumnScanOf(loaded.columns, loaded.shared, filters, facet) };
    });
  }

  async count(filters: ListFilters): Promise<number> {
    const summarised = await this.summaries.count(filters);
    if (summarised !== null) return summarised;
    const scanned = await this.rowWalks.scan('count', () => this.scanOf(filters));
    if (scanned !== null) return scanned.answer.count;
    return (await this.rowWalks.answer('count', await this.read((database) => countSql(filters, this.valueCounts, this.table(database))))).count;
  }

  periodSummaries(filters: ListFilters, unit: SummaryUnit): Promise<Map<string, BucketSummary> | null> {
    return this.summaries.periodBuckets(filters, unit);
  }

  async facet(column: FacetColumn, filters: ListFilters): Promise<ValueCount[]> {
    const summarised = await this.summaries.facet(column, filters);
    if (summarised !== null) return summarised;
    const scanned = await this.rowWalks.scan('facet', () => this.scanOf(filters, column));
    if (scanned !== null) return facetOfCodes(scanned.plan.columns, column, scanned.answer.rows as [number, number][]);
    return (await this.rowWalks.answer('facet', await this.read((database) => facetSql(column, filters, this.valueCounts, this.table(database))))).rows.map(([value, count]) => ({ value, count }));
  }

  async groups(filters: ListFilters, query: GroupQuery): Promise<GroupsRecord> {
    return (await this.summaries.groups(filters, query)) ?? (await groupsFromRowColumns(this.rowWalks, () => this.scanOf(filters), query));
  }

  async bucketsFromRows(filters: ListFilters, unit: SummaryUnit): Promise<Map<string, BucketSummary>> {
    const scanned = await this.rowWalks.scan('buckets', () => this.scanOf(filters), unit);
    if (scanned !== null) return unpackBuckets(scanned.answer.buckets);
    return unpackBuckets((await this.rowWalks.answer('buckets', await this.read((database) => bucketRowsSql(filters, this.valueCounts, this.table(database))), unit)).buckets);
  }

  async cellCounts(filters: ListFilters, multiple: number): Promise<[number, number][]> {
    const scanned = await this.rowWalks.scan('cells', async () => cellScan(await this.scanOf(filters), multiple));
    if (scanned !== null) return scanned.answer.rows;
    return (await this.rowWalks.answer('cells', await this.read((database) => cellCountsSql(filters, multiple, this.valueCounts, this.table(database))))).rows;
  }

  /**
   * Starts the row walk workers and opens the file; resolves when a data request would answer at full
   * speed. The workers start even when the file cannot be read yet, so that it is served at once when
   * it appears.
   */
  async warmUp(): Promise<void> {
    const workers = this.rowWalks.start();
    workers.catch(() => undefined);
    await this.read(() => undefined);
    await this.rowColumnsLoad;
    try {
      await workers;
    } catch (error) {
      throw new DatabaseUnavailableError(error);
    }
    this.warm = true;
  }

  rowsById(ids: readonly number[]): Promise<ServiceRequestRecord[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return this.read(() => this.statement(sqliteRowsByIdSql(TABLE)).all(JSON.stringify(ids)) as ServiceRequestRecord[]);
  }

  complaintTypeCounts(): Promise<ComplaintTypeCountRecord[]> {
    return this.read((database) => toComplaintTypeCountRecords(readComplaintTypeCounts(database)));
  }

  /** The rows' table, with the map cells when the file's schema has them. */
  private table(database: Database.Database): TableLayout {
    return { name: TABLE, mapCells: this.snapshotMeta(database).schema_version >= MAP_CELLS_SCHEMA_VERSION };
  }

  private snapshotMeta(database: Database.Database): SnapshotMeta {
    this.meta ??= readSnapshotMeta(database);
    return this.meta;
  }

  dailyStats(scope: DailyScope, days?: DayInterval): Promise<DailyStatRecord[]> {
    return this.read((database) => {
      const meta = this.snapshotMeta(database);
      const scoped = { borough: (scope.borough ?? undefined) as never, complaintType: scope.complaint_type ?? undefined };
      return toDailyStatRecords(readDailyStats(database, scoped, periodPart(meta, days)), meta.snapshot_date);
    });
  }

  dataset(): Promise<DatasetRecord> {
    return this.read((database) => toDatasetRecord(readSnapshotMeta(database)));
  }

  /** Of the file open now: a file renamed onto the path is opened first (a refresh). */
  snapshotId(): Promise<string> {
    return this.read((database) => this.snapshotMeta(database).snapshot_id);
  }

  /**
   * Ready (the contract's readiness) when the file can be read and the first warm-up has ended (the
   * row walk workers run, the row columns are loaded): a ping before then waits for it, so that
   * traffic comes once a data request would answer at full speed.
   */
  async ping(): Promise<void> {
    await this.read(() => {
      for (const sql of READINESS_SQL) this.statement(sql).get();
    });
    if (!this.warm) await this.warmUp();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.database?.close();
    this.database = null;
    this.statements.close();
    await this.rowWalks.close();
  }
}

/** The snapshot's filter_value_counts as maps; empty for a file without it (every filter then costs the same). */
function readValueCounts(database: Database.Database): FilterValueCounts {
  const counts = new Map<EqualityFilter, Map<FilterValue, number>>();
  const table = database.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(FILTER_VALUE_COUNTS_TABLE);
  if (table === undefined) return counts;
  const rows = database.prepare(`SELECT column_name, value, row_count FROM ${FILTER_VALUE_COUNTS_TABLE}`).raw().all() as [string, FilterValue, number][];
  for (const [column, value, rows_] of rows) {
    if (!(EQUALITY_FILTERS as readonly string[]).includes(column)) continue;
    const name = column as EqualityFilter;
    let perValue = counts.get(name);
    if (perValue === undefined) {
      perValue = new Map();
      counts.set(name, perValue);
    }
    perValue.set(value, rows_);
  }
  return counts;
}

