/**
 * The snapshot's writer on a thread of its own (snapshot-writer-worker.ts): this thread reads the
 * staged requests in order, runs the rules that need them all, and computes the daily numbers and
 * the content hash; the writer thread stores the rows, builds the aggregate summaries, the row
 * columns and the indexes, both at once on two cores. The rows cross in batches of plain values, a
 * bounded number at a time (the writer acknowledges each), so memory does not grow with the rows.
 * The writer takes the messages synchronously (a shared counter wakes it), so the writers of both
 * backends run there unchanged, reading the rows as an iterable.
 */
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import type { SnapshotOutput, SnapshotStream, SnapshotSummaries, WriteProgress } from './snapshot-content.js';
import { SERVICE_REQUEST_FIELDS, type ServiceRequest } from '../../snapshot/service-request.js';
import { startModuleWorker } from '../../shared/module-worker.js';

/** Values of a batch of rows, SERVICE_REQUEST_FIELDS of each in turn. */
export type RowValues = (string | number | null)[];

/** This thread to the writer. */
export type WriterRequest =
  | { kind: 'rows'; values: RowValues }
  | { kind: 'end'; summaries: SnapshotSummaries }
  | { kind: 'abort' };

/** The writer to this thread. */
export type WriterReply =
  | { kind: 'taken' }
  | { kind: 'progress'; written: number; total: number }
  | { kind: 'done' }
  | { kind: 'failed'; message: string };

export interface WriterWorkerData {
  output: SnapshotOutput;
  rowsExpected: number;
  /** The port the requests come on, and the counter that wakes the writer when one is posted. */
  port: MessagePort;
  signal: SharedArrayBuffer;
}

/** Rows per batch. */
const ROWS_PER_BATCH = 1000;
/** Batches posted and not yet taken by the writer, at most. */
const BATCHES_IN_FLIGHT = 16;

/** The rows of a batch of values, in order. */
export function* rowsOfValues(values: RowValues): Generator<ServiceRequest> {
  const width = SERVICE_REQUEST_FIELDS.length;
  for (let at = 0; at < values.length; at += width) {
    const row = {} as Record<string, unknown>;
    for (let k = 0; k < width; k++) row[SERVICE_REQUEST_FIELDS[k] as string] = values[at + k];
    yield row as unknown as ServiceRequest;
  }
}

/** Store the stream's snapshot through a writer thread; resolves once it is stored (or rejects, nothing stored). */
export async function writeSnapshotOnThread(output: SnapshotOutput, stream: SnapshotStream, onProgress?: WriteProgress): Promise<void> {
  const channel = new MessageChannel();
  const signal = new Int32Array(new SharedArrayBuffer(4));
  const worker = startModuleWorker(
    import.meta.url,
    'snapshot-writer-worker',
    { output, rowsExpected: stream.rowsExpected, port: channel.port2, signal: signal.buffer } satisfies WriterWorkerData,
    [channel.port2],
  );
  let inFlight = 0;
  let done = false;
  let failure: Error | null = null;
  let wakeUp: (() => void) | null = null;
  const wake = (): void => {
    const resolve = wakeUp;
    wakeUp = null;
    resolve?.();
  };
  const throwIfFailed = (): void => {
    if (failure !== null) throw failure;
  };
  const until = async (condition: () => boolean): Promise<void> => {
    while (!condition()) {
      throwIfFailed();
      await new Promise<void>((resolve) => (wakeUp = resolve));
    }
    throwIfFailed();
  };
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  worker.on('message', (reply: WriterReply) => {
    if (reply.kind === 'taken') inFlight--;
    else if (reply.kind === 'progress') onProgress?.(reply.written, reply.total);
    else if (reply.kind === 'done') done = true;
    else failure ??= new Error(reply.message);
    wake();
  });
  worker.on('error', (error) => {
    failure ??= error;
    wake();
  });
  void exited.then(() => {
    if (!done) failure ??= new Error('the snapshot writer thread stopped before its end');
    wake();
  });
  const post = (request: WriterRequest): void => {
    channel.port1.postMessage(request);
    Atomics.add(signal, 0, 1);
    Atomics.notify(signal, 0);
  };

  try {
    let values: RowValues = [];
    for (const row of stream.rows) {
      for (const field of SERVICE_REQUEST_FIELDS) values.push(row[field]);
      if (values.length === ROWS_PER_BATCH * SERVICE_REQUEST_FIELDS.length) {
        throwIfFailed();
        post({ kind: 'rows', values });
        inFlight++;
        values = [];
        if (inFlight >= BATCHES_IN_FLIGHT) await until(() => inFlight < BATCHES_IN_FLIGHT);
      }
    }
    if (values.length > 0) post({ kind: 'rows', values });
    const summaries = stream.summaries();
    post({ kind: 'end', summaries: { ...summaries, dailyStats: [...summaries.dailyStats] } });
    await until(() => done);
  } catch (error) {
    post({ kind: 'abort' });
    await exited;
    throw error;
  } finally {
    channel.port1.close();
  }
  await exited;
}
