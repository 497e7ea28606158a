import { fstatSync, openSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RowWalkPool } from '../../src/services/requests/engine/sqlite-row-walks.js';
import type { RowColumnScan, SharedRowColumns } from '../../src/services/requests/engine/row-column-scan.js';
import { oneDayRowColumns as columnsOf } from './support/one-day-row-columns.js';

/**
 * The walk pool's row columns across a refresh: the workers keep the columns of a snapshot while a
 * job waiting or running names them, and drop them once none does; a scan planned on dropped columns
 * is planned again on those in use.
 */
const countOf = (columns: number): RowColumnScan => ({ columns, filters: [], from: null, to: null });
/** A scan that reads every row: borough code 0 (no value) accepted. */
const slowCountOf = (columns: number): RowColumnScan => ({ columns, filters: [{ column: 'borough', accepted: [0] }], from: null, to: null });
/** A scan that reads every row's location too (a box around 0, 0, where every row lies): several times slower than slowCountOf. */
const slowerCountOf = (columns: number): RowColumnScan => ({ ...slowCountOf(columns), box: { minLongitude: -1, minLatitude: -1, maxLongitude: 1, maxLatitude: 1 } });

describe('row columns in the walk pool across a refresh', () => {
  let pool: RowWalkPool | null = null;
  afterEach(async () => {
    await pool?.close();
    pool = null;
  });

  it('a scan planned on the columns of the snapshot before a refresh is planned again on those in use', async () => {
    pool = new RowWalkPool(null);
    await pool.start();
    const before = pool.shareRowColumns(columnsOf(3));
    expect(await pool.run('count', { scan: countOf(before) })).toEqual({ kind: 'count', count: 3 });
    const after = pool.shareRowColumns(columnsOf(5));
    await expect(pool.run('count', { scan: countOf(before) })).rejects.toThrow(`the row columns ${before} were retired`);
    const plan = vi.fn().mockResolvedValueOnce({ scan: countOf(before) }).mockResolvedValueOnce({ scan: countOf(after) });
    expect((await pool.scan('count', plan))?.answer).toEqual({ kind: 'count', count: 5 });
    expect(plan).toHaveBeenCalledTimes(2);
    expect(await pool.scan('count', () => Promise.resolve(null))).toBeNull();
  });

  it('columns named by a running or a waiting job are kept until it ends, then dropped', async () => {
    pool = new RowWalkPool(null, { workers: 1, queue: 8, deadlineMs: 10_000, cheapestFirstMs: 500 });
    await pool.start();
    const rows = 20_000_000;
    const before = pool.shareRowColumns(columnsOf(rows));
    const running = pool.run('count', { scan: slowCountOf(before) });
    const waiting = pool.run('count', { scan: countOf(before) });
    // Both are queued before the refresh.
    await new Promise((resolve) => setTimeout(resolve, 10));
    const after = pool.shareRowColumns(columnsOf(2));
    expect(await running).toEqual({ kind: 'count', count: rows });
    expect(await waiting).toEqual({ kind: 'count', count: rows });
    expect(await pool.run('count', { scan: countOf(after) })).toEqual({ kind: 'count', count: 2 });
    await expect(pool.run('count', { scan: countOf(before) })).rejects.toThrow('were retired');
    // The worker itself no longer holds them: past the pool's own refusal, it has nothing to scan.
    (pool as unknown as { retiredBelow: number }).retiredBelow = 0;
    await expect(pool.run('count', { scan: countOf(before) })).rejects.toThrow(`no row columns ${before}`);
  });

  it('row columns sent while the workers start, even twice (a refresh), do not stop the start; the older ones are dropped once it is done', async () => {
    pool = new RowWalkPool(null);
    const starting = pool.start();
    const first = pool.shareRowColumns(columnsOf(3));
    const second = pool.shareRowColumns(columnsOf(4));
    await starting;
    expect(await pool.run('count', { scan: countOf(second) })).toEqual({ kind: 'count', count: 4 });
    await expect(pool.run('count', { scan: countOf(first) })).rejects.toThrow('were retired');
    expect(pool.ready).toBe(true);
  });

  it('the file of retired row columns is closed once no job reads it, and the file in use when the pool closes', async () => {
    const inFile = (rows: number): SharedRowColumns => {
      const columns = columnsOf(rows);
      const path = join(tmpdir(), `row-walk-pool-test-${process.pid}-${rows}`);
      const fd = openSync(path, 'w+');
      unlinkSync(path);
      writeSync(fd, new Uint8Array((columns.bytes as { memory: SharedArrayBuffer }).memory));
      return { ...columns, bytes: { fd } };
    };
    const isOpen = (columns: SharedRowColumns): boolean => {
      try {
        fstatSync((columns.bytes as { fd: number }).fd);
        return true;
      } catch {
        return false;
      }
    };
    pool = new RowWalkPool(null);
    await pool.start();
    const old = inFile(70_000);
    const before = pool.shareRowColumns(old);
    expect(await pool.run('count', { scan: slowCountOf(before) })).toEqual({ kind: 'count', count: 70_000 });
    const current = inFile(5);
    const after = pool.shareRowColumns(current);
    expect(isOpen(old)).toBe(false);
    expect(await pool.run('count', { scan: slowCountOf(after) })).toEqual({ kind: 'count', count: 5 });
    await pool.close();
    pool = null;
    expect(isOpen(current)).toBe(false);
  });
});

