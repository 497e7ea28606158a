import type { ServiceRequestRecord } from '../../../src/services/requests/store/service-request-store.js';
import { textOf } from '../../../src/services/requests/answers/serialized-rows.js';
import type { AnyResponse } from '../../support/http.js';

/** The message of a cursor made on a snapshot that a refresh replaced (cursor.ts). */
export const EARLIER_SNAPSHOT = 'The cursor belongs to an earlier snapshot of the data: start again without a cursor';

/** Every answer a paging client got while a refresh landed, sorted by what it shows. */
export interface PagingRecord {
  /** Pages whose items are all of the first snapshot, all of the second, or of both (must stay 0). */
  pagesOfFirst: number;
  pagesOfSecond: number;
  mixedPages: string[];
  /** 422 invalid_cursor answers to a cursor of the first snapshot, after the switch. */
  earlierSnapshotCursors: number;
  /** Any other answer: status and body. */
  failures: string[];
}

/**
 * A client that pages through `GET /v1/service-requests` again and again (pages of `limit`), as a
 * dashboard would, until `until()` resolves. Each page is checked whole against the JSON texts of the
 * two snapshots: every item must be the same request of one of them, and all items of the same one.
 * A refused cursor of the first snapshot restarts the walk without a cursor, as the message says.
 * `record` fills as the client goes (a test can wait for pages of the first snapshot before refreshing).
 */
export function pageThroughRefresh(
  get: (path: string) => Promise<AnyResponse>,
  first: readonly ServiceRequestRecord[],
  second: readonly ServiceRequestRecord[],
  until: Promise<unknown>,
  limit = 4,
): { record: PagingRecord; finished: Promise<PagingRecord> } {
  const textsOf = (rows: readonly ServiceRequestRecord[]) => new Map(rows.map((row) => [row.id, textOf(row)]));
  const firstTexts = textsOf(first);
  const secondTexts = textsOf(second);
  const record: PagingRecord = { pagesOfFirst: 0, pagesOfSecond: 0, mixedPages: [], earlierSnapshotCursors: 0, failures: [] };
  let done = false;
  void until.finally(() => {
    done = true;
  });
  const walk = async (): Promise<PagingRecord> => {
  let cursor: string | null = null;
  while (!done) {
    const response = await get(`/v1/service-requests?limit=${limit}${cursor === null ? '' : `&cursor=${cursor}`}`);
    const body = JSON.parse(response.body) as { items?: ServiceRequestRecord[]; next_cursor?: string | null; error?: { code: string; message: string } };
    if (response.statusCode === 422 && body.error?.code === 'invalid_cursor' && body.error.message === EARLIER_SNAPSHOT) {
      record.earlierSnapshotCursors += 1;
      cursor = null;
      continue;
    }
    if (response.statusCode !== 200 || body.items === undefined) {
      record.failures.push(`${response.statusCode} ${response.body}`);
      cursor = null;
      continue;
    }
    const texts = body.items.map((item) => JSON.stringify(item));
    const ofFirst = body.items.every((item, i) => firstTexts.get(item.id) === texts[i]);
    const ofSecond = body.items.every((item, i) => secondTexts.get(item.id) === texts[i]);
    if (ofFirst && !ofSecond) record.pagesOfFirst += 1;
    else if (ofSecond && !ofFirst) record.pagesOfSecond += 1;
    else if (!ofFirst) record.mixedPages.push(response.body);
    cursor = body.next_cursor ?? null;
  }
  return record;
  };
  return { record, finished: walk() };
}

/** Resolves once `ready()` is true (checked every 10 ms), or rejects after `timeoutMs`. */
export async function waitFor(ready: () => boolean | Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await ready())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
