import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareSnapshot, writeSnapshot } from '../../../src/ingest/nyc311/build-snapshot.js';
import type { SnapshotContent, SnapshotStream } from '../../../src/ingest/nyc311/snapshot-content.js';
import { writeSnapshotOnThread } from '../../../src/ingest/nyc311/snapshot-writer-thread.js';
import { TEST_POSTGRES_URL, dropPostgresSchema } from '../../requests/support/fixture-database.js';

/**
 * The snapshot written through the writer thread against the snapshot written on one thread, from
 * the same content: every table the same, row for row, on both backends; and a failure on either
 * side stores nothing.
 */
const folder = mkdtempSync(join(tmpdir(), 'snapshot-writer-thread-'));
let content: SnapshotContent;
beforeAll(async () => {
  // 2,500 rows: more than two batches of the writer thread, and a last batch that is not full.
  ({ content } = await prepareSnapshot({ kind: 'synthetic', history: { rows: 2600, fromYear: 2024, toYear: 2025 } }, { applyFilters: false, threads: 0 }));
}, 60_000);
afterAll(() => rmSync(folder, { recursive: true, force: true }));

function streamOfContent(rows: Iterable<(typeof content.rows)[number]>): SnapshotStream {
  return { rows, rowsExpected: content.rows.length, summaries: () => content };
}

/** Every table of a SQLite file, its rows in order of all their columns. */
function sqliteTables(path: string): Record<string, unknown[]> {
  const db = new Database(path, { readonly: true });
  try {
    const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as { name: string }[]).map((t) => t.name);
    return Object.fromEntries(
      tables.map((table) => {
        const width = db.prepare(`PRAGMA table_info(${table})`).all().length;
        const order = Array.from({ length: width }, (_, i) => i + 1).join(', ');
        return [table, db.prepare(`SELECT * FROM ${table} ORDER BY ${order}`).raw(true).all()];
      }),
    );
  } finally {
    db.close();
  }
}

/** Every table of a served PostgreSQL schema, as the text of its rows in order. */
async function postgresTables(schema: string): Promise<Record<string, string[]>> {
  const client = new pg.Client({ connectionString: TEST_POSTGRES_URL });
  await client.connect();
  try {
    const tables = ['service_requests', 'daily_stats', 'complaint_type_counts', 'cleaning_rules', 'snapshot_meta', 'summary_buckets', 'summary_facets'];
    const out: Record<string, string[]> = {};
    for (const table of tables) {
      const { rows } = await client.query<{ row: string }>(`SELECT t::text AS row FROM "${schema}".${table} t ORDER BY 1`);
      out[table] = rows.map((r) => r.row);
    }
    return out;
  } finally {
    await client.end();
  }
}

describe('the snapshot writer thread', () => {
  it('writes the SQLite file of the writer on one thread, table for table and row for row, and reports its progress to the end', async () => {
    const oneThread = join(folder, 'one-thread.sqlite');
    const onThread = join(folder, 'on-thread.sqlite');
    await writeSnapshot({ kind: 'sqlite', path: oneThread }, content);
    const progress: number[] = [];
    await writeSnapshotOnThread({ kind: 'sqlite', path: onThread }, streamOfContent(content.rows), (written) => progress.push(written));
    expect(sqliteTables(onThread)).toEqual(sqliteTables(oneThread));
    expect(progress.at(-1)).toBe(content.rows.length);
  }, 60_000);

  it('loads the PostgreSQL schema of the writer on one thread, table for table and row for row', async () => {
    const schemas = [`writer_one_${process.pid}`, `writer_thread_${process.pid}`] as const;
    try {
      const url = (schema: string): string => `${TEST_POSTGRES_URL}${TEST_POSTGRES_URL.includes('?') ? '&' : '?'}schema=${schema}`;
      await writeSnapshot({ kind: 'postgres', url: url(schemas[0]) }, content);
      await writeSnapshotOnThread({ kind: 'postgres', url: url(schemas[1]) }, streamOfContent(content.rows));
      expect(await postgresTables(schemas[1])).toEqual(await postgresTables(schemas[0]));
    } finally {
      for (const schema of schemas) await dropPostgresSchema(schema);
    }
  }, 60_000);

  it('a failure while the rows are read stops the writer, and no file is left', async () => {
    const path = join(folder, 'failed', 'snapshot.sqlite');
    function* failingRows(): Generator<(typeof content.rows)[number]> {
      yield* content.rows.slice(0, 1500);
      throw new Error('the stage could not be read');
    }
    await expect(writeSnapshotOnThread({ kind: 'sqlite', path }, streamOfContent(failingRows()))).rejects.toThrow('the stage could not be read');
    expect(readdirSync(join(folder, 'failed'))).toEqual([]);
  }, 30_000);

  it("the writer's failure is the command's", async () => {
    const path = join(folder, 'a-file', 'snapshot.sqlite');
    await writeSnapshot({ kind: 'sqlite', path: join(folder, 'a-file') }, content);
    await expect(writeSnapshotOnThread({ kind: 'sqlite', path }, streamOfContent(content.rows))).rejects.toThrow(/EEXIST|ENOTDIR/);
  }, 30_000);
});
