import Database from 'better-sqlite3';
import { listSqlFor, listStatementFor, sqliteRowsByIdSql } from './list-query.js';
import type { CursorPosition } from './cursor.js';
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
import { readComplaintTypeCounts, readDailyStats, readSnapshotMeta } from './snapshot/snapshot-readers.js';
import type { SnapshotMeta } from './snapshot/service-request.js';
import { readinessSql, toComplaintTypeCountRecords, toDailyStatRecords, toDatasetRecord } from './snapshot-tables.js';

const READINESS_SQL = readinessSql((table) => table);

/**
 * The snapshot in a SQLite file (better-sqlite3), opened read-only. The file is opened on first use
 * (and again after a failure), so that a missing or broken file answers 503 instead of stopping the
 * service. Statements are prepared once: one per filter combination for the list.
 */
export class SqliteServiceRequestStore implements ServiceRequestStore {
  private database: Database.Database | null = null;
  private readonly listStatements = new Map<number, Database.Statement>();
  private readonly statements = new Map<string, Database.Statement>();
  /** The metadata, read once: the snapshot is frozen. */
  private meta: SnapshotMeta | null = null;
  private closed = false;

  constructor(readonly path: string) {}

  private open(): Database.Database {
    if (this.closed) throw new Error('the store is closed');
    if (this.database === null || !this.database.open) {
      this.listStatements.clear();
      this.statements.clear();
      this.database = new Database(this.path, { readonly: true, fileMustExist: true });
      this.database.pragma('query_only = ON');
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

  listPositions(query: ListPageQuery): Promise<CursorPosition[]> {
    return this.read((database) => {
      const { mask, parameters } = listStatementFor(query);
      let statement = this.listStatements.get(mask);
      if (!statement) {
        statement = database.prepare(listSqlFor(mask, 'service_requests', 'sqlite'));
        this.listStatements.set(mask, statement);
      }
      return statement.all(...parameters) as CursorPosition[];
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
    return this.read((database) =>
      toDailyStatRecords(
        readDailyStats(
          database,
          { borough: (scope.borough ?? undefined) as never, complaintType: scope.complaint_type ?? undefined },
          this.snapshotMeta(database),
        ),
      ),
    );
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

  async close(): Promise<void> {
    this.closed = true;
    this.database?.close();
    this.database = null;
  }
}
