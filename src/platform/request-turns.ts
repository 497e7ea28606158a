/**
 * How much request work one turn of the event loop starts (docs/reliability.md, "Requests per
 * turn").
 *
 * In one turn Node reads every readable socket, and each of them again and again while data is
 * there (libuv reads a socket up to 32 times in a row): a client that sends its next request as
 * soon as it has an answer is read again in the same turn. Under ten busy clients one turn could
 * run twenty or thirty requests back to back, each of a millisecond or two, before a timer, a
 * deadline or the next socket had its turn: the event loop was blocked for tens of milliseconds
 * though no request took more than two.
 *
 * Here a request that comes once this turn has spent `budgetMs` since it started its first request
 * waits for a later turn, and so does every request after it while some wait: they start in order
 * of arrival, a budget's worth per turn, in the check phase of the next turns (after their timers
 * and their I/O, with no idle wait between). A turn thus runs at most its budget plus one request.
 */
export class RequestTurns {
  private turnStartedAt: number | undefined = undefined;
  private readonly waiting: (() => void)[] = [];
  private drainScheduled = false;
  private readonly endTurn = (): void => {
    this.turnStartedAt = undefined;
  };
  private readonly drainInNextTurn = (): void => {
    setImmediate(this.drain);
  };
  private readonly drain = (): void => {
    this.drainScheduled = false;
    while (this.waiting.length > 0 && !this.spent()) (this.waiting.shift() as () => void)();
    // Called in a check phase: an immediate set now runs in the next turn's.
    if (this.waiting.length > 0) this.scheduleDrain(this.drain);
  };

  /** `now` is the clock the budget is spent on (milliseconds; a test gives its own). */
  constructor(
    private readonly budgetMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    if (!(budgetMs > 0)) throw new Error('the request budget of a turn must be above 0 ms');
  }

  /** Runs `start` now, or in a later turn when this turn has spent its budget or requests wait. */
  run(start: () => void): void {
    if (this.waiting.length > 0 || this.spent()) {
      this.waiting.push(start);
      // The first immediate runs in this turn's check phase, the second in the next turn's.
      this.scheduleDrain(this.drainInNextTurn);
      return;
    }
    start();
  }

  /** Requests waiting for a later turn (for the tests). */
  get waitingCount(): number {
    return this.waiting.length;
  }

  private scheduleDrain(immediate: () => void): void {
    if (this.drainScheduled) return;
    this.drainScheduled = true;
    setImmediate(immediate);
  }

  /** Whether this turn has spent its budget; the first call of a turn starts its clock. */
  private spent(): boolean {
    const now = this.now();
    if (this.turnStartedAt === undefined) {
      this.turnStartedAt = now;
      // The check phase ends the turn's I/O: a request read after it belongs to the next turn.
      setImmediate(this.endTurn);
      return false;
    }
    return now - this.turnStartedAt >= this.budgetMs;
  }
}
