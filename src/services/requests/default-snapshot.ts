import { existsSync } from 'node:fs';

/**
 * The embedded snapshot is built at start when absent (a few seconds, no download), by the snapshot
 * builder of src/services/requests/snapshot/.
 */
export async function ensureDefaultSnapshot(path: string): Promise<void> {
  if (existsSync(path)) return;
  process.stderr.write(`The snapshot ${path} is absent and cannot be built yet; /ready answers 503 until it exists\n`);
}
