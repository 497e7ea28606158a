import { boundSeconds, wallSecondText } from '../../../snapshot/index.js';
import type { ListPageQuery } from '../store/service-request-store.js';
import type { RowColumnScan } from './row-column-scan.js';
import type { RowWalkPool } from './sqlite-row-walks.js';

/**
 * The created_at texts of the rows a list page reads, found by a scan of the row columns in a walk
 * thread (row-column-scan.ts, `scanPageSeconds`): the seconds of the page's first `fetch` matching rows
 * after its cursor's second, and of the cursor's second. A store's walk of a page that checks the rows
 * it walks (`pageChecksRows`) then reads only the rows of those seconds, one seek each in its index:
 * as many rows as the page holds (and those that share their seconds), however few rows match among
 * those its index holds (an operator that few rows pass, filters that no row matches together), and
 * no walk when no row matches (an empty list). The same rows, the same page.
 *
 * `plan` gives the scan of the page's filters, or null without row columns loaded (the page is then
 * walked as it is: a page does not wait for them).
 */
export async function pageSecondsFromRowColumns(pool: RowWalkPool, plan: () => Promise<{ scan: RowColumnScan } | null>, query: ListPageQuery): Promise<string[] | null> {
  const scanned = await pool.scan('page seconds', async () => {
    const planned = await plan();
    if (planned === null) return null;
    const page = { after: query.after === null ? null : boundSeconds(query.after.created_at), fetch: query.fetch };
    return { scan: { ...planned.scan, page } };
  });
  return scanned === null ? null : scanned.answer.seconds.map(wallSecondText);
}
