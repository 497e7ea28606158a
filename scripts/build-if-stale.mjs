// The start commands' build step: compiles (tsc -b, incremental) only when a source file or a
// tsconfig is newer than the last build, so that a warm start does not even load the TypeScript
// compiler. scripts/start.mjs calls it in the process of the service itself (no process of its own).
// Usage: node scripts/build-if-stale.mjs (alone), or buildIfStale() from scripts/start.mjs.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, utimesSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');

function newestChange(path) {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs; // a deleted or renamed file changes its folder
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestChange(join(path, entry)));
  return newest;
}

/**
 * Runs `tsc -b tsconfig.build.json` when the build is missing or older than its inputs; throws if it
 * fails. `root`: the project (this one; test/platform/build-if-stale.process.test.ts gives a small one).
 */
export function buildIfStale(root = projectRoot) {
  const marker = join(root, 'dist', 'tsconfig.build.tsbuildinfo');
  const inputs = ['src', 'tsconfig.json', 'tsconfig.build.json', 'package-lock.json'].map((name) => join(root, name));
  const stale = !existsSync(marker) || Math.max(...inputs.filter(existsSync).map(newestChange)) > statSync(marker).mtimeMs;
  if (!stale) return;
  // stdout stays the services' log stream: the compiler's output goes to stderr.
  execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-b', 'tsconfig.build.json'], { cwd: root, stdio: ['ignore', 2, 2] });
  // tsc -b leaves its build info untouched when nothing needed compiling: mark the check done.
  const now = new Date();
  if (existsSync(marker)) utimesSync(marker, now, now);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) buildIfStale();
