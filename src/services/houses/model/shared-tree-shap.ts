/**
 * TreeSHAP on two threads (the explained-estimates decisions' speed targets: one explanation < 1 ms, a batch of 100 < 50 ms,
 * on a 2-core machine): the work of one request is shared with one worker thread
 * (tree-shap-worker.ts) that holds its own copy of the trees. A request is a job of tasks: the
 * SHAP_CHUNKS chunks of one explanation, or the houses of a batch. Both threads take the next task
 * from a counter in shared memory until none is left, so a late or busy worker only means that this
 * thread does more; the answer waits for the tasks the worker took.
 *
 * The values are those of TreeShap.shapValues to the last bit, whoever computes what: a chunk's values
 * are written to its own row and the rows are summed in chunk order (as shapValues does), and a house
 * is computed whole by one thread.
 *
 * The worker starts on the first explanation, when the machine has at least two cores; until it has
 * built its tables, and for good if it fails or does not finish a task it took within
 * WORKER_TIMEOUT_MS, this thread computes alone.
 */
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { createTreeShap, SHAP_CHUNKS, type ShapModel, type TreeShap } from './tree-shap.js';

/** The most houses of one job (the batch routes' limit). */
const MAX_JOB_HOUSES = 100;

/** Slots of the control array (Int32, shared). */
export const CONTROL = {
  /** The job's number (1 to 0x7fff, then 1 again); -1 tells the worker to stop. */
  job: 0,
  /** JOB_CHUNKS or JOB_HOUSES. */
  kind: 1,
  tasks: 2,
  /** job << 16 | the next task to take. */
  next: 3,
  /** job << 16 | how many tasks are finished. */
  finished: 4,
  /** 1 once the worker has built its tables. */
  ready: 5,
} as const;
/** The chunks of the explanation in input row 0. */
const JOB_CHUNKS = 0;
/** The houses of input rows 0 to tasks - 1. */
const JOB_HOUSES = 1;

/** The shared memory of one TreeSHAP pair. */
export interface SharedBuffers {
  control: Int32Array;
  /** Input rows (one house's features each). */
  input: Float64Array;
  /** Output rows: a house's SHAP values (JOB_HOUSES) or a chunk's (JOB_CHUNKS). */
  output: Float64Array;
}

/** Takes the next task of job `job`: its index, or -1 when none is left. */
export function takeTask(control: Int32Array, job: number, tasks: number): number {
  for (;;) {
    const next = Atomics.load(control, CONTROL.next);
    if (next >>> 16 !== job || (next & 0xffff) >= tasks) return -1;
    if (Atomics.compareExchange(control, CONTROL.next, next, next + 1) === next) return next & 0xffff;
  }
}

/** Runs task `task` of a job: a chunk of the explanation in input row 0, or a whole house. */
export function runTask(shap: TreeShap, buffers: SharedBuffers, kind: number, task: number, splitsDecided: boolean): void {
  const n = shap.featureCount;
  if (kind === JOB_CHUNKS) {
    if (!splitsDecided) shap.decideSplits(buffers.input.subarray(0, n));
    shap.addChunk(task, buffers.output.subarray(task * n, (task + 1) * n));
  } else {
    shap.shapValues(buffers.input.subarray(task * n, (task + 1) * n), buffers.output.subarray(task * n, (task + 1) * n));
  }
}

export interface SharedTreeShap {
  readonly expectedValue: number;
  readonly featureCount: number;
  /** The SHAP values of one house's features, its chunks shared with the worker. */
  shapValues(x: Float64Array, out: Float64Array): void;
  /** The SHAP values of several houses, the houses shared with the worker. */
  shapValuesMany(xs: readonly Float64Array[], outs: readonly Float64Array[]): void;
  /** Whether the worker thread takes part (for the tests). */
  readonly shared: boolean;
  /** Stops the worker. */
  close(): Promise<void>;
}

/** How long this thread waits for a task the worker took before it computes alone for good. */
const WORKER_TIMEOUT_MS = 2000;

/** Starts the worker: the compiled file in the build; in the sources (the tests), through tsx. */
function startWorker(workerData: unknown): Worker {
  if (import.meta.url.endsWith('.js')) return new Worker(new URL('./tree-shap-worker.js', import.meta.url), { workerData });
  const require = createRequire(import.meta.url);
  const bootstrap = `require(${JSON.stringify(require.resolve('tsx/cjs/api'))}).require(${JSON.stringify(new URL('./tree-shap-worker.ts', import.meta.url).pathname)}, __filename);`;
  return new Worker(bootstrap, { eval: true, workerData });
}

