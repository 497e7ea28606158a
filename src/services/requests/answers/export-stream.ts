import { Readable } from 'node:stream';
import { TimeSlice } from '../../../platform/work-budget.js';
import type { CursorPosition } from '../cursor.js';
import type { ListFilters } from '../list-filters.js';
import { CSV_HEADER, csvRecordOf, FEATURE_COLLECTION_START, featureOf } from './row-formats.js';
import type { ServiceRequestStore } from '../store/service-request-store.js';

/**
 * Rows read per step of an export: a step's text is about 200 KB (CSV) to 500 KB (GeoJSON), whatever
 * the size of the export (larger steps grew the service's RSS more and ran slower: bench/README.md,
 * "Figures behind source comments").
 */
export const EXPORT_CHUNK_ROWS = 500;

export type ExportFormat = 'csv' | 'geojson';

/**
 * Every request matching the filters, in list order, as one CSV file (header row first) or one GeoJSON
 * FeatureCollection, read EXPORT_CHUNK_ROWS at a time with the same keyset query as the list pages:
 * the memory it holds does not grow with the export, and the stream is read only as fast as the
 * client takes it. The rows are read from the store directly, not through the kept JSON texts, so that
 * an export does not fill that cache either.
 */
export function exportStream(store: ServiceRequestStore, filters: ListFilters, format: ExportFormat): Readable {
  return Readable.from(exportTexts(store, filters, format), { objectMode: false, highWaterMark: 1 << 16 });
}

async function* exportTexts(store: ServiceRequestStore, filters: ListFilters, format: ExportFormat): AsyncGenerator<Buffer> {
  yield Buffer.from(format === 'csv' ? CSV_HEADER : FEATURE_COLLECTION_START);
  let after: CursorPosition | null = null;
  let first = true;
  const snapshotId = await store.snapshotId();
  // The reads are synchronous on SQLite and a fast reader's socket never makes the stream wait: the
  // export gives way to the other requests every few milliseconds (work-budget.ts).
  const slice = new TimeSlice();
  for (;;) {
    await slice.pause();
    const ids = await store.listIds({ filters, after, fetch: EXPORT_CHUNK_ROWS });
    if (ids.length === 0) break;
    const rows = new Map((await store.rowsById(ids)).map((row) => [row.id, row]));
    // A refresh during the export: the answer has started, so it cannot become a 4xx; it is cut (the
    // client sees an incomplete transfer) rather than completed with rows of another snapshot.
    if ((await store.snapshotId()) !== snapshotId) throw new Error('the snapshot changed during the export');
    const parts: string[] = [];
    const previous: CursorPosition | null = after;
    for (const id of ids) {
      const row = rows.get(id);
      if (row === undefined) continue; // left the snapshot between the two reads
      if (format === 'csv') parts.push(csvRecordOf(row));
      else {
        parts.push(first ? featureOf(row) : `,${featureOf(row)}`);
        first = false;
      }
      after = { created_at: row.created_at, id: row.id };
    }
    yield Buffer.from(parts.join(''), 'utf8');
    if (ids.length < EXPORT_CHUNK_ROWS || after === previous) break;
  }
  if (format === 'geojson') yield Buffer.from(']}');
}
