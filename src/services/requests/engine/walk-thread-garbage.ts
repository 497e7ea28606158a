/**
 * A walk thread's garbage given back after a large job. A scan over tens of millions of rows lays its
 * values in an array of its own (value-ranks.ts, scanValues: 80 MB at 40 million requests) and grows
 * its groups' lists: garbage once it ends, which the thread's collector leaves until its next
 * collection, and the thread may then be idle for hours (the service's RSS after the groups' traffic
 * at 40 million requests: 260 to 547 MB, bench/README.md). So after each job the thread collects at
 * once when its array buffers grew past GARBAGE_BYTES_MAXIMUM since its last collection: some 15 to
 * 25 ms, a few percent of a scan that made that much garbage, and never after the small scans.
 */
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** The most bytes of array buffers a walk thread holds after a job beyond what it held after its last collection. */
export const GARBAGE_BYTES_MAXIMUM = 32 * 1024 * 1024;

/** V8's gc function, from a context made once its flag is set (the flag is the process's; the context is this thread's). */
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

/** The bytes of this thread's array buffers. */
export const heldBytes = (): number => getHeapStatistics().external_memory;

let heldAfterCollection = heldBytes();

/** Collects the thread's garbage when its array buffers grew past GARBAGE_BYTES_MAXIMUM since the last collection; whether it did. */
export function collectLargeGarbage(): boolean {
  if (heldBytes() - heldAfterCollection <= GARBAGE_BYTES_MAXIMUM) return false;
  collectGarbage();
  heldAfterCollection = heldBytes();
  return true;
}
