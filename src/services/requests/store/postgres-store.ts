import { createRequire } from 'node:module';
import type pg from 'pg';
import type { FacetColumn, GroupsRecord, ValueCount } from './service-request-store.js';
import { pageChecksRows, type ListFilters } from '../list-filters.js';
import { bucketsQuery, cellCountsQuery, countQuery, facetQuery, listIdsQuery, numberPlaceholders, postgresRowsByIdSql } from './postgres-queries.js';
import type { SqlParameter, TableLayout } from './filter-sql.js';
import { PostgresStatements } from './postgres-statements.js';
import {
  DatabaseUnavailableError,
  type BucketSummary,
  type ComplaintTypeCountRecord,
  type DailyScope,
  type DailyStatRecord,
  type DayInterval,
  type DatasetRecord,
  type ListPageQuery,
  type ServiceRequestRecord,
  type ServiceRequestStore,
  type StoreMemoryOptions,
} from './service-request-store.js';
import { readComplaintTypeCountsFromPostgres, readDailyStatsFromPostgres, readServedSnapshot, readSnapshotMetaFromPostgres, MAP_CELLS_SCHEMA_VERSION, type ServedSnapshot, type SnapshotMeta, type SummaryUnit } from '../../../snapshot/index.js';
import { quoteIdentifier } from '../../../shared/postgres-schema.js';
import { AggregateSummaries, type SummaryRowShape } from '../engine/summary-answers.js';
import { groupsFromRowColumns } from '../engine/group-answers.js';
import { PAGE_LOOP_LIMITS, pageSecondsFromRowColumns } from '../engine/page-seconds.js';
import type { GroupQuery } from '../engine/group-query.js';
import { periodPart, readinessSql, toComplaintTypeCountRecords, toDailyStatRecords, toDatasetRecord } from './snapshot-tables.js';
import { RowWalkPool } from '../engine/sqlite-row-walks.js';
import { cellScan, facetOfCodes, releaseRowColumns, rowColumnScanOf, rowColumnsLoaded, type RowColumns } from '../engine/row-columns-memory.js';
import { loadPostgresRowColumns } from '../engine/postgres-row-columns.js';
import { unpackBuckets } from '../engine/period-stats.js';
import type { RowColumnScan } from '../engine/row-column-scan.js';

export interface PostgresStoreOptions extends StoreMemoryOptions {
  url: string;
  /** The served schema: its pointer names the schema of the snapshot to serve (postgres-snapshot-pointer.ts). */
  schema: string;
  /** Connections in the pool (default 10). */
  maxConnections?: number;
  /** How long a read pointer is trusted before it is read again (default 1000 ms): the delay before a new snapshot is served. */
  snapshotCheckMs?: number;
  /** Rows of the row columns a page's scan reads on the event loop (page-seconds.ts; default PAGE_LOOP_LIMITS.scanRows). */
  pageScanLoopRows?: number;
}

/** The snapshot being served: where its tables are, and its metadata (read once: a snapshot schema never changes). */
interface ServingSnapshot extends ServedSnapshot {
  meta: SnapshotMeta;
}

/**
 * The snapshot in PostgreSQL (pg Pool). Sessions are read-only (default_transaction_read_only), each
 * statement has a time limit, and statements are named so that each connection prepares each text
 * once, within a bound per connection (postgres-statements.ts: the least used are deallocated). Any failure becomes DatabaseUnavailableError.
 * Count, facets and statistics come from the summary tables where they hold the answer; otherwise
 * from a scan of the snapshot's row columns (loaded once per snapshot, postgres-row-columns.ts) in the
 * scan threads, or, while they load, for a map box and for a snapshot without them, from SQL.
 *
 * A refresh: the served schema's pointer is read again at most every `snapshotCheckMs`, in the
 * background of a request (which goes on with the snapshot it has). When it names a new snapshot
 * schema, that snapshot's metadata is read, then every later statement goes to it, and what was kept
 * of the old one (its metadata) is dropped; its statements (their texts name its schema) leave the
 * connections as they are no longer used. Each method picks the schema
 * synchronously when it sends its statement, so one statement never mixes two snapshots, and
 * `snapshotId()` changes exactly when the schema does (the routes check it around a page).
 */
