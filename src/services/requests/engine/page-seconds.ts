import { boundSeconds, wallSecondText } from '../../../snapshot/index.js';
import type { ListPageQuery } from '../store/service-request-store.js';
import { firstRowFrom, scanPageSecondsWithin, type RowColumnScan, type SharedRowColumns } from './row-column-scan.js';
import type { RowWalkPool } from './sqlite-row-walks.js';

/** How much of a list page's work runs on the event loop; past it, the work goes to a walk thread. */
export interface PageLoopLimits {
  /**
   * Rows of the row columns a page's scan reads here: one block, a fraction of a millisecond. Most
   * pages find their rows within them, and a message to a thread and back costs more than the scan.
   */
  scanRows: number;
  /**
   * Index seeks and rows a SQLite walk of a page's known seconds may read here: about what a page of a
   * thousand rows that checks none reads.
   */
  walkSteps: number;
}

export const PAGE_LOOP_LIMITS: PageLoopLimits = { scanRows: 65_536, walkSteps: 2_048 };

/** The seconds a page reads and how many rows of the snapshot were created at them. */
export interface PageSeconds {
  /** The created_at texts, rising. */
  texts: string[];
  /** Rows at those seconds (whether they match or not): what a walk of them reads at most. */
  rows: number;
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
  return scanned === null ? null : pageSeconds(scanned.plan.columns, scanned.answer.seconds);
}

function pageSeconds(columns: SharedRowColumns, seconds: readonly number[]): PageSeconds {
  let rows = 0;
  for (const second of seconds) rows += firstRowFrom(columns, second + 1) - firstRowFrom(columns, second);
  return { texts: seconds.map(wallSecondText), rows };
}
