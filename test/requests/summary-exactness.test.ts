import { sharedSmallSyntheticSnapshot } from '../support/shared-synthetic-snapshot.js';
import { describeSqliteExactness } from './support/summary-exactness-checks.js';

/**
 * The aggregate summaries answer exactly what a plain SQL count / GROUP BY over the rows answers, on
 * random filter combinations they cover (seeded; support/summary-exactness-checks.ts), in SQLite: a
 * small synthetic history (5,000 requests of a year, as the snapshot command writes it; the build the
 * test files share, test/support/shared-synthetic-snapshot.ts). The same checks over the embedded
 * snapshot (1x) and a 10x one: summary-exactness.machine.test.ts; PostgreSQL:
 * summary-exactness.server.test.ts.
 */
describeSqliteExactness('aggregate summaries of a small synthetic history', sharedSmallSyntheticSnapshot, 120_000);
