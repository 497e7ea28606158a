/**
 * The writer thread of snapshot-writer-thread.ts: runs the backend's writer on a stream whose rows
 * and summaries it takes, as the writer asks for them, from this thread's port (waiting on the
 * shared counter while none is there).
 */
import { parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';
import type { SnapshotStream, SnapshotSummaries } from './snapshot-content.js';
import { type WriterReply, type WriterRequest, type WriterWorkerData, rowsOfValues } from './snapshot-writer-thread.js';
import { writePostgresSnapshot } from './postgres-snapshot-writer.js';
import { writeSqliteSnapshot } from './sqlite-snapshot-writer.js';
import type { ServiceRequest } from '../../snapshot/service-request.js';

const { output, rowsExpected, port, signal } = workerData as WriterWorkerData;
const counter = new Int32Array(signal);
/** How long one wait lasts before the port is looked at again (a wake-up is never missed; this only bounds a wait). */
const WAIT_MS = 1000;

function reply(message: WriterReply): void {
  parentPort?.postMessage(message);
}

/** The next request, waiting for it. */
function receive(): WriterRequest {
  for (;;) {
    const seen = Atomics.load(counter, 0);
    const received = receiveMessageOnPort(port);
    if (received !== undefined) return received.message as WriterRequest;
    Atomics.wait(counter, 0, seen, WAIT_MS);
  }
}

let summaries: SnapshotSummaries | undefined;
function* rows(): Generator<ServiceRequest> {
  for (;;) {
    const request = receive();
    if (request.kind === 'abort') throw new Error('the snapshot command stopped before the end of the rows');
    if (request.kind === 'end') {
      summaries = request.summaries;
      return;
    }
    yield* rowsOfValues(request.values);
    reply({ kind: 'taken' });
  }
}

const stream: SnapshotStream = {
  rows: { [Symbol.iterator]: rows },
  rowsExpected,
  summaries: () => {
    if (summaries === undefined) throw new Error('the summaries were asked for before the end of the rows');
    return summaries;
  },
};
const onProgress = (written: number, total: number): void => reply({ kind: 'progress', written, total });
try {
  if (output.kind === 'sqlite') writeSqliteSnapshot(output.path, stream, onProgress);
  else await writePostgresSnapshot(output.url, stream, { ...(output.schema !== undefined ? { schema: output.schema } : {}), onProgress });
  reply({ kind: 'done' });
} catch (error) {
  reply({ kind: 'failed', message: error instanceof Error ? error.message : String(error) });
}
port.close();
