import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, it } from 'vitest';
import { HISTORY, expectSqliteSummariesAsRows } from './summaries-as-rows.js';

/**
 * The aggregate summaries written with the rows equal those built from the rows read back, in SQLite,
 * over three years of 6,000 requests (buckets and months closing many times): the fast tier checks a
 * year of 1,500 (summaries-as-rows-pass.test.ts); PostgreSQL in summaries-as-rows-pass.server.test.ts.
 */
describe('aggregate summaries built as the rows are written, over three years', () => {
  const folder = mkdtempSync(join(tmpdir(), 'summaries-as-rows-pass-'));
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  it('SQLite: the tables written with the rows equal those built from the rows read back', () => expectSqliteSummariesAsRows(HISTORY, folder), 60_000);
});
