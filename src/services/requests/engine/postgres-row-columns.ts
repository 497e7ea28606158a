/**
 * Loads the row columns of a PostgreSQL snapshot schema (row-columns-memory.ts) once per snapshot:
 * the chunks come in one binary COPY (raw bytes, not bytea's hexadecimal text), and each piece of the
 * stream is copied straight into its chunk's place (then written to the columns' file) as it arrives, so that loading 5 million
 * rows never holds the event loop nor leaves megabytes of replies to collect. A snapshot without
 * row columns (or with unusable ones) has none: its count, facets and statistics are read by SQL.
 */
import type pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { ROW_COLUMN_VALUES_TABLE, ROW_COLUMNS_TABLE } from '../../../snapshot/index.js';
import { quoteIdentifier } from '../../../shared/postgres-schema.js';
import { listLateClosings } from './late-closings.js';
import { RowColumnsAssembly, isStoredColumn, type ChunkPlace, type RowColumns, type StoredChunk, type StoredValue } from './row-columns-memory.js';

/**
 * Loads the row columns of the snapshot schema; null when it has none, they do not match the format,
 * or they would take more than `maxBytes`. `stillServed` is asked as the chunks arrive: false
 * (another snapshot is served) stops the load. A failure of a statement rejects (the caller reads by
 * SQL then).
 */
export async function loadPostgresRowColumns(pool: pg.Pool, schema: string, stillServed: () => boolean, maxBytes = Number.POSITIVE_INFINITY): Promise<RowColumns | null> {
  const table = (name: string): string => `${quoteIdentifier(schema)}.${name}`;
  const { rows: found } = await pool.query<{ chunks: string | null; values: string | null }>('SELECT to_regclass($1) AS chunks, to_regclass($2) AS values', [
    table(ROW_COLUMNS_TABLE),
    table(ROW_COLUMN_VALUES_TABLE),
  ]);
  if (found[0]?.chunks == null || found[0].values == null) return null;
  const chunks = (await pool.query<StoredChunk>(`SELECT column_name, chunk, row_count, bytes_per_row FROM ${table(ROW_COLUMNS_TABLE)} ORDER BY column_name, chunk`)).rows;
  const values = (await pool.query<StoredValue>(`SELECT column_name, code, value FROM ${table(ROW_COLUMN_VALUES_TABLE)} ORDER BY column_name, code`)).rows;
  const assembly = RowColumnsAssembly.begin(values, chunks, maxBytes);
  if (assembly === null) return null;
  const expected = chunks.filter((chunk) => isStoredColumn(chunk.column_name)).length;
  const names = [...new Set(chunks.map((chunk) => chunk.column_name).filter(isStoredColumn))];

  let finished: RowColumns | null = null;
  try {
    const client = await pool.connect();
    // A connection is given back to the pool only after a whole COPY; one left in the middle is closed.
    let copied = false;
    try {
      const reader = new RowColumnCopyReader(assembly);
      const stream = client.query(copyTo(rowColumnsCopySql(schema, names)));
      for await (const piece of stream as AsyncIterable<Buffer>) {
        if (!reader.push(piece) || !stillServed()) {
          stream.destroy();
          return null;
        }
      }
      copied = true;
      if (!reader.finished(expected) || !stillServed()) return null;
    } finally {
      client.release(!copied);
    }
    const columns = assembly.finish();
    columns.lateClosings = await listLateClosings(columns, columns.rows);
    if (stillServed()) finished = columns;
    return finished;
  } finally {
    if (finished === null) assembly.abandon();
  }
}

/**
 * The binary COPY of the chunks of these columns, as RowColumnCopyReader reads it. The names are the
 * service's own columns (isStoredColumn): a COPY takes no parameters.
 */
export function rowColumnsCopySql(schema: string, columnNames: readonly string[]): string {
  const names = columnNames.filter(isStoredColumn).map((name) => `'${name}'`);
  return `COPY (SELECT column_name, chunk, data FROM ${quoteIdentifier(schema)}.${ROW_COLUMNS_TABLE} WHERE column_name IN (${names.join(', ')})) TO STDOUT (FORMAT binary)`;
}

/** The header of PostgreSQL's binary COPY format: its signature, flags and the length of an extension area. */
const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');
const HEADER_BYTES = SIGNATURE.length + 8;

/**
 * Reads the binary COPY of (column_name, chunk, data) rows as its pieces arrive: the small fields are
 * gathered, the data of a chunk is copied into its place as it comes.
 */
export class RowColumnCopyReader {
  /** Bytes gathered for the next small item: the header, a field count, a field's length or value. */
  private gathered = Buffer.alloc(0);
  private state: 'header' | 'fields' | 'length' | 'name' | 'number' | 'data' | 'end' = 'header';
  /** Bytes the current item needs. */
  private need = HEADER_BYTES;
  private field = 0;
  private columnName = '';
  private chunkNumber = 0;
  private place: ChunkPlace | null = null;
  private written = 0;
  private rows = 0;

  constructor(private readonly assembly: RowColumnsAssembly) {}

  /** Takes the next piece of the stream; false when it does not match the format or the listing. */
  push(piece: Buffer): boolean {
    let at = 0;
    while (at < piece.length) {
      if (this.state === 'end') return false;
      if (this.state === 'data') {
        const place = this.place as ChunkPlace;
        const n = Math.min(this.need - this.written, piece.length - at);
        piece.copy(place.into, this.written, at, at + n);
        this.written += n;
        at += n;
        if (this.written === this.need) {
          place.done();
          this.rows += 1;
          this.expect('fields', 2);
        }
        continue;
      }
      const n = Math.min(this.need - this.gathered.length, piece.length - at);
      this.gathered = Buffer.concat([this.gathered, piece.subarray(at, at + n)]);
      at += n;
      if (this.gathered.length === this.need && !this.take(this.gathered)) return false;
    }
    return true;
  }

  /** Whether the stream ended where it should, after `rows` rows. */
  finished(rows: number): boolean {
    return this.state === 'end' && this.rows === rows;
  }

  private expect(state: RowColumnCopyReader['state'], bytes: number): void {
    this.state = state;
    this.need = bytes;
    this.gathered = Buffer.alloc(0);
  }

  /** A complete small item. */
  private take(item: Buffer): boolean {
    switch (this.state) {
      case 'header':
        if (!item.subarray(0, SIGNATURE.length).equals(SIGNATURE) || item.readUInt32BE(SIGNATURE.length + 4) !== 0) return false;
        this.expect('fields', 2);
        return true;
      case 'fields': {
        const count = item.readInt16BE(0);
        if (count === -1) {
          this.expect('end', 0);
          return true;
        }
        if (count !== 3) return false;
        this.field = 0;
        this.expect('length', 4);
        return true;
      }
      case 'length': {
        const length = item.readInt32BE(0);
        if (length < 0) return false;
        if (this.field === 2) {
          const place = this.assembly.placeOf(this.columnName, this.chunkNumber, length);
          if (place === null) return false;
          this.place = place;
          this.written = 0;
          this.expect('data', length);
          if (length === 0) {
            place.done();
            this.rows += 1;
            this.expect('fields', 2);
          }
          return true;
        }
        this.expect(this.field === 0 ? 'name' : 'number', length);
        return this.field === 0 || length === 4;
      }
      case 'name':
        this.columnName = item.toString('utf8');
        this.field = 1;
        this.expect('length', 4);
        return true;
      case 'number':
        this.chunkNumber = item.readInt32BE(0);
        this.field = 2;
        this.expect('length', 4);
        return true;
      default:
        return false;
    }
  }
}
