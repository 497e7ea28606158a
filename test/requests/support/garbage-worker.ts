/**
 * A thread that makes array buffers of garbage of the sizes it is sent (MB), one after another, and
 * answers, for each, whether collectLargeGarbage collected and the thread's array buffers after it.
 */
import { parentPort } from 'node:worker_threads';
import { collectLargeGarbage, heldBytes } from '../../../src/services/requests/engine/walk-thread-garbage.js';

const port = parentPort;
if (port === null) throw new Error('garbage-worker runs as a worker thread');
port.on('message', (megabytes: number) => {
  // The job's array, garbage once the job has returned.
  const job = (): number => new Uint8Array(megabytes * 1024 * 1024).fill(1).length;
  job();
  const before = heldBytes();
  port.postMessage({ before, collected: collectLargeGarbage(), after: heldBytes() });
});
