import Database from 'better-sqlite3';
import { getByIdSql, listSqlFor, listStatementFor } from './list-query.js';
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
  cleaningRulesSql,
  complaintTypeCountsSql,
  dailyScopeParameters,
  dailyStatsSql,
  emptyDays,
  metaSql,
  periodSql,
  snapshotIdSql,
  toComplaintTypeCounts,
  toDataset,
  type CleaningRuleRow,
  type MetaRow,
} from './snapshot-tables.js';

const identity = (table: string): string => table;

/**
 * The snapshot in a SQLite file (better-sqlite3), opened read-only. The file is opened on first use
 * (and again after a failure), so that a missing or broken file answers 503 instead of stopping the
 * service. Statements are prepared once: one per filter combination for the list.
 */
export class SqliteServiceRequestStore implements ServiceRequestStore {
  private database: Database.Database | null = null;
  private readonly listStatements = new Map<number, Database.Statement>();
  private readonly statements = new Map<string, Database.Statement>();
  private cachedSnapshotId: string | null = null;
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

  listPage(query: ListPageQuery): Promise<ServiceRequestRecord[]> {
    return this.read((database) => {
      const { mask, parameters } = listStatementFor(query);
      let statement = this.listStatements.get(mask);
      if (!statement) {
        statement = database.prepare(listSqlFor(mask, 'service_requests'));
        this.listStatements.set(mask, statement);
      }
      return statement.all(...parameters) as ServiceRequestRecord[];
    });
  }

  getById(id: number): Promise<ServiceRequestRecord | null> {
    return this.read(() => (this.statement(getByIdSql('service_requests')).get(id) as ServiceRequestRecord | undefined) ?? null);
  }

  complaintTypeCounts(): Promise<ComplaintTypeCountRecord[]> {
    return this.read(() => toComplaintTypeCounts(this.statement(complaintTypeCountsSql(identity)).all() as never));
  }

  dailyStats(scope: DailyScope): Promise<DailyStatRecord[]> {
    return this.read(() => {
      const rows = this.statement(dailyStatsSql(identity)).all(...dailyScopeParameters(scope)) as DailyStatRecord[];
      if (rows.length > 0) return rows;
      const period = this.statement(periodSql(identity)).get() as { period_start: string; period_end: string } | undefined;
      return period ? emptyDays(period.period_start, period.period_end) : [];
    });
  }

  dataset(): Promise<DatasetRecord> {
    return this.read(() => {
      const meta = this.statement(metaSql(identity)).get() as MetaRow | undefined;
      if (!meta) throw new Error('snapshot_meta is empty');
      return toDataset(meta, this.statement(cleaningRulesSql(identity)).all() as CleaningRuleRow[]);
    });
  }

  snapshotId(): Promise<string> {
    if (this.cachedSnapshotId !== null) return Promise.resolve(this.cachedSnapshotId);
    return this.read(() => {
      const row = this.statement(snapshotIdSql(identity)).get() as { snapshot_id: string } | undefined;
      if (!row) throw new Error('snapshot_meta is empty');
      this.cachedSnapshotId = row.snapshot_id;
      return row.snapshot_id;
    });
  }

  ping(): Promise<void> {
    return this.read(() => {
      const row = this.statement(snapshotIdSql(identity)).get() as { snapshot_id: string } | undefined;
      if (!row) throw new Error('snapshot_meta is empty');
      this.statement('SELECT id FROM service_requests LIMIT 1').get();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    this.database?.close();
    this.database = null;
  }
}