export class PostgresServiceRequestStore implements ServiceRequestStore {
  private readonly pool: pg.Pool;
  private readonly servedSchema: string;
  private readonly snapshotCheckMs: number;
  private serving: ServingSnapshot | null = null;
  /** When the pointer was last read (performance.now()). */
  private checkedAt = 0;
  /** The reading of the pointer under way, if any (one at a time). */
  private checking: Promise<ServingSnapshot> | null = null;
  private readonly statements: PostgresStatements;
  private readonly snapshotListeners: (() => void)[] = [];
  /** The threads that scan the row columns: count, facets and statistics that no summary answers. */
  private readonly rowScans: RowWalkPool;
  /** The row columns of a snapshot schema, once loaded and sent to the scan threads as `shared`. */
  private rowColumns: { schema: string; columns: RowColumns; shared: number } | null = null;
  private readonly rowColumnsMaxBytes: number | undefined;
  private readonly pageScanLoopRows: number;
  private closed = false;
  /** The load of the row columns of the snapshot served. */
  private rowColumnsLoad: Promise<void> = Promise.resolve();
  /**
   * Whether a warm-up has ended: /ready waits for the first one (the scan threads and the row columns
   * of the snapshot served at start), not for the row columns of a snapshot that a refresh brings later.
   */
  private warm = false;
  /** Count, facets and statistics from the summary tables of the snapshot in use, where they hold the answer. */
  private readonly summaries = new AggregateSummaries(
    (sql, parameters, shape) =>
      this.rows((snapshot) => ({ sql: sql.replace(/\b(summary_buckets|summary_pairs|summary_facets)\b/g, (name) => PostgresServiceRequestStore.table(snapshot, name)), parameters }), shape),
    'postgres',
  );

  constructor(options: PostgresStoreOptions) {
    // pg is loaded with the first PostgreSQL store, not at every start of the service (SQLite by default).
    const { Pool } = createRequire(import.meta.url)('pg') as typeof pg;
    this.pool = new Pool({
      connectionString: options.url,
      max: options.maxConnections ?? 10,
      connectionTimeoutMillis: 3_000,
      idleTimeoutMillis: 30_000,
      statement_timeout: 5_000,
      query_timeout: 6_000,
      application_name: 'service-request-api',
      // Every session is read-only: no statement of this service can change data.
      options: '-c default_transaction_read_only=on',
    });
    // A connection that breaks while idle must not stop the process; the next query reconnects.
    this.pool.on('error', () => undefined);
    this.statements = new PostgresStatements(this.pool);
    this.servedSchema = options.schema;
    this.snapshotCheckMs = options.snapshotCheckMs ?? 1_000;
    this.rowScans = new RowWalkPool(null);
    this.rowColumnsMaxBytes = options.rowColumnsMaxBytes;
    this.pageScanLoopRows = options.pageScanLoopRows ?? PAGE_LOOP_LIMITS.scanRows;
  }

  /**
   * The snapshot to read: at once when the pointer was read less than snapshotCheckMs ago (or is being
   * read again), after reading it the first time or after a failure.
   */
  private async snapshot(): Promise<ServingSnapshot> {
    const serving = this.serving;
    if (serving === null) return this.checkPointer();
    if (performance.now() - this.checkedAt >= this.snapshotCheckMs) {
      // A failed check leaves the snapshot in use: the statements themselves report an unreadable database.
      this.checkPointer().catch(() => undefined);
    }
    return serving;
  }

  private checkPointer(): Promise<ServingSnapshot> {
    this.checking ??= this.readPointer().finally(() => {
      this.checking = null;
    });
    return this.checking;
  }

  private async readPointer(): Promise<ServingSnapshot> {
    const served = await this.viaReaders(() => readServedSnapshot(this.pool, this.servedSchema));
    if (served === null) throw new DatabaseUnavailableError(new Error(`no snapshot is published in the schema ${this.servedSchema}`));
    this.checkedAt = performance.now();
    const current = this.serving;
    if (current !== null && current.schema === served.schema) return current;
    const meta = await this.viaReaders(() => readSnapshotMetaFromPostgres(this.pool, served.schema));
    // Another check may have switched meanwhile; the newest pointer read wins.
    if (this.serving !== null && this.serving !== current) return this.serving;
    this.serving = { ...served, meta };
    this.loadRowColumns(this.serving.schema);
    for (const listener of this.snapshotListeners) listener();
    return this.serving;
  }

