import { prepareSnapshot } from '../../../src/ingest/nyc311/build-snapshot.js';
import type { SnapshotContent, SnapshotStream } from '../../../src/ingest/nyc311/snapshot-content.js';

/**
 * What the tests of the snapshot writer thread write: a synthetic history of 2,500 rows after
 * cleaning (more than two batches of the writer thread, and a last batch that is not full).
 */
export async function writerThreadContent(): Promise<SnapshotContent> {
  return (await prepareSnapshot({ kind: 'synthetic', history: { rows: 2600, fromYear: 2024, toYear: 2025 } }, { applyFilters: false, threads: 0 })).content;
}

/** The content as the writer thread reads it: `rows` (all of them by default), then the summaries. */
export function streamOfContent(content: SnapshotContent, rows: Iterable<SnapshotContent['rows'][number]> = content.rows): SnapshotStream {
  return { rows, rowsExpected: content.rows.length, summaries: () => content };
}
