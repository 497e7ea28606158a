import { SERVICE_REQUEST_COLUMNS, type ServiceRequestRecord, type ServiceRequestStore } from './service-request-store.js';

/**
 * The JSON text of each request, made once per row: the snapshot is frozen, so a row's text never
 * changes while the service runs. Pages are then built from the texts of the ids that the keyset
 * query (on the indexes) returns, without reading and serializing the same rows again.
 * At most `capacity` texts are kept (the whole snapshot of 109,915 requests is about 40 MB); past
 * that the cache starts again empty.
 */
export class ServiceRequestTexts {
  private readonly texts = new Map<number, Buffer>();

  constructor(
    private readonly store: ServiceRequestStore,
    private readonly capacity = 250_000,
  ) {}

  /** The texts (UTF-8) of the rows with these ids, in the order of `ids`; unknown ids are left out. */
  async textsOf(ids: readonly number[]): Promise<Buffer[]> {
    const missing = ids.filter((id) => !this.texts.has(id));
    if (missing.length > 0) {
      const rows = await this.store.rowsById(missing);
      if (this.texts.size + rows.length > this.capacity) this.texts.clear();
      for (const row of rows) this.texts.set(row.id, Buffer.from(textOf(row), 'utf8'));
    }
    const found: Buffer[] = [];
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
export function pageText(items: readonly Buffer[], nextCursor: string | null): Buffer {
  const parts: Buffer[] = [PAGE_START];
  items.forEach((item, i) => {
    if (i > 0) parts.push(COMMA);
    parts.push(item);
  });
  parts.push(Buffer.from(`],"next_cursor":${JSON.stringify(nextCursor)}}`));
  return Buffer.concat(parts);
}
