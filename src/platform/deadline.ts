/**
 * A deadline on a wait for a dependency (Redis, the readiness check): rejects with `late()` when
 * `work` has not settled `ms` after now. The verdict waits one more turn of the event loop
 * (setImmediate, after the I/O phase): a reply that arrived while the process was busy or
 * descheduled, and is read in the same turn as the timer, is in time. A plain timer would fire first
 * there (timers run before I/O) and call a dependency that answered late for this process's own
 * delay. `work` itself goes on; its late result is dropped.
 */
export function withinDeadline<T>(work: Promise<T>, ms: number, late: () => Error): Promise<T> {
  return new Promise<T>((resolveWork, rejectWork) => {
    let settled = false;
    const timer = setTimeout(() => {
      setImmediate(() => {
        if (settled) return;
        settled = true;
        rejectWork(late());
      });
    }, ms);
    work.then(
      (value) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolveWork(value);
      },
      (error: unknown) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        rejectWork(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}
