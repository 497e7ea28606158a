import { createRequire } from 'node:module';
import type pg from 'pg';
import type { DayOpenings, FacetColumn, ValueCount } from './service-request-store.js';
import type { FilterValue, ListFilters } from './list-filters.js';
import { countQuery, facetQuery, listIdsQuery, numberPlaceholders, openingsByDayQuery, postgresRowsByIdSql, type WhereClause } from './list-query.js';
import {
  DatabaseUnavailableError,
  type ComplaintTypeCountRecord,
  type DailyScope,
  type DailyStatRecord,
  type DatasetRecord,
  type ListPageQuery,
  type ServiceRequestRecord,
  type ServiceRequestStore,
} from './service-request-store.js';
import {
  readComplaintTypeCountsFromPostgres,
  readDailyStatsFromPostgres,
  readSnapshotMetaFromPostgres,
} from '../../ingest/nyc311/index.js';
import type { SnapshotMeta } from '../../ingest/nyc311/index.js';
import { quoteIdentifier } from '../../shared/postgres-schema.js';
import { AggregateSummaries } from './summary-answers.js';
import type { BucketSummary } from './period-stats.js';
import type { SummaryUnit } from '../../ingest/nyc311/aggregate-summaries.js';
import { readinessSql, toComplaintTypeCountRecords, toDailyStatRecords, toDatasetRecord } from './snapshot-tables.js';

export interface PostgresStoreOptions {
  url: string;
  /** Schema of the snapshot tables. */
  schema: string;
  /** Connections in the pool (default 10). */
  maxConnections?: number;
}

/**
 * The snapshot in PostgreSQL (pg Pool). Sessions are read-only (default_transaction_read_only), each
 * statement has a time limit, and statements are named so that each connection prepares each text
 * once (one per filter combination for the list). Any failure becomes DatabaseUnavailableError.
 */
export class PostgresServiceRequestStore implements ServiceRequestStore {
  private readonly pool: pg.Pool;
  private readonly table: (name: string) => string;
  private readonly schema: string;
  /** The metadata, read once: the snapshot is frozen. */
  private meta: SnapshotMeta | null = null;
  private readonly names = new Map<string, string>();
  /** Count, facets and statistics from the summary tables, where they hold the answer. */
  private readonly summaries = new AggregateSummaries((sql, parameters) => this.rows(this.inSchema(sql), parameters));

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
    const schema = options.schema;
    this.schema = schema;
    this.table = (name) => `${quoteIdentifier(schema)}.${name}`;
  }

  /** A stable statement name per SQL text (named statements are prepared once per connection). */
  private nameOf(text: string): string {
    let name = this.names.get(text);
    if (name === undefined) {
      name = `service_requests_${this.names.size}`;
      this.names.set(text, name);
    }
    return name;
  }

  private async rows<T>(sqlWithQuestionMarks: string, values: readonly (string | number | FilterValue[])[] = []): Promise<T[]> {
    const text = sqlWithQuestionMarks.includes('?') ? numberPlaceholders(sqlWithQuestionMarks) : sqlWithQuestionMarks;
    try {
      const result = await this.pool.query({ name: this.nameOf(text), text, values: [...values] });
      return result.rows as T[];
    } catch (error) {
      throw new DatabaseUnavailableError(error);
    }
  }

  private async rowsOf<T>(query: WhereClause): Promise<T[]> {
    return this.rows<T>(query.sql, query.parameters);
  }

  async listIds(query: ListPageQuery): Promise<number[]> {
    const rows = await this.rowsOf<{ id: number }>(listIdsQuery(query, this.table('service_requests')));
    return rows.map((row) => row.id);
  }

  /** The summary tables' names qualified by the snapshot's schema. */
  private inSchema(sql: string): string {
    return sql.replace(/\b(summary_buckets|summary_facets)\b/g, (name) => this.table(name));
  }

  async count(filters: ListFilters): Promise<number> {
    return (await this.summaries.count(filters)) ?? this.countRows(filters);
  }

  private async countRows(filters: ListFilters): Promise<number> {
    const [row] = await this.rowsOf<{ count: number }>(countQuery(filters, this.table('service_requests')));
    return row?.count ?? 0;
  }

  async facet(column: FacetColumn, filters: ListFilters): Promise<ValueCount[]> {
    return (await this.summaries.facet(column, filters)) ?? this.rowsOf<ValueCount>(facetQuery(column, filters, this.table('service_requests')));
  }

  periodSummaries(filters: ListFilters, unit: SummaryUnit): Promise<Map<string, BucketSummary> | null> {
    return this.summaries.periodBuckets(filters, unit);
  }

  async openingsByDay(filters: ListFilters): Promise<Map<string, DayOpenings>> {
    const rows = await this.rowsOf<{ day: string; opened: number; close_days: number[] }>(
      openingsByDayQuery(filters, this.table('service_requests')),
    );
    return new Map(rows.map((row) => [row.day, { opened: row.opened, closeDays: row.close_days }]));
  }

  async rowsById(ids: readonly number[]): Promise<ServiceRequestRecord[]> {
    // The column is a 4-byte integer: a larger id cannot exist (and would be an error, not a miss).
    const possible = ids.filter((id) => Number.isSafeInteger(id) && id >= -2_147_483_648 && id <= 2_147_483_647);
    if (possible.length === 0) return [];
    return this.rows<ServiceRequestRecord>(postgresRowsByIdSql(this.table('service_requests')), [possible]);
  }

  /** A read through the snapshot builder's readers; any failure becomes DatabaseUnavailableError. */
  private async viaReaders<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      throw error instanceof DatabaseUnavailableError ? error : new DatabaseUnavailableError(error);
    }
  }

  private async snapshotMeta(): Promise<SnapshotMeta> {
    this.meta ??= await this.viaReaders(() => readSnapshotMetaFromPostgres(this.pool, this.schema));
    return this.meta;
  }

  async complaintTypeCounts(): Promise<ComplaintTypeCountRecord[]> {
    return toComplaintTypeCountRecords(await this.viaReaders(() => readComplaintTypeCountsFromPostgres(this.pool, this.schema)));
  }

  async dailyStats(scope: DailyScope): Promise<DailyStatRecord[]> {
    const meta = await this.snapshotMeta();
    const stats = await this.viaReaders(() =>
      readDailyStatsFromPostgres(
        this.pool,
        this.schema,
        { borough: (scope.borough ?? undefined) as never, complaintType: scope.complaint_type ?? undefined },
        meta,
      ),
    );
    return toDailyStatRecords(stats, meta.snapshot_date);
  }

  async dataset(): Promise<DatasetRecord> {
    return toDatasetRecord(await this.viaReaders(() => readSnapshotMetaFromPostgres(this.pool, this.schema)));
  }

  async snapshotId(): Promise<string> {
    return (await this.snapshotMeta()).snapshot_id;
  }

  poolUse(): { total: number; idle: number; waiting: number } {
    return { total: this.pool.totalCount, idle: this.pool.idleCount, waiting: this.pool.waitingCount };
  }

  /** Nothing is kept ahead: PostgreSQL answers each page from its indexes. */
  async warmUp(): Promise<void> {}

  async ping(): Promise<void> {
    for (const sql of readinessSql(this.table)) await this.rows(sql);
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
