/**
 * A walk thread's garbage as the tests see it: sent a number of MB, the thread runs a job that leaves
 * that much garbage in array buffers and answers its array buffers after the job and whether a
 * collection waits for it to be idle; sent 'held', its array buffers now.
 */
import { parentPort } from 'node:worker_threads';
import { heldBytes, jobEnded, jobStarted } from '../../../src/services/requests/engine/walk-thread-garbage.js';

const port = parentPort;
if (port === null) throw new Error('garbage-worker runs as a worker thread');
port.on('message', (message: number | 'held') => {
  if (message === 'held') {
    port.postMessage({ held: heldBytes() });
    return;
  }
  jobStarted();
  // The job's array, garbage once the job has returned.
  const job = (): number => new Uint8Array(message * 1024 * 1024).fill(1).length;
  job();
  const held = heldBytes();
  port.postMessage({ held, collectionWaits: jobEnded() });
});
