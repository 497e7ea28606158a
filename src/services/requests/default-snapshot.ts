import { createProgressReporter, ensureSnapshot, isCurrentSnapshot } from '../../ingest/nyc311/index.js';

/**
 * The embedded snapshot is built at start when absent or of an older layout (synthetic export, a few seconds, no
 * download), by the snapshot builder's ensureSnapshot (safe when several processes start at once).
 * Progress goes to stderr; stdout keeps the log lines.
 */
export async function ensureDefaultSnapshot(path: string): Promise<void> {
  if (isCurrentSnapshot(path)) return;
  process.stderr.write(`[requests] Building the embedded snapshot ${path} (synthetic export, no download)\n`);
  const result = await ensureSnapshot(path, { progress: createProgressReporter(process.stderr) });
  if (result.build) process.stderr.write(`[requests] Snapshot ${result.build.meta.snapshot_id} built: ${result.build.meta.row_count} requests\n`);
}
