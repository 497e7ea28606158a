import { afterAll, describe, it } from 'vitest';
import { realExportFiles } from './real-exports.js';
import { SAMPLED, expectReadWhole, realExportBuilds } from './real-exports-checks.js';

/**
 * The real exports the fast tier does not read (real-exports.test.ts reads one file of each kind)
 * through the snapshot command's build into SQLite, with the filters off: each read whole in its
 * layout, every served row as in the file. Skipped, saying so, when the folder is absent
 * (SHARED_DATA_DIR).
 */
const files = realExportFiles().filter((file) => !SAMPLED.includes(file));
const builds = realExportBuilds();
afterAll(() => builds.remove());

describe.skipIf(files.length === 0)('the other real exports, into SQLite', () => {
  it.each(files)('%s: read whole in its layout, every served row as in the file', async (file) => {
    expectReadWhole(file, await builds.build(file));
  }, 120_000); // a file spanning 2010 to 2024 has daily numbers for 5,000 days
});
