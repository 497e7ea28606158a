import type { CursorPosition } from './cursor.js';
import { CSV_HEADER, csvRecordOf, FEATURE_COLLECTION_START, featureOf, type RowFormat } from './row-formats.js';
import { SERVICE_REQUEST_COLUMNS, type ServiceRequestRecord, type ServiceRequestStore } from './service-request-store.js';

/** A request as the routes send it: its JSON text, and its keyset position for a cursor. */
export interface RequestText {
  /** The contract's ServiceRequest as UTF-8 JSON. */
  text: Buffer;
  position: CursorPosition;
  /** Its CSV record and GeoJSON Feature, made from the JSON text the first time a page asks for them. */
  csv?: Buffer;
  geojson?: Buffer;
}

/** The row's text in a format (JSON, a CSV record, a GeoJSON Feature), made once and kept with it. */
export function formattedText(item: RequestText, format: RowFormat): Buffer {
  if (format === 'json') return item.text;
  const kept = item[format];
  if (kept !== undefined) return kept;
  const row = JSON.parse(item.text.toString('utf8')) as ServiceRequestRecord;
  const made = Buffer.from(format === 'csv' ? csvRecordOf(row) : featureOf(row), 'utf8');
  item[format] = made;
  return made;
}

/**
 * The JSON text of each request, made once per row: the snapshot is frozen, so a row's text never
 * changes while the service runs. Pages are then built from the texts of the ids that the keyset
 * query (on the indexes) returns, without reading and serializing the same rows again; the last
 * row's (created_at, id) for the next cursor comes with its text.
 * At most `capacity` texts are kept (the whole snapshot of 109,915 requests is about 40 MB, and as
 * much again for each of CSV and GeoJSON when clients page through all of it in those formats); past
 * that the cache starts again empty.
 */
export class ServiceRequestTexts {
  private readonly texts = new Map<number, RequestText>();

  constructor(
    private readonly store: ServiceRequestStore,
    private readonly capacity = 250_000,
  ) {}

  /** The rows with these ids, in the order of `ids`; unknown ids are left out. */
  async textsOf(ids: readonly number[]): Promise<RequestText[]> {
    const missing = ids.filter((id) => !this.texts.has(id));
    if (missing.length > 0) {
      const rows = await this.store.rowsById(missing);
      if (this.texts.size + rows.length > this.capacity) this.texts.clear();
      for (const row of rows) {
        this.texts.set(row.id, { text: Buffer.from(textOf(row), 'utf8'), position: { created_at: row.created_at, id: row.id } });
      }
    }
    const found: RequestText[] = [];
    for (const id of ids) {
      const text = this.texts.get(id);
      if (text !== undefined) found.push(text);
    }
    return found;
  }
}

/** The contract's ServiceRequest as JSON, its fields in the contract's order. */
export function textOf(row: ServiceRequestRecord): string {
  const ordered: Record<string, unknown> = {};
  for (const column of SERVICE_REQUEST_COLUMNS) ordered[column] = row[column] ?? null;
  return JSON.stringify(ordered);
}

const PAGE_START = Buffer.from('{"items":[');
const COMMA = Buffer.from(',');

/** The page `{"items": [...], "next_cursor": ...}` from the rows' texts, as one buffer. */
export function pageText(items: readonly RequestText[], nextCursor: string | null): Buffer {
  const parts: Buffer[] = [PAGE_START];
  items.forEach((item, i) => {
    if (i > 0) parts.push(COMMA);
    parts.push(item.text);
  });
  parts.push(Buffer.from(`],"next_cursor":${JSON.stringify(nextCursor)}}`));
  return Buffer.concat(parts);
}

/** A CSV page: the header row, then one record per request (the next cursor goes in a Link header). */
export function csvPageText(items: readonly RequestText[]): Buffer {
  return Buffer.concat([Buffer.from(CSV_HEADER), ...items.map((item) => formattedText(item, 'csv'))]);
}

/** A GeoJSON page: a FeatureCollection of the requests, with next_cursor as a foreign member. */
export function geojsonPageText(items: readonly RequestText[], nextCursor: string | null): Buffer {
  const parts: Buffer[] = [Buffer.from(FEATURE_COLLECTION_START)];
  items.forEach((item, i) => {
    if (i > 0) parts.push(COMMA);
    parts.push(formattedText(item, 'geojson'));
  });
  parts.push(Buffer.from(`],"next_cursor":${JSON.stringify(nextCursor)}}`));
  return Buffer.concat(parts);
}
