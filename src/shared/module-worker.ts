/**
 * A worker thread running a module beside the caller's: the compiled .js in a build. From the
 * TypeScript sources (tests, tsx), the .ts module and what it imports from the project are bundled
 * into one ES module by esbuild, once per process (packages stay imports), and the thread starts from
 * it as it would from the build, instead of registering tsx's loader in each thread (Node 20 does not
 * pass a loader given in execArgv on to a worker), which cost every thread's start several times
 * more (bench/README.md, "The fast tier").
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { type Transferable, Worker } from 'node:worker_threads';

/**
 * Start `moduleName` (no extension), a module in the folder of `callerUrl` (the caller's
 * import.meta.url); `transferList` moves what workerData holds of it (a MessagePort) to the thread.
 */
export function startModuleWorker(callerUrl: string, moduleName: string, workerData: unknown, transferList: Transferable[] = []): Worker {
  const entry = callerUrl.endsWith('.ts') ? bundleOf(fileURLToPath(new URL(`./${moduleName}.ts`, callerUrl))) : new URL(`./${moduleName}.js`, callerUrl);
  return new Worker(entry, { workerData, transferList });
}

const bundles = new Map<string, URL>();

/**
 * The bundle of a TypeScript module, in node_modules/.cache/module-workers/ (where its packages
 * resolve), named by its content: processes that bundle the same sources write the same file, and
 * an edited source gets a new one.
 */
function bundleOf(entry: string): URL {
  const known = bundles.get(entry);
  if (known !== undefined) return known;
  const require = createRequire(import.meta.url);
  const esbuild = require('esbuild') as typeof import('esbuild');
  const built = esbuild.buildSync({ entryPoints: [entry], bundle: true, platform: 'node', format: 'esm', target: 'node20', packages: 'external', write: false, logLevel: 'silent' });
  const text = built.outputFiles[0]?.contents ?? new Uint8Array();
  const folder = join(dirname(require.resolve('esbuild/package.json')), '..', '.cache', 'module-workers');
  const name = entry.slice(entry.lastIndexOf('/') + 1).replace(/\.ts$/, '');
  const path = join(folder, `${name}-${createHash('sha256').update(text).digest('hex').slice(0, 16)}.mjs`);
  if (!existsSync(path)) {
    mkdirSync(folder, { recursive: true });
    const written = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}`;
    writeFileSync(written, text);
    renameSync(written, path);
  }
  const url = pathToFileURL(path);
  bundles.set(entry, url);
  return url;
}
