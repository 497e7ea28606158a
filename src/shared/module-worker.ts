/**
 * A worker thread running a module beside the caller's: the compiled .js in a build; from the
 * TypeScript sources (tests, tsx), the .ts file, imported once tsx's loader is registered in the
 * thread (Node 20 does not pass a loader given in execArgv on to a worker).
 */
import { type Transferable, Worker } from 'node:worker_threads';

/**
 * Start `moduleName` (no extension), a module in the folder of `callerUrl` (the caller's
 * import.meta.url); `transferList` moves what workerData holds of it (a MessagePort) to the thread.
 */
export function startModuleWorker(callerUrl: string, moduleName: string, workerData: unknown, transferList: Transferable[] = []): Worker {
  if (!callerUrl.endsWith('.ts')) return new Worker(new URL(`./${moduleName}.js`, callerUrl), { workerData, transferList });
  const module = JSON.stringify(new URL(`./${moduleName}.ts`, callerUrl).href);
  const bootstrap = `import('tsx/esm/api').then(({ register }) => { register(); return import(${module}); })`;
  return new Worker(bootstrap, { eval: true, workerData, transferList });
}
