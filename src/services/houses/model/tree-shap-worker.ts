/**
 * The worker thread of shared-tree-shap.ts: its own TreeSHAP of the same trees, then, for each job
 * the service thread announces, the tasks it can take (the service thread takes the others).
 */
import { workerData } from 'node:worker_threads';
import { CONTROL, runTask, takeTask, type SharedBuffers } from './shared-tree-shap.js';
import { createTreeShap, type ShapModel } from './tree-shap.js';

const { model, ...buffers } = workerData as { model: ShapModel } & SharedBuffers;
const { control } = buffers;
const shap = createTreeShap(model);
Atomics.store(control, CONTROL.ready, 1);

for (let seen = 0; ; ) {
  Atomics.wait(control, CONTROL.job, seen);
  const job = Atomics.load(control, CONTROL.job);
  if (job < 0) break;
  seen = job;
  const kind = Atomics.load(control, CONTROL.kind);
  const tasks = Atomics.load(control, CONTROL.tasks);
  let splitsDecided = false;
  for (let task = takeTask(control, job, tasks); task >= 0; task = takeTask(control, job, tasks)) {
    runTask(shap, buffers, kind, task, splitsDecided);
    splitsDecided = true;
    Atomics.add(control, CONTROL.finished, 1);
    Atomics.notify(control, CONTROL.finished);
  }
}
