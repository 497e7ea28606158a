import { once } from 'node:events';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, describe, expect, it } from 'vitest';
import { SeededRandom } from '../../src/ingest/nyc311/seeded-random.js';
import { startModuleWorker } from '../../src/shared/module-worker.js';
import type { GroupScan } from '../../src/services/requests/engine/group-query.js';
import { scanGroups } from '../../src/services/requests/engine/group-scan.js';
import { GARBAGE_BYTES_MAXIMUM, IDLE_BEFORE_COLLECTION_MS } from '../../src/services/requests/engine/walk-thread-garbage.js';
import { RECORDED } from './support/group-scan-ways.js';
import { oneDayRowColumns } from './support/one-day-row-columns.js';

const MB = 1024 * 1024;

/**
 * What a walk thread holds between jobs: its own arrays, kept for its next scans, and nothing of the
 * scans before; the garbage of large jobs given back once it is idle.
 */
describe('the memory a walk thread holds between jobs', () => {
  const thread = startModuleWorker(import.meta.url, 'support/garbage-worker', null);
  afterAll(async () => {
    await thread.terminate();
  });
  const ask = async (message: number | 'held'): Promise<{ held: number; collectionWaits?: boolean }> => {
    thread.postMessage(message);
    const [answer] = (await once(thread, 'message')) as [{ held: number; collectionWaits?: boolean }];
    return answer;
  };

  it('the garbage of a job that left less than GARBAGE_BYTES_MAXIMUM (32 MB) of array buffers is left to the collector', async () => {
    expect(GARBAGE_BYTES_MAXIMUM).toBe(32 * MB);
    expect((await ask(8)).collectionWaits).toBe(false);
  });

  it(`the garbage of a job that left more is collected once the thread has had no job for IDLE_BEFORE_COLLECTION_MS (${IDLE_BEFORE_COLLECTION_MS} ms): it then holds what it held before the job`, async () => {
    const job = await ask(80);
    expect(job.held).toBeGreaterThanOrEqual(80 * MB);
    expect(job.collectionWaits).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, IDLE_BEFORE_COLLECTION_MS + 200));
    expect((await ask('held')).held).toBeLessThan(16 * MB);
  });

  it('a recorded grouping keeps none of its arrays once answered: after one of 65,536 groups, the thread holds what it holds after one of a single group', async () => {
    setFlagsFromString('--expose-gc');
    const collect = runInNewContext('gc') as () => void;
    const rows = 300_000;
    const columns = oneDayRowColumns(rows);
    const random = new SeededRandom(5);
    const memory = new Uint8Array((columns.bytes as { memory: SharedArrayBuffer }).memory);
    for (const column of ['council_district', 'incident_zip'] as const) for (let row = 0; row < rows; row++) memory[columns.codes[column].offset + row] = random.int(0, 255);
    const grouping = (by: GroupScan['by']): GroupScan => ({ by, period: 'day', order: 'opened', descending: true, limit: 10, ranks: by.map(() => Uint32Array.from({ length: 256 }, (_, code) => code)) });
    const scan = { columns: 0, filters: [], from: null, to: null };
    // V8 frees dead array buffers on a background thread, which a busy machine may run late: the
    // least of several collections a few milliseconds apart. What a scan kept would stay in every one.
    const heldAfter = async (by: GroupScan['by']): Promise<number> => {
      scanGroups(columns, scan, grouping(by), undefined, undefined, RECORDED);
      let least = Number.POSITIVE_INFINITY;
      for (let round = 0; round < 5; round++) {
        collect();
        collect();
        least = Math.min(least, getHeapStatistics().external_memory);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return least;
    };
    const afterMany = await heldAfter(['council_district', 'incident_zip']);
    const afterOne = await heldAfter(['borough']);
    expect(afterMany - afterOne).toBeLessThan(MB);
  });
});
