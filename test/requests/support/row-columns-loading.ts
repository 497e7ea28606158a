import { expect, vi } from 'vitest';
import { NO_FILTERS, type ListFilters } from '../../../src/services/requests/list-filters.js';
import type { ServiceRequestRecord, ServiceRequestStore } from '../../../src/services/requests/store/service-request-store.js';
import { RowWalkPool } from '../../../src/services/requests/engine/sqlite-row-walks.js';
import { answersOfRows } from './random-rows.js';

/**
 * The row columns as a store loads them, the same on both backends: a count of two filters (no
 * summary answers it) asked of a store just opened waits for its row columns and scans them; a ping
 * of another store just opened resolves only once its row columns are loaded (sent to its threads).
 */
export async function expectRequestsWaitForRowColumns(open: () => ServiceRequestStore, rows: readonly ServiceRequestRecord[]): Promise<void> {
  const filters: ListFilters = { ...NO_FILTERS, borough: ['bronx', 'queens'], status: ['closed'] };
  const run = vi.spyOn(RowWalkPool.prototype, 'run');
  const share = vi.spyOn(RowWalkPool.prototype, 'shareRowColumns');
  const arriving = open();
  const pinged = open();
  try {
    expect(await arriving.count(filters)).toBe(answersOfRows(rows, filters, 'borough', 'day').count);
    expect(run.mock.calls.map(([, work]) => 'scan' in work)).toEqual([true]);
    share.mockClear();
    await pinged.ping();
    expect(share).toHaveBeenCalledTimes(1);
  } finally {
    run.mockRestore();
    share.mockRestore();
    await Promise.all([arriving.close(), pinged.close()]);
  }
}
