import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, rmSync, statSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ensureDefaultSnapshot } from '../../src/services/requests/default-snapshot.js';
import { ensureSnapshot } from '../../src/ingest/nyc311/ensure-snapshot.js';
import { REPO_ROOT } from './http.js';

/**
 * The default synthetic snapshot (the 109,915 requests the service embeds), built once and shared by
 * the tests that read it: building it costs more CPU than any test file, and every build of the same
 * code gives the same bytes. It lives in the system's temporary folder under a name that is the hash of
 * the code that writes it (the export's generator, the cleaning, the writers: src/ingest, src/snapshot,
 * src/shared), so that a change to that code builds a new one and no checkout reads another's. It is
 * built as the start command builds the embedded snapshot when absent (ensureDefaultSnapshot: under a
 * lock, to a temporary file renamed into place), so the test files that ask for it at once build it
 * once. Tests open it read-only. Files of this kind unused for a day are removed.
 */
const BUILDER_SOURCES = ['src/ingest', 'src/snapshot', 'src/shared'];
const PREFIX = 'city-services-synthetic-snapshot-';
const UNUSED_MS = 24 * 3600 * 1000;

function builderHash(): string {
  const hash = createHash('sha256');
  for (const folder of BUILDER_SOURCES) {
    const files = readdirSync(resolve(REPO_ROOT, folder), { recursive: true, encoding: 'utf8' })
      .filter((file) => file.endsWith('.ts'))
      .sort();
    for (const file of files) hash.update(`${folder}/${file}\0`).update(readFileSync(resolve(REPO_ROOT, folder, file))).update('\0');
  }
  return hash.digest('hex').slice(0, 16);
}

function removeUnused(kept: string): void {
  for (const name of readdirSync(tmpdir())) {
    if (!name.startsWith(PREFIX) || name.startsWith(kept)) continue;
    const path = join(tmpdir(), name);
    try {
      if (Date.now() - statSync(path).mtimeMs > UNUSED_MS) rmSync(path, { force: true });
    } catch {
      // Removed meanwhile by another run.
    }
  }
}

/** Marks the file used now, and removes the unused ones of other code. */
function keep(name: string, path: string): string {
  const now = new Date();
  utimesSync(path, now, now);
  removeUnused(name);
  return path;
}

/** The path of the shared default synthetic snapshot, built first if this code's is absent. */
export async function sharedSyntheticSnapshot(): Promise<string> {
  const name = `${PREFIX}${builderHash()}`;
  const path = join(tmpdir(), `${name}.sqlite`);
  await ensureDefaultSnapshot(path);
  return keep(name, path);
}

/**
 * A small synthetic history (5,000 requests of 2025) as the snapshot command writes it, shared the same
 * way: for the fast tier's tests of what the store answers, where the 109,915 requests of the default
 * snapshot add time, not cases (their checks at that size are in `*.machine.test.ts` files).
 */
export const SMALL_SYNTHETIC_HISTORY = { rows: 5_000, fromYear: 2025, toYear: 2025 };

/** The path of the shared small synthetic snapshot, built first (in about a second) if this code's is absent. */
export async function sharedSmallSyntheticSnapshot(): Promise<string> {
  const { rows, fromYear, toYear } = SMALL_SYNTHETIC_HISTORY;
  const name = `${PREFIX}${builderHash()}-${rows}-rows-${fromYear}-${toYear}`;
  const path = join(tmpdir(), `${name}.sqlite`);
  await ensureSnapshot(path, { input: { kind: 'synthetic', history: SMALL_SYNTHETIC_HISTORY } });
  return keep(name, path);
}