describe('a worker ended at its job deadline', () => {
  let pool: RowWalkPool | null = null;
  afterEach(async () => {
    await pool?.close();
    pool = null;
  });

  it('is given no job while it stops: the next job waits for its replacement and is answered', async () => {
    const limits = { workers: 1, queue: 8, deadlineMs: 50, cheapestFirstMs: 500 };
    pool = new RowWalkPool(null, limits);
    await pool.start();
    const slow = pool.shareRowColumns(columnsOf(20_000_000));
    // 20 million rows with their locations: far longer than the deadline on any machine.
    await expect(pool.run('count', { scan: slowerCountOf(slow) })).rejects.toMatchObject({ code: 'overloaded' });
    // Time enough for the replacement to start; then at once, before the ended worker's exit is
    // seen: that worker must not take the job (it would fail with 503 database_unavailable).
    limits.deadlineMs = 10_000;
    expect(await pool.answer('count', { scan: countOf(slow) })).toEqual({ kind: 'count', count: 20_000_000 });
  });
});

describe('the order of the waiting jobs', () => {
  let pool: RowWalkPool | null = null;
  afterEach(async () => {
    await pool?.close();
    pool = null;
  });

  /** A count whose plan expects `rows` rows: the same answer whatever it expects. */
  const expecting = (columns: number, rows: number): RowColumnScan => ({ ...countOf(columns), expected: { rangeRows: rows, matchedRows: rows, rangeDays: 1 } });

  /** The order in which the three waiting counts (expecting 3 million, 10 and 2,000 rows) are answered, behind a slow one. */
  async function answerOrder(cheapestFirstMs: number): Promise<string[]> {
    pool = new RowWalkPool(null, { workers: 1, queue: 8, deadlineMs: 10_000, cheapestFirstMs });
    await pool.start();
    const columns = pool.shareRowColumns(columnsOf(2_000_000));
    const answered: string[] = [];
    const running = pool.run('count', { scan: slowerCountOf(columns) });
    const waiting = [
      ['expecting 3 million', 3_000_000],
      ['expecting 10', 10],
      ['expecting 2,000', 2_000],
    ].map(([name, rows]) => pool!.run('count', { scan: expecting(columns, rows as number) }).then(() => answered.push(name as string)));
    await Promise.all([running, ...waiting]);
    return answered;
  }

  it('a free worker takes the waiting scan whose plan expects the least work first', async () => {
    expect(await answerOrder(60_000)).toEqual(['expecting 10', 'expecting 2,000', 'expecting 3 million']);
  });

  it('a job that has waited cheapestFirstMs is passed no more: the oldest goes first', async () => {
    expect(await answerOrder(0)).toEqual(['expecting 3 million', 'expecting 10', 'expecting 2,000']);
  });

  it('SQL statements (no plan to expect from) go after every waiting scan, in their order of arrival', async () => {
    pool = new RowWalkPool(null, { workers: 1, queue: 8, deadlineMs: 10_000, cheapestFirstMs: 60_000 });
    await pool.start();
    const columns = pool.shareRowColumns(columnsOf(2_000_000));
    const answered: string[] = [];
    const running = pool.run('count', { scan: slowerCountOf(columns) });
    // This pool opens no file: a statement is answered by its failure, in the order the worker took it.
    const statement = (name: string): Promise<unknown> => pool!.run('count', { sql: '', parameters: [] }).then(() => answered.push(name), () => answered.push(name));
    const scan = (name: string, rows: number): Promise<unknown> => pool!.run('count', { scan: expecting(columns, rows) }).then(() => answered.push(name));
    const waiting = [statement('first statement'), scan('expecting 3 million', 3_000_000), statement('second statement'), scan('expecting 10', 10)];
    await Promise.all([running, ...waiting]);
    expect(answered).toEqual(['expecting 10', 'expecting 3 million', 'first statement', 'second statement']);
  });
});
