/**
 * How a PostgreSQL snapshot is published so that a refresh is atomic for every reader.
 *
 * The schema a URL names (`?schema=nyc311`, the "served schema") holds one table, snapshot_pointer,
 * whose single row names the schema of the snapshot now served. Each load writes a schema of its own
 * (`nyc311__snapshot_7`), which is never changed after its commit; the same transaction points the
 * pointer at it. The service reads the pointer, then sends every statement to that one schema, so a
 * page is never read from two snapshots, and it notices a new pointer without a restart.
 *
 * The served schema also holds one view per snapshot table onto the snapshot now served, replaced in
 * the same transaction: `nyc311.service_requests` keeps meaning "the current snapshot" for psql and
 * other readers that name the served schema.
 *
 * The previous snapshot's schema is kept, so that a reader still on it (it notices the new pointer
 * within a poll) finishes its statements; older ones are dropped after each load. A hot standby
 * replays these drops without conflict, since no reader is on them any longer.
 */
import { hash } from 'node:crypto';
import type pg from 'pg';
import { quoteIdentifier } from '../shared/postgres-schema.js';
import type { PostgresQueryable } from './snapshot-readers.js';

export const SNAPSHOT_POINTER_TABLE = 'snapshot_pointer';

/** The snapshot a served schema points at. */
export interface ServedSnapshot {
  /** The schema holding the snapshot's tables. */
  schema: string;
  snapshotId: string;
}

/** Prefix of the snapshot schemas of a served schema, short enough for PostgreSQL's 63-character names. */
function snapshotSchemaPrefix(servedSchema: string): string {
  const base = servedSchema.length <= 40 ? servedSchema : `${servedSchema.slice(0, 31)}_${hash('sha256', servedSchema).slice(0, 8)}`;
  return `${base}__snapshot_`;
}

/** The schema of the `loadNumber`-th load into a served schema. */
export function snapshotSchemaName(servedSchema: string, loadNumber: number): string {
  return `${snapshotSchemaPrefix(servedSchema)}${loadNumber}`;
}

const pointerTable = (servedSchema: string): string => `${quoteIdentifier(servedSchema)}.${SNAPSHOT_POINTER_TABLE}`;

/** The statement reading the pointer (the service polls it). */
export function servedSnapshotSql(servedSchema: string): string {
  return `SELECT schema_name, snapshot_id FROM ${pointerTable(servedSchema)} WHERE id = 1`;
}

/** The snapshot the served schema points at; null when nothing was published there yet. */
export async function readServedSnapshot(db: PostgresQueryable, servedSchema: string): Promise<ServedSnapshot | null> {
  const result = await db.query<{ schema_name: string; snapshot_id: string }>(servedSnapshotSql(servedSchema));
  const row = result.rows[0];
  return row === undefined ? null : { schema: row.schema_name, snapshotId: row.snapshot_id };
}

/**
 * Inside the loading transaction, before the load: makes sure the served schema and its pointer exist,
 * waits for any other load into the same served schema (a transaction-level advisory lock, so two
 * loads cannot pick the same number), and creates the new snapshot schema. Returns its name.
 */
