import type { CursorPosition } from './cursor.js';
import { TimeSlice } from '../../platform/work-budget.js';
import { FormatTextCache } from './format-text-cache.js';
import { CSV_HEADER, csvRecordOf, FEATURE_COLLECTION_START, featureHeadOf } from './row-formats.js';
import { SERVICE_REQUEST_COLUMNS, type ServiceRequestRecord, type ServiceRequestStore } from './service-request-store.js';

/**
 * A request as the routes send it: its JSON text, its keyset position for a cursor, and where the
 * FormatTextCache keeps its CSV record and GeoJSON Feature head (-1: not made in the arena's
 * generation `keptIn`). Every field is set when the object is made, so that all have one shape.
 */
export interface RequestText {
  /** The contract's ServiceRequest as UTF-8 JSON. */
  text: Buffer;
  position: CursorPosition;
  csvAt: number;
  csvLength: number;
  headAt: number;
  headLength: number;
  keptIn: number;
}

type DerivedText = 'csv' | 'head';

/**
 * The row's CSV record or GeoJSON Feature head (`{"type":"Feature","id":..,"geometry":..,"properties":`,
 * which the JSON text and `}` complete), from the arena; made from the JSON text the first time a page
 * asks for it in the arena's generation. A view of the arena's slab (or a Buffer of its own if the
 * arena cannot keep it), valid while the page is built even if the arena starts again meanwhile.
 */
function derivedText(item: RequestText, kind: DerivedText, arena: FormatTextCache): Buffer {
  if (item.keptIn !== arena.generation) forgetPlaces(item, arena);
  const at = kind === 'csv' ? item.csvAt : item.headAt;
  if (at >= 0) return arena.textAt(at, kind === 'csv' ? item.csvLength : item.headLength);
  const row = JSON.parse(item.text.toString('utf8')) as ServiceRequestRecord;
  const text = kind === 'csv' ? csvRecordOf(row) : featureHeadOf(row);
  const length = Buffer.byteLength(text);
  const place = arena.put(text, length);
  if (place < 0) return Buffer.from(text, 'utf8');
  // The arena may have started again to make room: the item's other place is then stale.
  if (item.keptIn !== arena.generation) forgetPlaces(item, arena);
  if (kind === 'csv') {
    item.csvAt = place;
    item.csvLength = length;
  } else {
    item.headAt = place;
    item.headLength = length;
  }
  return arena.textAt(place, length);
}

function forgetPlaces(item: RequestText, arena: FormatTextCache): void {
  item.csvAt = -1;
  item.headAt = -1;
  item.keptIn = arena.generation;
}

/** Rows per read of textsOf (about a millisecond to read and serialize). */
const ROWS_PER_READ = 250;

/**
 * The JSON text of each request, made once per row and snapshot: a snapshot is frozen, so a row's
 * text changes only with a new snapshot, and the texts are dropped when the store switches to one. Pages are then built from the texts of the ids that the keyset
 * query (on the indexes) returns, without reading and serializing the same rows again; the last
 * row's (created_at, id) for the next cursor comes with its text.
 * At most `capacity` JSON texts are kept (enough for the whole synthetic snapshot); past
 * that the cache starts again empty. The CSV records and GeoJSON Feature heads are kept apart in a
 * byte-bounded FormatTextCache (a Feature is its head, the JSON text and `}`: its properties are the
 * JSON text itself, so it is not kept twice).
 */
export class ServiceRequestTexts {
  private texts = new Map<number, RequestText>();

  constructor(
    private readonly store: ServiceRequestStore,
    private readonly capacity = 250_000,
    readonly arena = new FormatTextCache(),
  ) {
    // A new snapshot may change any row: the texts of the old one are dropped at once. A page being
    // built meanwhile keeps the texts it holds; the route sees the new snapshot id and builds it again.
    store.onSnapshotChange(() => {
      this.texts = new Map();
    });
  }

  /** The rows with these ids, in the order of `ids`; unknown ids are left out. */
  async textsOf(ids: readonly number[]): Promise<RequestText[]> {
    const texts = this.texts;
    const found = new Map<number, RequestText>();
    const missing: number[] = [];
    for (const id of ids) {
      const text = texts.get(id);
      if (text === undefined) missing.push(id);
      else found.set(id, text);
    }
    // A page of a thousand rows not kept yet is read and serialized in steps, giving way to other requests between them.
    const slice = new TimeSlice();
    for (let from = 0; from < missing.length; from += ROWS_PER_READ) {
      if (from > 0) await slice.pause();
      const rows = await this.store.rowsById(missing.slice(from, from + ROWS_PER_READ));
      // Rows read while the snapshot changed are not kept for later pages (`texts` is then the old map).
      if (texts === this.texts && texts.size + rows.length > this.capacity) texts.clear();
      for (const row of rows) {
        const text = Buffer.from(textOf(row), 'utf8');
        const item = { text, position: { created_at: row.created_at, id: row.id }, csvAt: -1, csvLength: 0, headAt: -1, headLength: 0, keptIn: -1 };
        found.set(row.id, item);
        if (texts === this.texts) texts.set(row.id, item);
      }
    }
    const ordered: RequestText[] = [];
    for (const id of ids) {
      const text = found.get(id);
      if (text !== undefined) ordered.push(text);
    }
    return ordered;
  }

  /** A CSV page of these rows (csvPageText). */
  csvPage(items: readonly RequestText[]): Buffer {
    return csvPageText(items, this.arena);
  }

  /** A GeoJSON page of these rows (geojsonPageText). */
  geojsonPage(items: readonly RequestText[], nextCursor: string | null): Buffer {
    return geojsonPageText(items, nextCursor, this.arena);
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
const CSV_HEADER_BYTES = Buffer.from(CSV_HEADER);
const COLLECTION_START = Buffer.from(FEATURE_COLLECTION_START);
const FEATURE_END_COMMA = Buffer.from('},');
const FEATURE_END = Buffer.from('}');

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
export function csvPageText(items: readonly RequestText[], arena: FormatTextCache): Buffer {
  const parts: Buffer[] = [CSV_HEADER_BYTES];
  for (const item of items) parts.push(derivedText(item, 'csv', arena));
  return Buffer.concat(parts);
}

/**
 * A GeoJSON page: a FeatureCollection of the requests, with next_cursor as a foreign member. Each
 * Feature is its head, the row's JSON text (its properties) and `}`.
 */
export function geojsonPageText(items: readonly RequestText[], nextCursor: string | null, arena: FormatTextCache): Buffer {
  const parts: Buffer[] = [COLLECTION_START];
  items.forEach((item, i) => {
    parts.push(derivedText(item, 'head', arena), item.text, i < items.length - 1 ? FEATURE_END_COMMA : FEATURE_END);
  });
  parts.push(Buffer.from(`],"next_cursor":${JSON.stringify(nextCursor)}}`));
  return Buffer.concat(parts);
}
