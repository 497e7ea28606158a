import Database from 'better-sqlite3';
import { KeysetIndex, KeysetIndexBuilder, type CodedColumn, type DayOpenings, type KeysetRow, type ValueCount } from './keyset-index.js';
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

/** A row of keysetRowsSql as an array: its columns in the order of the query. */
type KeysetValues = [
  id: number,
  created_at: string,
  borough: string | null,
  complaint_type: string | null,
  status: string,
  channel: string | null,
  council_district: number | null,
  incident_zip: string | null,
  descriptor: string | null,
  location_type: string | null,
  latitude: number | null,
  longitude: number | null,
  days_to_close: number | null,
];

function keysetRowOf(values: KeysetValues): KeysetRow {
  const [id, created_at, borough, complaint_type, status, channel, council_district, incident_zip, descriptor, location_type, latitude, longitude, days_to_close] = values;
  return { id, created_at, borough, complaint_type, status, channel, council_district, incident_zip, descriptor, location_type, latitude, longitude, days_to_close };
}

/** Rows of the keyset index read per turn of the event loop: about 10 to 20 ms of work each. */
export const KEYSET_BATCH_ROWS = 4096;

/**
 * The snapshot in a SQLite file (better-sqlite3), opened read-only. The file is opened on first use
 * (and again after a failure), so that a missing or broken file answers 503 instead of stopping the
 * service. Statements are prepared once. List pages come from a keyset index of the file's rows in
 * memory (keyset-index.ts), read again whenever the file says that another connection changed it
 * (sqlite-file-changes.ts): a snapshot is frozen, but rule 4 of the contract must hold if rows leave
 * the set between two pages. The index is read in batches of rows, one per turn of the event loop, so
 * that the service answers its other requests (/health first) meanwhile; the requests that need it
 * (list pages, count, facets, statistics from rows, exports) wait for it; /ready's ping does not. A
 * batch that finds the file changed since the first starts the reading again, so that the index is
 * always one version of the file.
 */
export class SqliteServiceRequestStore implements ServiceRequestStore {
  private database: Database.Database | null = null;
  private changes: SqliteFileChanges | null = null;
  private keysetIndex: KeysetIndex | null = null;
  /** The file's version when the keyset index was read. */
  private keysetIndexVersion = 0;
  /** The reading of the keyset index under way, if any. */
  private keysetReading: Promise<KeysetIndex> | null = null;
  private readonly statements = new Map<string, Database.Statement>();
  /** The metadata of the file open, read once: a snapshot file is frozen. */
  private meta: SnapshotMeta | null = null;
  private closed = false;
  private readonly snapshotListeners: (() => void)[] = [];

  /** `keysetBatchRows`: rows of the keyset index read per turn of the event loop (tests make it small). */
  constructor(
    readonly path: string,
    private readonly keysetBatchRows = KEYSET_BATCH_ROWS,
  ) {}

  private open(): Database.Database {
    if (this.closed) throw new Error('the store is closed');
    if (this.database !== null && this.database.open && this.changes?.replaced() === true) {
      // A refresh renamed a new snapshot onto the path: everything kept of the old file goes with it.
      this.database.close();
      this.database = null;
      for (const listener of this.snapshotListeners) listener();
    }
    if (this.database === null || !this.database.open) {
      this.keysetIndex = null;
      this.meta = null;
      this.statements.clear();
      this.changes?.close();
      this.changes = null;
      this.database = new Database(this.path, { readonly: true, fileMustExist: true });
      this.database.pragma('query_only = ON');
      this.changes = new SqliteFileChanges(this.path, this.database);
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

  private statement(sql: string): Database.Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.open().prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  /** The keyset index when it is read and the file has not changed since; null otherwise. */
  private currentIndex(): KeysetIndex | null {
    this.open();
    if (this.changes === null) throw new Error('the store is not open');
    return this.keysetIndex !== null && this.changes.version() === this.keysetIndexVersion ? this.keysetIndex : null;
  }

  /** Runs work on the keyset index: at once when it is current, after (re)reading it otherwise. */
  private withIndex<T>(work: (index: KeysetIndex) => T): Promise<T> {
    try {
      const index = this.currentIndex();
      if (index !== null) return Promise.resolve(work(index));
    } catch (error) {
      return Promise.reject(new DatabaseUnavailableError(error));
    }
    return this.readIndex()
      .then(work)
      .catch((error: unknown) => Promise.reject(error instanceof DatabaseUnavailableError ? error : new DatabaseUnavailableError(error)));
  }

  /** Reads the keyset index (one reading at a time, shared by every request waiting for it). */
  private readIndex(): Promise<KeysetIndex> {
    this.keysetReading ??= this.readIndexInBatches().finally(() => {
      this.keysetReading = null;
    });
    return this.keysetReading;
  }

  private async readIndexInBatches(): Promise<KeysetIndex> {
    for (;;) {
      const database = this.open();
      const changes = this.changes;
      if (changes === null) throw new Error('the store is not open');
      const version = changes.version();
      // Rows as arrays (raw): better-sqlite3 makes them in about half the time of objects.
      const first = database.prepare(keysetRowsSql('service_requests', false)).raw();
      const next = database.prepare(keysetRowsSql('service_requests', true)).raw();
      const builder = new KeysetIndexBuilder();
      let unchanged = true;
      for (;;) {
        const last = builder.last;
        const rows = (last === null ? first.all(this.keysetBatchRows) : next.all(last.created_at, last.id, this.keysetBatchRows)) as KeysetValues[];
        for (const row of rows) builder.add(keysetRowOf(row));
        if (rows.length < this.keysetBatchRows) break;
        await new Promise((resolveTurn) => setImmediate(resolveTurn));
        if (this.closed) throw new Error('the store is closed');
        // Another connection (or a reopening after a failure) may have changed what is read.
        if (this.database !== database || this.open() !== database || changes.version() !== version) {
          unchanged = false;
          break;
        }
      }
      if (!unchanged) continue;
      const index = new KeysetIndex(builder);
      this.keysetIndex = index;
      this.keysetIndexVersion = version;
      return index;
    }
  }

  listIds(query: ListPageQuery): Promise<number[]> {
    return this.withIndex((index) => index.pageIds(query));
  }

  count(filters: ListFilters): Promise<number> {
    return this.withIndex((index) => index.count(filters));
  }

  facet(column: CodedColumn, filters: ListFilters): Promise<ValueCount[]> {
    return this.withIndex((index) => index.facet(column, filters));
  }

  openingsByDay(filters: ListFilters): Promise<Map<string, DayOpenings>> {
    return this.withIndex((index) => index.openingsByDay(filters));
  }

  /** Starts reading the keyset index (the service calls it once it listens); resolves when it is read. */
  warmUp(): Promise<void> {
    return this.withIndex(() => undefined);
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

  /** Of the file open now: a file renamed onto the path is opened first (a refresh). */
  snapshotId(): Promise<string> {
    return this.read((database) => this.snapshotMeta(database).snapshot_id);
  }

  /**
   * The file can be read (the contract's readiness). The keyset index is not waited for: the requests
   * that need it wait for it themselves; a ping starts reading it when it is not current.
   */
  ping(): Promise<void> {
    return this.read(() => {
      for (const sql of READINESS_SQL) this.statement(sql).get();
      if (this.currentIndex() === null) this.readIndex().catch(() => undefined);
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
