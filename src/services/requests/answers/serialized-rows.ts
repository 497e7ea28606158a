import type { CursorPosition } from '../cursor.js';
import { TimeSlice } from '../../../platform/work-budget.js';
import { FormatTextCache, SLAB_BYTES } from './format-text-cache.js';
import { CSV_HEADER, csvRecordOf, FEATURE_COLLECTION_START, featureHeadOf } from './row-formats.js';
import { SERVICE_REQUEST_COLUMNS, type ServiceRequestRecord, type ServiceRequestStore } from '../store/service-request-store.js';

/**
 * Where a text is in a FormatTextCache and how long it is, as one number (`place * TEXT_LENGTH_SPAN +
 * length`): a kept CSV record or Feature head costs one Map entry, not an object per row. Texts are at
 * most a slab long (SLAB_BYTES, under the span).
 */
const TEXT_LENGTH_SPAN = 2 ** 21;

function spotOf(place: number, length: number): number {
  return place * TEXT_LENGTH_SPAN + length;
}

/** The text at `place` of an arena: a view of its slab, which it keeps valid after the arena starts again. */
function textAt(arena: FormatTextCache, place: number, length: number): Buffer {
  const start = place % arena.slabBytes;
  return arena.slabOf(place).subarray(start, start + length);
}

/**
 * A request as the routes send it: its id, its JSON text (the contract's ServiceRequest in UTF-8, a
 * view of the kept texts' slab) and the snapshot round it was read in (ServiceRequestTexts). Its
 * keyset position is read from its text when a page needs it (only a page's last row's is), so that a
 * kept row holds no position object and no created_at string of its own.
 */
export class RequestText {
  constructor(
    readonly id: number,
    readonly text: Buffer,
    readonly round: number,
  ) {}

  /** Its keyset position for a cursor, read from its text. */
  get position(): CursorPosition {
    const { created_at, id } = JSON.parse(this.text.toString('utf8')) as ServiceRequestRecord;
    return { created_at, id };
  }
}

/** Rows per read of textsOf (about a millisecond to read and serialize). */
const ROWS_PER_READ = 250;

/**
 * Bytes of JSON texts kept by default: the whole synthetic snapshot (bench/README.md, "Figures behind
 * source comments"), so that paging through every row serializes each once.
 */
export const ROW_TEXT_BYTES = 64 * 1024 * 1024;

type DerivedText = 'csv' | 'head';

/**
 * The JSON text of each request, made once per row and snapshot: a snapshot is frozen, so a row's
 * text changes only with a new snapshot, and the texts are dropped when the store switches to one.
 * Pages are then built from the texts of the ids that the keyset query (on the indexes) returns,
 * without reading and serializing the same rows again.
 *
 * The texts are appended to a byte-bounded FormatTextCache of `maxTextBytes` and found by id; past
 * that the kept texts start again empty. The CSV records and GeoJSON Feature heads are kept apart in
 * `arena`, made from the JSON text the first time a page asks for them in the arena's generation (a
 * Feature is its head, the JSON text and `}`: its properties are the JSON text itself, so it is not
 * kept twice).
 */
export class ServiceRequestTexts {
  private readonly jsonTexts: FormatTextCache;
  /** id -> its text, of the current generation of `jsonTexts` and of this round. */
  private kept = new Map<number, RequestText>();
  private keptGeneration: number;
  /** id -> spot of its CSV record or Feature head in `arena`, of its current generation and of this round. */
  private derived: Record<DerivedText, Map<number, number>> = { csv: new Map(), head: new Map() };
  private derivedGeneration: number;
  /** Changes with each snapshot: texts read in an earlier round are not kept. */
  private round = 0;

  constructor(
    private readonly store: ServiceRequestStore,
    maxTextBytes = ROW_TEXT_BYTES,
    readonly arena = new FormatTextCache(),
  ) {
    this.jsonTexts = new FormatTextCache(maxTextBytes, Math.min(SLAB_BYTES, maxTextBytes));
    this.keptGeneration = this.jsonTexts.generation;
    this.derivedGeneration = arena.generation;
    // A new snapshot may change any row: the texts of the old one are dropped at once. A page being
    // built meanwhile keeps the texts it holds; the route sees the new snapshot id and builds it again.
    store.onSnapshotChange(() => {
      this.round += 1;
      this.kept = new Map();
      this.derived = { csv: new Map(), head: new Map() };
    });
  }

