import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeSnapshot } from '../../../src/ingest/nyc311/build-snapshot.js';
import type { SnapshotContent } from '../../../src/ingest/nyc311/snapshot-content.js';
import { writeSnapshotOnThread } from '../../../src/ingest/nyc311/snapshot-writer-thread.js';
import { streamOfContent, writerThreadContent } from './writer-thread-content.js';

/**
 * The snapshot written through the writer thread against the snapshot written on one thread, from
 * the same content: every table the same, row for row (SQLite here; PostgreSQL in
 * snapshot-writer-thread.server.test.ts); and a failure on either side stores nothing.
 */
const folder = mkdtempSync(join(tmpdir(), 'snapshot-writer-thread-'));
let content: SnapshotContent;
beforeAll(async () => {
  content = await writerThreadContent();
}, 60_000);
afterAll(() => rmSync(folder, { recursive: true, force: true }));

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

describe('the snapshot writer thread', () => {
  it('writes the SQLite file of the writer on one thread, table for table and row for row, and reports its progress to the end', async () => {
    const oneThread = join(folder, 'one-thread.sqlite');
    const onThread = join(folder, 'on-thread.sqlite');
    await writeSnapshot({ kind: 'sqlite', path: oneThread }, content);
    const progress: number[] = [];
    await writeSnapshotOnThread({ kind: 'sqlite', path: onThread }, streamOfContent(content), (written) => progress.push(written));
    expect(sqliteTables(onThread)).toEqual(sqliteTables(oneThread));
    expect(progress.at(-1)).toBe(content.rows.length);
  }, 60_000);

  it('a failure while the rows are read stops the writer, and no file is left', async () => {
    const path = join(folder, 'failed', 'snapshot.sqlite');
    function* failingRows(): Generator<(typeof content.rows)[number]> {
      yield* content.rows.slice(0, 1500);
      throw new Error('the stage could not be read');
    }
    await expect(writeSnapshotOnThread({ kind: 'sqlite', path }, streamOfContent(content, failingRows()))).rejects.toThrow('the stage could not be read');
    expect(readdirSync(join(folder, 'failed'))).toEqual([]);
  }, 30_000);

  it("the writer's failure is the command's", async () => {
    const path = join(folder, 'a-file', 'snapshot.sqlite');
    await writeSnapshot({ kind: 'sqlite', path: join(folder, 'a-file') }, content);
    await expect(writeSnapshotOnThread({ kind: 'sqlite', path }, streamOfContent(content))).rejects.toThrow(/EEXIST|ENOTDIR/);
  }, 30_000);
});