export function createSharedTreeShap(model: ShapModel): SharedTreeShap {
  const shap = createTreeShap(model);
  const n = shap.featureCount;
  const rows = Math.max(MAX_JOB_HOUSES, SHAP_CHUNKS);
  const buffers: SharedBuffers = {
    control: new Int32Array(new SharedArrayBuffer(8 * 4)),
    input: new Float64Array(new SharedArrayBuffer(rows * n * 8)),
    output: new Float64Array(new SharedArrayBuffer(rows * n * 8)),
  };
  const { control, input, output } = buffers;
  let worker: Worker | undefined;
  let usable = availableParallelism() >= 2;
  let job = 0;

  /** Runs a job of `tasks` tasks with the worker; false when this thread must compute it alone. */
  function runShared(kind: number, tasks: number): boolean {
    if (!usable) return false;
    if (worker === undefined) {
      worker = startWorker({ model: { baseline: model.baseline, features: model.features, trees: model.trees }, ...buffers });
      worker.unref();
      worker.on('error', () => (usable = false));
      worker.on('exit', () => (usable = false));
    }
    if (Atomics.load(control, CONTROL.ready) !== 1) return false;
    job = job >= 0x7fff ? 1 : job + 1;
    Atomics.store(control, CONTROL.kind, kind);
    Atomics.store(control, CONTROL.tasks, tasks);
    Atomics.store(control, CONTROL.next, job << 16);
    Atomics.store(control, CONTROL.finished, job << 16);
    Atomics.store(control, CONTROL.job, job);
    Atomics.notify(control, CONTROL.job);
    let splitsDecided = false;
    for (let task = takeTask(control, job, tasks); task >= 0; task = takeTask(control, job, tasks)) {
      runTask(shap, buffers, kind, task, splitsDecided);
      splitsDecided = true;
      Atomics.add(control, CONTROL.finished, 1);
    }
    const done = (job << 16) | tasks;
    const started = Date.now();
    for (let finished = Atomics.load(control, CONTROL.finished); finished !== done; finished = Atomics.load(control, CONTROL.finished)) {
      if (Date.now() - started > WORKER_TIMEOUT_MS) {
        usable = false; // the worker took a task and did not finish it: alone from now on
        void worker.terminate();
        return false;
      }
      Atomics.wait(control, CONTROL.finished, finished, WORKER_TIMEOUT_MS);
    }
    return true;
  }

  return {
    expectedValue: shap.expectedValue,
    featureCount: n,
    get shared() {
      return usable && Atomics.load(control, CONTROL.ready) === 1;
    },
    shapValues(x: Float64Array, out: Float64Array): void {
      if (x.length !== n || out.length !== n) throw new Error(`expected ${n} features`);
      input.set(x);
      if (!runShared(JOB_CHUNKS, SHAP_CHUNKS)) {
        shap.decideSplits(x);
        for (let chunk = 0; chunk < SHAP_CHUNKS; chunk++) shap.addChunk(chunk, output.subarray(chunk * n, (chunk + 1) * n));
      }
      out.fill(0);
      for (let chunk = 0; chunk < SHAP_CHUNKS; chunk++) {
        for (let f = 0; f < n; f++) out[f] = (out[f] as number) + (output[chunk * n + f] as number);
      }
    },
    shapValuesMany(xs: readonly Float64Array[], outs: readonly Float64Array[]): void {
      for (let from = 0; from < xs.length; from += MAX_JOB_HOUSES) {
        const count = Math.min(MAX_JOB_HOUSES, xs.length - from);
        for (let h = 0; h < count; h++) input.set(xs[from + h] as Float64Array, h * n);
        if (!runShared(JOB_HOUSES, count)) {
          for (let h = 0; h < count; h++) runTask(shap, buffers, JOB_HOUSES, h, false);
        }
        for (let h = 0; h < count; h++) (outs[from + h] as Float64Array).set(output.subarray(h * n, (h + 1) * n));
      }
    },
    async close(): Promise<void> {
      usable = false;
      if (worker === undefined) return;
      Atomics.store(control, CONTROL.job, -1);
      Atomics.notify(control, CONTROL.job);
      await worker.terminate();
    },
  };
}