export async function beginSnapshotSchema(client: pg.ClientBase, servedSchema: string): Promise<string> {
  await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdentifier(servedSchema)}`);
  await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`snapshot load ${servedSchema}`]);
  await client.query(
    `CREATE TABLE IF NOT EXISTS ${pointerTable(servedSchema)} (
  id integer PRIMARY KEY CHECK (id = 1),
  schema_name text NOT NULL,
  snapshot_id text NOT NULL,
  load_number integer NOT NULL,
  previous_schema_name text
)`,
  );
  const { rows } = await client.query<{ load_number: number }>(`SELECT load_number FROM ${pointerTable(servedSchema)} WHERE id = 1`);
  const schema = snapshotSchemaName(servedSchema, (rows[0]?.load_number ?? 0) + 1);
  // A schema of that name can only be left from a load that committed no pointer to it.
  await client.query(`DROP SCHEMA IF EXISTS ${quoteIdentifier(schema)} CASCADE`);
  await client.query(`CREATE SCHEMA ${quoteIdentifier(schema)}`);
  return schema;
}

/**
 * Inside the loading transaction, once the new snapshot schema is complete: points the pointer and
 * the served schema's views at it. The commit publishes all of it at once.
 */
export async function publishSnapshotSchema(client: pg.ClientBase, servedSchema: string, schema: string, snapshotId: string): Promise<void> {
  const served = quoteIdentifier(servedSchema);
  // The served schema's relations other than the pointer: views of the previous publication, or the
  // tables of a snapshot loaded before snapshots were published through a pointer.
  const { rows: relations } = await client.query<{ relname: string; relkind: string }>(
    `SELECT relname, relkind FROM pg_class WHERE relnamespace = $1::regnamespace AND relkind IN ('r', 'p', 'v') AND relname <> $2`,
    // The name quoted: regnamespace folds an unquoted name to lower case.
    [quoteIdentifier(servedSchema), SNAPSHOT_POINTER_TABLE],
  );
  for (const { relname, relkind } of relations) {
    await client.query(`DROP ${relkind === 'v' ? 'VIEW' : 'TABLE'} IF EXISTS ${served}.${quoteIdentifier(relname)} CASCADE`);
  }
  const { rows: tables } = await client.query<{ tablename: string }>(`SELECT tablename FROM pg_tables WHERE schemaname = $1 ORDER BY tablename`, [schema]);
  for (const { tablename } of tables) {
    const name = quoteIdentifier(tablename);
    await client.query(`CREATE VIEW ${served}.${name} AS SELECT * FROM ${quoteIdentifier(schema)}.${name}`);
  }
  const number = Number(schema.slice(snapshotSchemaPrefix(servedSchema).length));
  await client.query(
    `INSERT INTO ${pointerTable(servedSchema)} (id, schema_name, snapshot_id, load_number, previous_schema_name) VALUES (1, $1, $2, $3, NULL)
     ON CONFLICT (id) DO UPDATE SET previous_schema_name = ${pointerTable(servedSchema)}.schema_name,
       schema_name = EXCLUDED.schema_name, snapshot_id = EXCLUDED.snapshot_id, load_number = EXCLUDED.load_number`,
    [schema, snapshotId, number],
  );
}

/**
 * After the commit: drops the snapshot schemas of the served schema other than the current and the
 * previous one (a reader may still finish a page on the previous one). Each in its own transaction,
 * so that a reader holding one only delays that drop.
 */
export async function dropRetiredSnapshotSchemas(client: pg.ClientBase, servedSchema: string): Promise<string[]> {
  const { rows } = await client.query<{ nspname: string }>(
    `SELECT nspname FROM pg_namespace
     WHERE starts_with(nspname, $1)
       AND nspname NOT IN (SELECT schema_name FROM ${pointerTable(servedSchema)} UNION ALL SELECT previous_schema_name FROM ${pointerTable(servedSchema)} WHERE previous_schema_name IS NOT NULL)`,
    [snapshotSchemaPrefix(servedSchema)],
  );
  for (const { nspname } of rows) await client.query(`DROP SCHEMA IF EXISTS ${quoteIdentifier(nspname)} CASCADE`);
  return rows.map((row) => row.nspname);
}

/** Drops a served schema with every snapshot schema loaded into it (tests, benchmarks, an operator's clean-up). */
export async function dropServedSchema(db: PostgresQueryable, servedSchema: string): Promise<void> {
  const { rows } = await db.query<{ nspname: string }>(`SELECT nspname FROM pg_namespace WHERE starts_with(nspname, $1)`, [snapshotSchemaPrefix(servedSchema)]);
  for (const { nspname } of rows) await db.query(`DROP SCHEMA IF EXISTS ${quoteIdentifier(nspname)} CASCADE`);
  await db.query(`DROP SCHEMA IF EXISTS ${quoteIdentifier(servedSchema)} CASCADE`);
}