  /**
   * Loads the row columns of the snapshot schema now served (the previous snapshot's are dropped at
   * once: its count, facets and statistics wait for the load, scanOf). A snapshot without them, or a
   * failed load, is read by SQL.
   */
  private loadRowColumns(schema: string): void {
    this.rowColumns = null;
    const stillServed = (): boolean => !this.closed && this.serving?.schema === schema;
    this.rowColumnsLoad = loadPostgresRowColumns(this.pool, schema, stillServed, this.rowColumnsMaxBytes).then(
      (columns) => {
        if (columns === null) return;
        if (stillServed()) this.rowColumns = { schema, columns, shared: this.rowScans.shareRowColumns(columns) };
        else releaseRowColumns(columns.bytes);
      },
      () => undefined,
    );
  }

  /** The scan of the row columns for these filters, when the snapshot in use has them loaded and they can answer. */
  private async scanOf(filters: ListFilters, facet?: FacetColumn): Promise<{ columns: RowColumns; scan: RowColumnScan } | null> {
    const { schema } = await this.snapshot();
    // A request that arrives while the row columns of the snapshot load waits for them (at most
    // ROW_COLUMNS_WAIT_MS): a scan of them is many times faster than the SQL (bench/README.md,
    // "Figures behind source comments").
    await rowColumnsLoaded(this.rowColumnsLoad);
    const loaded = this.rowColumns;
    if (loaded === null || loaded.schema !== schema) return null;
    return { columns: loaded.columns, scan: rowColumnScanOf(loaded.columns, loaded.shared, filters, facet) };
  }

  onSnapshotChange(listener: () => void): void {
    this.snapshotListeners.push(listener);
  }

  private static table(snapshot: ServedSnapshot, name: string): string {
    return `${quoteIdentifier(snapshot.schema)}.${name}`;
  }

  /** Runs the statement that `sqlOf` makes for the snapshot in use. */
  private async rows<T>(sqlOf: (snapshot: ServingSnapshot) => { sql: string; parameters: readonly SqlParameter[] }, shape: SummaryRowShape = 'objects'): Promise<T[]> {
    return this.onServedSnapshot(async (snapshot) => {
      const { sql, parameters } = sqlOf(snapshot);
      const text = sql.includes('?') ? numberPlaceholders(sql) : sql;
      const result = await this.statements.query(text, [...parameters], shape === 'arrays' ? 'array' : undefined);
      return result.rows as T[];
    });
  }

  /**
   * Runs `work` on the snapshot in use. Loads may land faster than the pointer is read again (two
   * loads within one check drop the schema this replica still reads), and a hot standby cancels a
   * statement that stands in the way of replaying such a drop. Either way the snapshot in use is
   * retired, not the database broken: the pointer is read at once and `work` runs once more, on the
   * snapshot it names now. Any other failure, or a second one, is a failure to read the database.
   */
  private async onServedSnapshot<T>(work: (snapshot: ServingSnapshot) => Promise<T>): Promise<T> {
    const snapshot = await this.snapshot();
    try {
      return await work(snapshot);
    } catch (error) {
      if (!isRetiredSnapshotFailure(error)) throw asDatabaseUnavailable(error);
      const current = await this.checkPointer();
      // Still the same schema: not retired, unless a standby's replay cancelled the statement.
      if (current.schema === snapshot.schema && !isRecoveryConflict(error)) throw asDatabaseUnavailable(error);
      try {
        return await work(current);
      } catch (again) {
        throw asDatabaseUnavailable(again);
      }
    }
  }

  private static requests(snapshot: ServingSnapshot): TableLayout {
    return { name: PostgresServiceRequestStore.table(snapshot, 'service_requests'), mapCells: snapshot.meta.schema_version >= MAP_CELLS_SCHEMA_VERSION };
  }

