// npm start's build step: compiles (tsc -b, incremental) only when a source file or a tsconfig is
// newer than the last build, so that a warm start does not even load the TypeScript compiler.
// Usage: node scripts/build-if-stale.mjs
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, utimesSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const marker = join(root, 'dist', 'tsconfig.build.tsbuildinfo');

function newestChange(path) {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs; // a deleted or renamed file changes its folder
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestChange(join(path, entry)));
  return newest;
}

const inputs = ['src', 'tsconfig.json', 'tsconfig.build.json', 'package-lock.json'].map((name) => join(root, name));
const stale = !existsSync(marker) || Math.max(...inputs.filter(existsSync).map(newestChange)) > statSync(marker).mtimeMs;
if (stale) {
  execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-b', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
  // tsc -b leaves its build info untouched when nothing needed compiling: mark the check done.
  const now = new Date();
  if (existsSync(marker)) utimesSync(marker, now, now);
}
