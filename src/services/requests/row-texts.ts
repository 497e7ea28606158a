import { SERVICE_REQUEST_COLUMNS, type ServiceRequestRecord, type ServiceRequestStore } from './service-request-store.js';

/**
 * The JSON text of each request, made once per row: the snapshot is frozen, so a row's text never
 * changes while the service runs. Pages are then built from the texts of the ids that the keyset
 * query (on the indexes) returns, without reading and serializing the same rows again.
 * At most `capacity` texts are kept (the whole snapshot of 109,915 requests is about 40 MB); past
 * that the cache starts again empty.
 */
export class ServiceRequestTexts {
  private readonly texts = new Map<number, string>();

  constructor(
    private readonly store: ServiceRequestStore,
    private readonly capacity = 250_000,
  ) {}

  /** The texts of the rows with these ids, in the order of `ids`; unknown ids are left out. */
  async textsOf(ids: readonly number[]): Promise<string[]> {
    const missing = ids.filter((id) => !this.texts.has(id));
    if (missing.length > 0) {
      const rows = await this.store.rowsById(missing);
      if (this.texts.size + rows.length > this.capacity) this.texts.clear();
      for (const row of rows) this.texts.set(row.id, textOf(row));
    }
    const found: string[] = [];
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
