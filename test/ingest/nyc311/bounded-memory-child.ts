/**
 * Child process for the bounded-memory tests, run with a small V8 heap: generates a synthetic history
 * of argv[3] rows (2016 to 2025) and either only reads its text (`generate`) or builds its SQLite
 * snapshot at argv[4] (`snapshot`). Prints { records, row_count }. `refuse FILE OUTPUT` builds the
 * snapshot of an export the command must refuse and prints { error, maxRssMiB } (the process's peak
 * resident memory, its threads included).
 */
import { buildSnapshot } from '../../../src/ingest/nyc311/build-snapshot.js';
import { generateSyntheticHistory } from '../../../src/ingest/nyc311/synthetic-export.js';

const [mode, rowsText, output] = process.argv.slice(2);
const history = { rows: Number(rowsText), fromYear: 2016, toYear: 2025 };
if (mode === 'generate') {
  const generated = generateSyntheticHistory(history);
  let bytes = 0;
  for (const chunk of generated.chunks) bytes += chunk.length;
  process.stdout.write(`${JSON.stringify({ records: generated.counts.records, bytes })}\n`);
} else if (mode === 'refuse' && output !== undefined) {
  const error = await buildSnapshot({ kind: 'file', path: rowsText as string }, { kind: 'sqlite', path: output }, { applyFilters: false }).then(
    () => null,
    (failure: unknown) => (failure as Error).message,
  );
  process.stdout.write(`${JSON.stringify({ error, maxRssMiB: process.resourceUsage().maxRSS / 1024 })}\n`);
} else if (mode === 'snapshot' && output !== undefined) {
  const result = await buildSnapshot({ kind: 'synthetic', history }, { kind: 'sqlite', path: output }, { applyFilters: false });
  process.stdout.write(`${JSON.stringify({ records: result.meta.raw_rows_read, row_count: result.meta.row_count })}\n`);
} else {
  throw new Error('usage: bounded-memory-child.ts generate|snapshot <rows> [output.sqlite] | refuse <export> <output.sqlite>');
}
