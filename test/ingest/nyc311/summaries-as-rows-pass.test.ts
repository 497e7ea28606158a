import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, it } from 'vitest';
import { SMALL_HISTORY, expectSqliteSummariesAsRows } from './summaries-as-rows.js';

/**
 * The snapshot command builds the aggregate summaries as it writes the rows (no second pass over
 * them); a snapshot loaded without them gets them from its rows read back. Both ways give the same
 * tables, row for row: SQLite here, over a year of 1,500 requests; over three years of 6,000 in
 * summaries-as-rows-pass.machine.test.ts; PostgreSQL in summaries-as-rows-pass.server.test.ts.
 */
describe('aggregate summaries built as the rows are written', () => {
  const folder = mkdtempSync(join(tmpdir(), 'summaries-as-rows-pass-'));
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  it('SQLite: the tables written with the rows equal those built from the rows read back', () => expectSqliteSummariesAsRows(SMALL_HISTORY, folder), 60_000);
});
