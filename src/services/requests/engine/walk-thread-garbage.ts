/**
 * A walk thread's garbage given back once it is idle. A scan over tens of millions of rows lays its
 * values in an array of its own (value-ranks.ts, scanValues: 80 MB at 40 million requests) and grows
 * its groups' lists: garbage once it ends. While jobs follow each other the thread's collector takes
 * it at its own pace (a collection after each such job cost 5 to 10% of the answers at 40 million
 * requests, bench/README.md); but an idle thread makes no collection, and may be idle for hours with
 * that garbage (the service's RSS after the groups' traffic at 40 million requests: 340 to 380 MB,
 * 270 to 310 with this). So a thread whose array buffers grew past GARBAGE_BYTES_MAXIMUM since its
 * last collection collects once it has had no job for IDLE_BEFORE_COLLECTION_MS.
 */
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** The most bytes of array buffers a walk thread holds while idle beyond what it held after its last collection. */
export const GARBAGE_BYTES_MAXIMUM = 32 * 1024 * 1024;
/** How long a walk thread has had no job before it collects. */
export const IDLE_BEFORE_COLLECTION_MS = 20;

/** V8's gc function, from a context made once its flag is set (the flag is the process's; the context is this thread's). */
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

/** The bytes of this thread's array buffers. */
export const heldBytes = (): number => getHeapStatistics().external_memory;

let heldAfterCollection = heldBytes();
let idleCollection: ReturnType<typeof setTimeout> | undefined;

/** A job starts: the collection waiting for the thread to be idle waits for the job's end again. */
export function jobStarted(): void {
  clearTimeout(idleCollection);
  idleCollection = undefined;
}

/** A job ended: a collection once the thread has been idle, when its array buffers grew past GARBAGE_BYTES_MAXIMUM; whether one waits. */
export function jobEnded(): boolean {
  if (heldBytes() - heldAfterCollection <= GARBAGE_BYTES_MAXIMUM) return false;
  clearTimeout(idleCollection);
  idleCollection = setTimeout(() => {
    idleCollection = undefined;
    collectGarbage();
    heldAfterCollection = heldBytes();
  }, IDLE_BEFORE_COLLECTION_MS);
  idleCollection.unref();
  return true;
}
