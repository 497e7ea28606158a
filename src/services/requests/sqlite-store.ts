import Database from 'better-sqlite3';
import { KeysetIndex, type CodedColumn, type DayOpenings, type KeysetRow, type ValueCount } from './keyset-index.js';
import type { ListFilters } from './list-filters.js';
import { SqliteFileChanges } from './sqlite-file-changes.js';
import { keysetRowsSql, sqliteRowsByIdSql } from './list-query.js';
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
import { readComplaintTypeCounts, readDailyStats, readSnapshotMeta } from '../../ingest/nyc311/index.js';
import type { SnapshotMeta } from '../../ingest/nyc311/index.js';
import { readinessSql, toComplaintTypeCountRecords, toDailyStatRecords, toDatasetRecord } from './snapshot-tables.js';

const READINESS_SQL = readinessSql((table) => table);

/**
 * The snapshot in a SQLite file (better-sqlite3), opened read-only. The file is opened on first use
 * (and again after a failure), so that a missing or broken file answers 503 instead of stopping the
 * service. Statements are prepared once. List pages come from a keyset index of the file's rows in
 * memory (keyset-index.ts), read again whenever the file says that another connection changed it
 * (sqlite-file-changes.ts): a snapshot is frozen, but rule 4 of the contract must hold if rows leave
 * the set between two pages.
 */
export class SqliteServiceRequestStore implements ServiceRequestStore {
  private database: Database.Database | null = null;
  private changes: SqliteFileChanges | null = null;
  private keysetIndex: KeysetIndex | null = null;
  /** The file's version when the keyset index was read. */
  private keysetIndexVersion = 0;
  private readonly statements = new Map<string, Database.Statement>();
  /** The metadata, read once: the snapshot is frozen. */
  private meta: SnapshotMeta | null = null;
  private closed = false;

  constructor(readonly path: string) {}

  private open(): Database.Database {
    if (this.closed) throw new Error('the store is closed');
    if (this.database === null || !this.database.open) {
      this.keysetIndex = null;
      this.statements.clear();
      this.changes?.close();
      this.changes = null;
      this.database = new Database(this.path, { readonly: true, fileMustExist: true });
      this.database.pragma('query_only = ON');
      this.changes = new SqliteFileChanges(this.path, this.database);
    }
    return this.database;
  }

  /** Runs a read; any failure (missing file, corrupt file, missing table) becomes DatabaseUnavailableError. */
  private read<T>(work: (database: Database.Database) => T): Promise<T> {
    try {
      return Promise.resolve(work(this.open()));
    } catch (error) {
      return Promise.reject(new DatabaseUnavailableError(error));
    }
  }

  private statement(sql: string): Database.Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.open().prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  private index(database: Database.Database): KeysetIndex {
    if (this.changes === null) throw new Error('the store is not open');
    const version = this.changes.version();
    if (this.keysetIndex === null || version !== this.keysetIndexVersion) {
      this.keysetIndex = new KeysetIndex(database.prepare(keysetRowsSql('service_requests')).iterate() as IterableIterator<KeysetRow>);
      this.keysetIndexVersion = version;
    }
    return this.keysetIndex;
  }

  listIds(query: ListPageQuery): Promise<number[]> {
    return this.read((database) => this.index(database).pageIds(query));
  }

  count(filters: ListFilters): Promise<number> {
    return this.read((database) => this.index(database).count(filters));
  }

  facet(column: CodedColumn, filters: ListFilters): Promise<ValueCount[]> {
    return this.read((database) => this.index(database).facet(column, filters));
  }

  openingsByDay(filters: ListFilters): Promise<Map<string, DayOpenings>> {
    return this.read((database) => this.index(database).openingsByDay(filters));
  }

  warmUp(): Promise<void> {
    return this.read((database) => {
      this.index(database);
    });
  }

  rowsById(ids: readonly number[]): Promise<ServiceRequestRecord[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return this.read(() => this.statement(sqliteRowsByIdSql('service_requests')).all(JSON.stringify(ids)) as ServiceRequestRecord[]);
  }

  complaintTypeCounts(): Promise<ComplaintTypeCountRecord[]> {
    return this.read((database) => toComplaintTypeCountRecords(readComplaintTypeCounts(database)));
  }

  private snapshotMeta(database: Database.Database): SnapshotMeta {
    this.meta ??= readSnapshotMeta(database);
    return this.meta;
  }

  dailyStats(scope: DailyScope): Promise<DailyStatRecord[]> {
    return this.read((database) => {
      const meta = this.snapshotMeta(database);
      const scoped = { borough: (scope.borough ?? undefined) as never, complaintType: scope.complaint_type ?? undefined };
      return toDailyStatRecords(readDailyStats(database, scoped, meta), meta.snapshot_date);
    });
  }

  dataset(): Promise<DatasetRecord> {
    return this.read((database) => toDatasetRecord(readSnapshotMeta(database)));
  }

  snapshotId(): Promise<string> {
    if (this.meta !== null) return Promise.resolve(this.meta.snapshot_id);
    return this.read((database) => this.snapshotMeta(database).snapshot_id);
  }

  ping(): Promise<void> {
    return this.read(() => {
      for (const sql of READINESS_SQL) this.statement(sql).get();
    });
  }

  close(): Promise<void> {
    this.closed = true;
    this.database?.close();
    this.database = null;
    this.changes?.close();
    this.changes = null;
    return Promise.resolve();
  }
}