  /**
   * A page whose walk checks the rows it reads (pageChecksRows) reads only the rows of its rows'
   * seconds, as the row columns of the snapshot in use find them (engine/page-seconds.ts): the
   * planner's walk may otherwise read millions of rows for a few.
   */
  async listIds(query: ListPageQuery): Promise<number[]> {
    let scannedSchema: string | null = null;
    const seconds = pageChecksRows(query.filters)
      ? await pageSecondsFromRowColumns(
          this.rowScans,
          async () => {
            const { schema } = await this.snapshot();
            const loaded = this.rowColumns;
            if (loaded === null || loaded.schema !== schema) return null;
            scannedSchema = schema;
            return { columns: loaded.columns, scan: rowColumnScanOf(loaded.columns, loaded.shared, query.filters) };
          },
          query,
          this.pageScanLoopRows,
        )
      : null;
    if (seconds !== null && seconds.texts.length === 0) return [];
    // Seconds found in another snapshot's row columns (a refresh meanwhile) are not used.
    const rows = await this.rows<{ id: number }>((snapshot) => listIdsQuery(query, PostgresServiceRequestStore.requests(snapshot), snapshot.schema === scannedSchema ? (seconds?.texts ?? null) : null));
    return rows.map((row) => row.id);
  }

  async count(filters: ListFilters): Promise<number> {
    return (await this.summaries.count(filters)) ?? this.countRows(filters);
  }

  private async countRows(filters: ListFilters): Promise<number> {
    const scanned = await this.rowScans.scan('count', () => this.scanOf(filters));
    if (scanned !== null) return scanned.answer.count;
    const [row] = await this.rows<{ count: number }>((snapshot) => countQuery(filters, PostgresServiceRequestStore.requests(snapshot)));
    return row?.count ?? 0;
  }

  async facet(column: FacetColumn, filters: ListFilters): Promise<ValueCount[]> {
    const summarised = await this.summaries.facet(column, filters);
    if (summarised !== null) return summarised;
    const scanned = await this.rowScans.scan('facet', () => this.scanOf(filters, column));
    if (scanned !== null) return facetOfCodes(scanned.plan.columns, column, scanned.answer.rows as [number, number][]);
    return this.rows<ValueCount>((snapshot) => facetQuery(column, filters, PostgresServiceRequestStore.requests(snapshot)));
  }

  periodSummaries(filters: ListFilters, unit: SummaryUnit): Promise<Map<string, BucketSummary> | null> {
    return this.summaries.periodBuckets(filters, unit);
  }

  async groups(filters: ListFilters, query: GroupQuery): Promise<GroupsRecord> {
    return (await this.summaries.groups(filters, query)) ?? (await groupsFromRowColumns(this.rowScans, () => this.scanOf(filters), query));
  }

  async bucketsFromRows(filters: ListFilters, unit: SummaryUnit): Promise<Map<string, BucketSummary>> {
    const scanned = await this.rowScans.scan('buckets', () => this.scanOf(filters), unit);
    if (scanned !== null) return unpackBuckets(scanned.answer.buckets);
    const rows = await this.rows<{ bucket: string } & BucketSummary>((snapshot) => bucketsQuery(filters, unit, PostgresServiceRequestStore.requests(snapshot)));
    return new Map(rows.map(({ bucket, ...numbers }) => [bucket, numbers]));
  }

  async cellCounts(filters: ListFilters, multiple: number): Promise<[number, number][]> {
    const scanned = await this.rowScans.scan('cells', async () => cellScan(await this.scanOf(filters), multiple));
    if (scanned !== null) return scanned.answer.rows;
    const rows = await this.rows<{ cell: number; count: number }>((snapshot) => cellCountsQuery(filters, multiple, PostgresServiceRequestStore.requests(snapshot)));
    return rows.map((row) => [row.cell, row.count]);
  }

  async rowsById(ids: readonly number[]): Promise<ServiceRequestRecord[]> {
    // The column is a 4-byte integer: a larger id cannot exist (and would be an error, not a miss).
    const possible = ids.filter((id) => Number.isSafeInteger(id) && id >= -2_147_483_648 && id <= 2_147_483_647);
    if (possible.length === 0) return [];
    return this.rows<ServiceRequestRecord>((snapshot) => ({
      sql: postgresRowsByIdSql(PostgresServiceRequestStore.requests(snapshot).name),
      parameters: [possible],
    }));
  }

