import pg from 'pg';
import { getByIdSql, listSqlFor, listStatementFor, numberPlaceholders } from './list-query.js';
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

export interface PostgresStoreOptions {
  url: string;
  /** Schema of the snapshot tables; null: the connection's search path. */
  schema: string | null;
  /** Connections in the pool (default 10). */
  maxConnections?: number;
}

function quoteIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/**
 * The snapshot in PostgreSQL (pg Pool). Sessions are read-only (default_transaction_read_only), each
 * statement has a time limit, and statements are named so that each connection prepares each text
 * once (one per filter combination for the list). Any failure becomes DatabaseUnavailableError.
 */
export class PostgresServiceRequestStore implements ServiceRequestStore {
  private readonly pool: pg.Pool;
  private readonly table: (name: string) => string;
  private cachedSnapshotId: string | null = null;
  private readonly names = new Map<string, string>();

  constructor(options: PostgresStoreOptions) {
    this.pool = new pg.Pool({
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
    this.table = schema === null ? (name) => name : (name) => `${quoteIdentifier(schema)}.${name}`;
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

  private async rows<T>(sqlWithQuestionMarks: string, values: readonly (string | number)[] = []): Promise<T[]> {
    const text = numberPlaceholders(sqlWithQuestionMarks);
    try {
      const result = await this.pool.query({ name: this.nameOf(text), text, values: [...values] });
      return result.rows as T[];
    } catch (error) {
      throw new DatabaseUnavailableError(error);
    }
  }

  async listPage(query: ListPageQuery): Promise<ServiceRequestRecord[]> {
    const { mask, parameters } = listStatementFor(query);
    return this.rows<ServiceRequestRecord>(listSqlFor(mask, this.table('service_requests')), parameters);
  }

  async getById(id: number): Promise<ServiceRequestRecord | null> {
    // The column is a 4-byte integer: a larger id cannot exist (and would be an error, not a miss).
    if (!Number.isSafeInteger(id) || id < -2_147_483_648 || id > 2_147_483_647) return null;
    const rows = await this.rows<ServiceRequestRecord>(getByIdSql(this.table('service_requests')), [id]);
    return rows[0] ?? null;
  }

  async complaintTypeCounts(): Promise<ComplaintTypeCountRecord[]> {
    return toComplaintTypeCounts(await this.rows(complaintTypeCountsSql(this.table)));
  }

  async dailyStats(scope: DailyScope): Promise<DailyStatRecord[]> {
    const rows = await this.rows<DailyStatRecord>(dailyStatsSql(this.table), dailyScopeParameters(scope));
    if (rows.length > 0) return rows;
    const period = (await this.rows<{ period_start: string; period_end: string }>(periodSql(this.table)))[0];
    return period ? emptyDays(period.period_start, period.period_end) : [];
  }

  async dataset(): Promise<DatasetRecord> {
    const meta = (await this.rows<MetaRow>(metaSql(this.table)))[0];
    if (!meta) throw new DatabaseUnavailableError(new Error('snapshot_meta is empty'));
    return toDataset(meta, await this.rows<CleaningRuleRow>(cleaningRulesSql(this.table)));
  }

  async snapshotId(): Promise<string> {
    if (this.cachedSnapshotId !== null) return this.cachedSnapshotId;
    const row = (await this.rows<{ snapshot_id: string }>(snapshotIdSql(this.table)))[0];
    if (!row) throw new DatabaseUnavailableError(new Error('snapshot_meta is empty'));
    this.cachedSnapshotId = row.snapshot_id;
    return row.snapshot_id;
  }

  async ping(): Promise<void> {
    const row = (await this.rows<{ snapshot_id: string }>(snapshotIdSql(this.table)))[0];
    if (!row) throw new DatabaseUnavailableError(new Error('snapshot_meta is empty'));
    await this.rows(`SELECT id FROM ${this.table('service_requests')} LIMIT 1`);
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
