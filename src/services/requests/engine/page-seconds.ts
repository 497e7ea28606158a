import { boundSeconds, wallSecondText } from '../../../snapshot/index.js';
import type { ListPageQuery } from '../store/service-request-store.js';
import { firstRowFrom, scanPageSecondsWithin, type RowColumnScan, type ScannedPageSeconds, type SharedRowColumns } from './row-column-scan.js';
import type { RowWalkPool } from './sqlite-row-walks.js';

/** How much of a list page's work runs on the event loop; past it, the work goes to a walk thread. */
export interface PageLoopLimits {
  /**
   * Rows of the row columns a page's scan reads here, in growing blocks: at most a few milliseconds
   * (at 40 million requests, where the row columns are read from their file). Most pages find their
   * rows within them, and a job of a walk thread waits behind the scans queued there.
   */
  scanRows: number;
  /**
   * The most rows at a page's seconds whose entries of the (created_at, id) index a SQLite page reads
   * here (`pageIdsAmong`), one seek per second: a page of a few hundred rows. A larger page's seconds
   * are walked in a walk thread (seeks into index pages not in memory wait for the disk).
   */
  indexRows: number;
}

export const PAGE_LOOP_LIMITS: PageLoopLimits = { scanRows: 16_384, indexRows: 512 };

/** The seconds a page reads, as created_at texts, and where its matching rows lie among their rows. */
export interface PageSeconds {
  /** The created_at texts, rising. */
  texts: string[];
  /** The rows created at those seconds, matching or not (what a walk of them reads). */
  rowsAtSeconds: number;
  /**
   * Of the rows at those seconds in list order (created_at, id), the places of the matching ones,
   * rising: the row columns hold the rows in list order, so the place of a row among those of its
   * second is its place in the (created_at, id) index too.
   */
  matchingPlaces: number[];
}

/**
 * The created_at texts of the rows a list page reads, found by a scan of the row columns (row-column-scan.ts,
 * `scanPageSeconds`): the seconds of the page's first `fetch` matching rows after its cursor's second,
 * and of the cursor's second. A store's walk of a page that checks the rows it walks (`pageChecksRows`)
 * then reads only the rows of those seconds, one seek each in its index: as many rows as the page
 * holds (and those that share their seconds), however few rows match among those its index holds (an
 * operator that few rows pass, filters that no row matches together), and no walk when no row matches
 * (an empty list). The same rows, the same page.
 *
 * The scan reads its first `scanRows` rows on the event loop; a page whose rows lie further is
 * scanned in a walk thread.
 *
 * `plan` gives the scan of the page's filters and the columns it reads, or null without row columns
 * loaded (the page is then walked as it is: a page does not wait for them).
 */
export async function pageSecondsFromRowColumns(
  pool: RowWalkPool,
  plan: () => Promise<{ columns: SharedRowColumns; scan: RowColumnScan } | null>,
  query: ListPageQuery,
  scanRows = PAGE_LOOP_LIMITS.scanRows,
): Promise<PageSeconds | null> {
  const page = { after: query.after === null ? null : boundSeconds(query.after.created_at), fetch: query.fetch };
  const first = await plan();
  if (first === null) return null;
  const near = scanPageSecondsWithin(first.columns, { ...first.scan, page }, scanRows);
  if (near !== null) return pageSeconds(first.columns, near);
  let plans = 0;
  const scanned = await pool.scan('page seconds', async () => {
    // A plan made again (its row columns were retired meanwhile) reads those in use.
    const planned = plans++ === 0 ? first : await plan();
    return planned === null ? null : { columns: planned.columns, scan: { ...planned.scan, page } };
  });
  return scanned === null ? null : pageSeconds(scanned.plan.columns, scanned.answer);
}

function pageSeconds(columns: SharedRowColumns, { seconds, rows }: ScannedPageSeconds): PageSeconds {
  const matchingPlaces: number[] = [];
  let rowsAtSeconds = 0;
  let next = 0;
  for (const second of seconds) {
    const first = firstRowFrom(columns, second);
    const end = firstRowFrom(columns, second + 1);
    for (; next < rows.length && (rows[next] as number) < end; next++) matchingPlaces.push(rowsAtSeconds + (rows[next] as number) - first);
    rowsAtSeconds += end - first;
  }
  return { texts: seconds.map(wallSecondText), rowsAtSeconds, matchingPlaces };
}

/**
 * The ids of a page from `entries`, every row created at its seconds as the (created_at, id) index
 * holds them in list order: those at the matching places after the cursor, at most `fetch`; null when
 * the index holds another number of rows at those seconds than the row columns (the rows are then
 * walked).
 */
export function pageIdsAmong(seconds: PageSeconds, entries: readonly [createdAt: string, id: number][], query: ListPageQuery): number[] | null {
  if (entries.length !== seconds.rowsAtSeconds) return null;
  const ids: number[] = [];
  const { after, fetch } = query;
  for (const place of seconds.matchingPlaces) {
    const [createdAt, id] = entries[place] as [string, number];
    if (after !== null && (createdAt < after.created_at || (createdAt === after.created_at && id <= after.id))) continue;
    ids.push(id);
    if (ids.length === fetch) break;
  }
  return ids;
}
