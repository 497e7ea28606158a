/**
 * Loads the row columns of the SQLite snapshot open (row-columns-memory.ts), once per file, a chunk at
 * a time with a turn of the event loop between a few milliseconds of copying, so that loading 5
 * million rows never holds the loop. A file without row columns (or with unusable ones) has none: its
 * walks read the rows.
 */
import Database from 'better-sqlite3';
import { setImmediate as turn } from 'node:timers/promises';
import { ROW_COLUMN_VALUES_TABLE, ROW_COLUMNS_TABLE } from '../../../snapshot/index.js';
import { listLateClosings } from './late-closings.js';
import { COPY_SLICE_MS, RowColumnsAssembly, isStoredColumn, type RowColumns, type StoredChunk, type StoredValue } from './row-columns-memory.js';

/**
 * Loads the row columns of the open file; null when it has none, they do not match its format, or
 * they would take more than `maxBytes`. `stillOpen` is asked after each turn and at the end: false
 * (the file was replaced or closed) stops the load.
 */
export async function loadSqliteRowColumns(database: Database.Database, stillOpen: () => boolean, maxBytes = Number.POSITIVE_INFINITY): Promise<RowColumns | null> {
  const hasTables = database.prepare(`SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name IN (?, ?)`).get(ROW_COLUMNS_TABLE, ROW_COLUMN_VALUES_TABLE) as { n: number };
  if (hasTables.n !== 2) return null;
  const assembly = RowColumnsAssembly.begin(
    database.prepare(`SELECT column_name, code, value FROM ${ROW_COLUMN_VALUES_TABLE} ORDER BY column_name, code`).all() as StoredValue[],
    database.prepare(`SELECT column_name, chunk, row_count, bytes_per_row FROM ${ROW_COLUMNS_TABLE} ORDER BY column_name, chunk`).all() as StoredChunk[],
    maxBytes,
  );
  if (assembly === null) return null;

  // The chunks are read in one pass of the table (several times faster than a lookup per chunk) on a
  // connection of their own, so that the pass can stay open between turns of the event loop; it must
  // see the file `database` sees (a refresh may rename another one onto the path meanwhile).
  let finished: RowColumns | null = null;
  let reader: Database.Database | null = null;
  try {
    reader = new Database(database.name, { readonly: true, fileMustExist: true });
    const idOf = (connection: Database.Database): unknown => connection.prepare('SELECT snapshot_id FROM snapshot_meta').pluck().get();
    if (idOf(reader) !== idOf(database)) return null;
    let sliceStarted = performance.now();
    const pass = reader.prepare(`SELECT column_name, chunk, row_count, bytes_per_row, data FROM ${ROW_COLUMNS_TABLE} ORDER BY column_name, chunk`);
    for (const chunk of pass.iterate() as IterableIterator<StoredChunk & { data: Buffer }>) {
      if (!isStoredColumn(chunk.column_name)) continue;
      if (!assembly.copy(chunk)) return null;
      if (performance.now() - sliceStarted > COPY_SLICE_MS) {
        await turn();
        if (!stillOpen()) return null;
        sliceStarted = performance.now();
      }
    }
    if (!stillOpen()) return null;
    const columns = assembly.finish();
    columns.lateClosings = await listLateClosings(columns, columns.rows);
    if (stillOpen()) finished = columns;
    return finished;
  } finally {
    reader?.close();
    if (finished === null) assembly.abandon();
  }
}
