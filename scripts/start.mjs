// The start commands (npm start, npm run start:tickets...): builds what changed (build-if-stale.mjs),
// then runs the compiled entry point in this same process. One Node process instead of a prestart
// process and then the service: a warm start saves the start-up of a second Node (about 0.1 s).
// Usage: node --max-semi-space-size=4 --max-old-space-size=1024 --single-threaded-gc scripts/start.mjs <entry under dist/, e.g. src/main.js>
import module from 'node:module';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildIfStale } from './build-if-stale.mjs';

const entry = process.argv[2];
if (entry === undefined) {
  process.stderr.write('usage: node scripts/start.mjs <entry under dist/, e.g. src/main.js>\n');
  process.exit(2);
}
// Node 22.1 and later keep V8's compiled code of the modules on disk (in the system's temporary
// folder) for the next start; Node 20 has no such cache and starts as before.
module.enableCompileCache?.();
try {
  buildIfStale();
} catch {
  process.stderr.write('Failed to start: the build failed (see the compiler output above)\n');
  process.exit(1);
}
await import(pathToFileURL(resolve(import.meta.dirname, '..', 'dist', entry)).href);