  /** Bytes of slabs the kept JSON texts hold (for tests and benchmarks). */
  keptTextBytes(): number {
    return this.jsonTexts.bytes();
  }

  /** The rows with these ids, in the order of `ids`; unknown ids are left out. */
  async textsOf(ids: readonly number[]): Promise<RequestText[]> {
    const round = this.round;
    const found = new Map<number, RequestText>();
    const missing: number[] = [];
    for (const id of ids) {
      const text = this.kept.get(id);
      if (text === undefined) missing.push(id);
      else found.set(id, text);
    }
    // A page of a thousand rows not kept yet is read and serialized in steps, giving way to other requests between them.
    const slice = new TimeSlice();
    for (let from = 0; from < missing.length; from += ROWS_PER_READ) {
      if (from > 0) await slice.pause();
      const rows = await this.store.rowsById(missing.slice(from, from + ROWS_PER_READ));
      for (const row of rows) found.set(row.id, this.keep(row, round));
    }
    const ordered: RequestText[] = [];
    for (const id of ids) {
      const text = found.get(id);
      if (text !== undefined) ordered.push(text);
    }
    return ordered;
  }

  /** The row's JSON text, kept for later pages when it was read in this round and fits the kept texts. */
  private keep(row: ServiceRequestRecord, round: number): RequestText {
    const json = textOf(row);
    const length = Buffer.byteLength(json);
    // Rows read while the snapshot changed are not kept for later pages.
    const place = round === this.round ? this.jsonTexts.put(json, length) : -1;
    if (place < 0) return new RequestText(row.id, Buffer.from(json, 'utf8'), round);
    if (this.jsonTexts.generation !== this.keptGeneration) {
      // The kept texts started again: every earlier one is in a slab they no longer hold.
      this.kept = new Map();
      this.keptGeneration = this.jsonTexts.generation;
    }
    const text = new RequestText(row.id, textAt(this.jsonTexts, place, length), round);
    this.kept.set(row.id, text);
    return text;
  }

  /**
   * The row's CSV record or GeoJSON Feature head (`{"type":"Feature","id":..,"geometry":..,"properties":`,
   * which the JSON text and `}` complete), from the arena; made from the JSON text the first time a page
   * asks for it in the arena's generation. A view of the arena's slab (or a Buffer of its own if the
   * arena cannot keep it), valid while the page is built even if the arena starts again meanwhile.
   */
  private derivedText(item: RequestText, kind: DerivedText): Buffer {
    const arena = this.arena;
    this.forgetStaleDerived();
    const spot = item.round === this.round ? this.derived[kind].get(item.id) : undefined;
    if (spot !== undefined) {
      const length = spot % TEXT_LENGTH_SPAN;
      return textAt(arena, (spot - length) / TEXT_LENGTH_SPAN, length);
    }
    const row = JSON.parse(item.text.toString('utf8')) as ServiceRequestRecord;
    const text = kind === 'csv' ? csvRecordOf(row) : featureHeadOf(row);
    const length = Buffer.byteLength(text);
    const place = arena.put(text, length);
    if (place < 0) return Buffer.from(text, 'utf8');
    // The arena may have started again to make room: the other spots are then stale.
    this.forgetStaleDerived();
    if (item.round === this.round) this.derived[kind].set(item.id, spotOf(place, length));
    return textAt(arena, place, length);
  }

  private forgetStaleDerived(): void {
    if (this.arena.generation === this.derivedGeneration) return;
    this.derived = { csv: new Map(), head: new Map() };
    this.derivedGeneration = this.arena.generation;
  }

  /** A CSV page: the header row, then one record per request (the next cursor goes in a Link header). */
  csvPage(items: readonly RequestText[]): Buffer {
    const parts: Buffer[] = [CSV_HEADER_BYTES];
    for (const item of items) parts.push(this.derivedText(item, 'csv'));
    return Buffer.concat(parts);
  }

  /**
   * A GeoJSON page: a FeatureCollection of the requests, with next_cursor as a foreign member. Each
   * Feature is its head, the row's JSON text (its properties) and `}`.
   */
  geojsonPage(items: readonly RequestText[], nextCursor: string | null): Buffer {
    const parts: Buffer[] = [COLLECTION_START];
    items.forEach((item, i) => {
      parts.push(this.derivedText(item, 'head'), item.text, i < items.length - 1 ? FEATURE_END_COMMA : FEATURE_END);
    });
    parts.push(Buffer.from(`],"next_cursor":${JSON.stringify(nextCursor)}}`));
    return Buffer.concat(parts);
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