  /** A read through the snapshot builder's readers; any failure becomes DatabaseUnavailableError. */
  private async viaReaders<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      throw asDatabaseUnavailable(error);
    }
  }

  async complaintTypeCounts(): Promise<ComplaintTypeCountRecord[]> {
    return toComplaintTypeCountRecords(await this.onServedSnapshot(({ schema }) => readComplaintTypeCountsFromPostgres(this.pool, schema)));
  }

  async dailyStats(scope: DailyScope, days?: DayInterval): Promise<DailyStatRecord[]> {
    return this.onServedSnapshot(async ({ schema, meta }) => {
      const filters = { borough: (scope.borough ?? undefined) as never, complaintType: scope.complaint_type ?? undefined };
      return toDailyStatRecords(await readDailyStatsFromPostgres(this.pool, schema, filters, periodPart(meta, days)), meta.snapshot_date);
    });
  }

  async dataset(): Promise<DatasetRecord> {
    return toDatasetRecord(await this.onServedSnapshot(({ schema }) => readSnapshotMetaFromPostgres(this.pool, schema)));
  }

  async snapshotId(): Promise<string> {
    return (await this.snapshot()).snapshotId;
  }

  /**
   * In each connection of the pool (all checked out at once, so each is asked): the statements it has
   * prepared, the characters of their texts, and its server process's memory (tests).
   */
  async statementStats(): Promise<{ prepared: number; chars: number; backendBytes: number }[]> {
    const clients = await Promise.all(Array.from({ length: this.pool.totalCount }, () => this.pool.connect()));
    try {
      return await Promise.all(
        clients.map(async (client) => {
          const { rows } = await client.query<{ prepared: number; chars: number; backendBytes: string }>(
            'SELECT (SELECT count(*)::integer FROM pg_prepared_statements) AS prepared, ' +
              '(SELECT coalesce(sum(length(statement)), 0)::integer FROM pg_prepared_statements) AS chars, ' +
              '(SELECT sum(total_bytes)::bigint FROM pg_backend_memory_contexts) AS "backendBytes"',
          );
          const row = rows[0] as { prepared: number; chars: number; backendBytes: string };
          return { ...row, backendBytes: Number(row.backendBytes) };
        }),
      );
    } finally {
      for (const client of clients) client.release();
    }
  }

  poolUse(): { total: number; idle: number; waiting: number } {
    return { total: this.pool.totalCount, idle: this.pool.idleCount, waiting: this.pool.waitingCount };
  }

  /**
   * Starts the scan threads, reads the pointer and loads the row columns of the snapshot it names;
   * resolves when a data request would answer at full speed (pages come from PostgreSQL's indexes).
   */
  async warmUp(): Promise<void> {
    const threads = this.rowScans.start();
    threads.catch(() => undefined);
    await this.snapshot();
    await this.rowColumnsLoad;
    try {
      await threads;
    } catch (error) {
      throw new DatabaseUnavailableError(error);
    }
    this.warm = true;
  }

  /**
   * The pointer is read again (a failure to read it is a failure to read the database), then the tables
   * it names; a ping before the first warm-up has ended waits for it.
   */
  async ping(): Promise<void> {
    const { schema } = await this.checkPointer();
    for (const sql of readinessSql((name) => `${quoteIdentifier(schema)}.${name}`)) await this.rows(() => ({ sql, parameters: [] }));
    if (!this.warm) await this.warmUp();
  }

  async close(): Promise<void> {
    // A load under way stops at its next piece and keeps nothing.
    this.closed = true;
    this.rowColumns = null;
    await Promise.all([this.pool.end(), this.rowScans.close()]);
  }
}

/**
 * PostgreSQL's codes for a statement whose snapshot was retired under it: its schema or tables are
 * gone (3F000 invalid_schema_name, 42P01 undefined_table), or a hot standby cancelled it to replay
 * their drop (40001, "canceling statement due to conflict with recovery").
 */
const RETIRED_SNAPSHOT_CODES = new Set(['3F000', '42P01', '40001']);

function isRetiredSnapshotFailure(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && RETIRED_SNAPSHOT_CODES.has(code);
}

function isRecoveryConflict(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === '40001';
}

function asDatabaseUnavailable(error: unknown): DatabaseUnavailableError {
  return error instanceof DatabaseUnavailableError ? error : new DatabaseUnavailableError(error);
}
