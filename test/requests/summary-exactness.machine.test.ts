import { describe } from 'vitest';
import { sharedSyntheticSnapshot } from '../support/shared-synthetic-snapshot.js';
import { checkExactness, describeSqliteExactness, sqliteSnapshot } from './support/summary-exactness-checks.js';

/**
 * The aggregate summaries answer exactly what a plain SQL count / GROUP BY over the rows answers, on
 * random filter combinations they cover (seeded; support/summary-exactness-checks.ts), in SQLite, at
 * the size of the data served: the synthetic snapshot (1x) that the service embeds (built as the start
 * command builds it when absent; the build the test files share, test/support/shared-synthetic-snapshot.ts),
 * and a 10x snapshot when one is given (SUMMARY_EXACTNESS_10X_SQLITE: a SQLite file written by the
 * snapshot command, e.g. from /work/scale-data/history-10x.csv, as building one takes minutes). The
 * same checks over a small snapshot, in the fast tier: summary-exactness.test.ts. PostgreSQL:
 * summary-exactness.server.test.ts.
 */
describeSqliteExactness('aggregate summaries of the synthetic snapshot (1x)', sharedSyntheticSnapshot, 240_000);

// The 10x check exists only when a 10x snapshot is given (building one takes minutes): declared, not
// skipped, so that the suite's count of skipped tests stays a count of tests that could not run.
const tenTimesSqlite = process.env.SUMMARY_EXACTNESS_10X_SQLITE;
if (tenTimesSqlite !== undefined) {
  describe('aggregate summaries of a 10x snapshot (SQLite)', () => checkExactness(() => Promise.resolve(sqliteSnapshot(tenTimesSqlite)), 40, 25));
}
