// Run in the image's build stage after `npm prune --omit=dev`: deletes from node_modules every
// package that the services cannot load. The services read only one file of `redoc`, its standalone
// bundle (a browser script with everything inside), so redoc's own dependencies (React, MobX,
// core-js, @redocly/...: about 70 MB) are never loaded; every other production dependency is kept
// with all it depends on (dependencies, optional and installed peer dependencies, resolved the way
// Node resolves them). Then the files no process reads: source maps (Node runs without
// --enable-source-maps, and no service serves a .map) and type declarations (about 17 MB).
// Usage: node deploy/prune-runtime-modules.mjs (in the project's folder).
import { existsSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join, sep } from 'node:path';

/** Packages whose files are read but whose code is never loaded: their dependencies go. */
const READ_ONLY_PACKAGES = new Set(['redoc']);
const root = process.cwd();

function manifest(folder) {
  return JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8'));
}

/** The folder Node would load `name` from, required from `folder`. */
function resolvePackage(name, folder) {
  for (let current = folder; ; current = dirname(current)) {
    const candidate = join(current, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    if (current === root || dirname(current) === current) return null;
  }
}

const kept = new Set();
const queue = [root];
while (queue.length > 0) {
  const folder = queue.pop();
  const pkg = manifest(folder);
  if (folder !== root && READ_ONLY_PACKAGES.has(pkg.name)) continue;
  const names = [pkg.dependencies, pkg.optionalDependencies, pkg.peerDependencies].flatMap((deps) => Object.keys(deps ?? {}));
  for (const name of names) {
    const found = resolvePackage(name, folder);
    if (found === null || kept.has(found)) continue;
    kept.add(found);
    queue.push(found);
  }
}

const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8'));
let removed = 0;
// Deepest first, so that a kept package inside a removed one is never left orphaned by accident.
const paths = Object.keys(lock.packages).filter((path) => path.startsWith('node_modules/')).sort((a, b) => b.length - a.length);
for (const path of paths) {
  const folder = join(root, path);
  if (kept.has(folder) || !existsSync(folder)) continue;
  const keptInside = [...kept].some((k) => k.startsWith(folder + sep));
  if (keptInside) continue;
  rmSync(folder, { recursive: true, force: true });
  removed += 1;
}
let files = 0;
const UNREAD = /\.(map|d\.ts|d\.mts|d\.cts)$/;
for (const entry of readdirSync(join(root, 'node_modules'), { recursive: true, withFileTypes: true })) {
  if (!entry.isFile() || !UNREAD.test(entry.name)) continue;
  rmSync(join(entry.parentPath, entry.name));
  files += 1;
}
process.stdout.write(`prune-runtime-modules: kept ${kept.size} packages, removed ${removed}, and ${files} source maps and type declarations\n`);
