import type { ServerResponse } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from './error-registry.js';
import { whenAnswerWorkEnds } from './long-answers.js';
import { platformPlugin } from './platform-app.js';

/**
 * A budget per kind of work (docs/reliability.md, "Work budgets"): each expensive operation of a
 * service (explanations, exports, row walks) runs at most `concurrency` at once; up to `queue` more
 * wait their turn, in order of arrival, each at most `maxWaitMs`; past the queue a request is
 * answered 503 `overloaded` with `Retry-After` at once, before its body is read, and so is a request
 * that waited its longest. A route takes part by declaration,
 * `config: { workBudget }`; the platform admits it before its handler (app.ts) and gives its place
 * back when its answer's work is over (long-answers.ts, `whenAnswerWorkEnds`): its response has
 * closed (finished, its client gone, cut) and the stream it sent, if any, has closed too (an export
 * holds its place while it streams, and until its last step has ended after the response).
 *
 * A place given back goes to the next waiting request on the next turn of the event loop
 * (setImmediate), never at once, and so does a request that finds a place free: between two jobs of
 * one budget, the loop reads its sockets, so that /health and cheap routes get their turn whatever the
 * flood (without it, a burst of requests read in one I/O phase would each run to its end in turn,
 * every place being free again when the next one is read).
 */
export interface WorkBudgetLimits {
  /** Jobs that run at once. */
  concurrency: number;
  /** Jobs that may wait for a place; the next one is answered 503 overloaded. */
  queue: number;
  /** A job that has waited this long is answered 503 overloaded (every wait has a bound). */
  maxWaitMs: number;
}

/** Seconds a client is told to wait after a 503 overloaded (Retry-After). */
export const OVERLOADED_RETRY_AFTER_SECONDS = 1;

interface Waiting {
  /** Holds the place once given until the work is done: calls `release` then (once). */
  hold: (release: () => void) => void;
  start: (error?: Error) => void;
  /** Set when it started, or left the queue (its client went away, or it waited too long). */
  gone: boolean;
  timer: NodeJS.Timeout | undefined;
}

export class WorkBudget {
  private running = 0;
  private readonly waiting: Waiting[] = [];
  private turnScheduled = false;

  constructor(
    /** The kind of work, e.g. `explanation batches`. */
    readonly name: string,
    readonly limits: WorkBudgetLimits,
  ) {
    if (!(limits.concurrency >= 1 && limits.queue >= 0 && limits.maxWaitMs > 0)) throw new Error(`work budget ${name}: concurrency must be at least 1, queue at least 0, maxWaitMs above 0`);
  }

  /** Jobs running, and jobs waiting (for the tests and metrics). */
  get load(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waiting.length };
  }

  /** Whether a new request would be refused now. */
  get full(): boolean {
    return this.running >= this.limits.concurrency && this.waiting.length >= this.limits.queue;
  }

  /**
   * Runs `start` when the request has a place (at once when one is free and nobody waits), or with
   * the 503 overloaded error when the queue is full. The place is held until the answer's work is over
   * (`whenAnswerWorkEnds`).
   */
  admit(response: ServerResponse, start: (error?: Error) => void): void {
    const holdUntilWorkEnds = (release: () => void): void => whenAnswerWorkEnds(response, release);
    const waiting = this.enter(holdUntilWorkEnds, start);
    // A client gone while it waited leaves the queue.
    if (waiting !== null) response.once('close', () => this.leave(waiting));
  }

  /**
   * A place for work that no single request owns (an answer built once for every request asking for
   * it, EtagCaching.sendKept): resolves, when a place is given, with the function that gives it back;
   * rejects with 503 overloaded as `admit` refuses. The caller must release it (its work is bounded).
   */
  acquire(): Promise<() => void> {
    return new Promise((resolve, reject) => {
      let release: (() => void) | undefined;
      this.enter(
        (given) => (release = given),
        (error) => (error === undefined ? resolve(release as () => void) : reject(error)),
      );
    });
  }

  /** Starts (on the next turn) or queues a job; the queued entry, or null when it started or was refused. */
  private enter(hold: Waiting['hold'], start: Waiting['start']): Waiting | null {
    if (this.running < this.limits.concurrency && this.waiting.length === 0) {
      // Even a free place starts on the next turn: requests read in one I/O phase (a flood arrives
      // as a burst) each start after the others of the burst, and the unbudgeted ones, are read.
      this.run(hold);
      setImmediate(start);
      return null;
    }
    if (this.waiting.length >= this.limits.queue) {
      start(overloaded());
      return null;
    }
    const waiting: Waiting = { hold, start, gone: false, timer: undefined };
    this.waiting.push(waiting);
    waiting.timer = setTimeout(() => {
      if (this.leave(waiting)) start(overloaded());
    }, this.limits.maxWaitMs);
    return waiting;
  }

  /** Takes a request out of the queue; false when it had already left it. */
  private leave(waiting: Waiting): boolean {
    if (waiting.gone) return false;
    waiting.gone = true;
    clearTimeout(waiting.timer);
    const at = this.waiting.indexOf(waiting);
    if (at >= 0) this.waiting.splice(at, 1);
    return true;
  }

  private run(hold: Waiting['hold']): void {
    this.running += 1;
    let released = false;
    hold(() => {
      if (released) return;
      released = true;
      this.running -= 1;
      this.nextTurn();
    });
  }

  /** Starts waiting requests on the next turn of the loop (once per turn, however many places freed). */
  private nextTurn(): void {
    if (this.turnScheduled || this.waiting.length === 0) return;
    this.turnScheduled = true;
    setImmediate(() => {
      this.turnScheduled = false;
      this.startWaiting();
    });
  }

  /** Starts waiting requests, in order, while there is a place. */
  private startWaiting(): void {
    while (this.running < this.limits.concurrency) {
      const waiting = this.waiting.shift();
      if (waiting === undefined) return;
      if (waiting.gone) continue;
      waiting.gone = true;
      clearTimeout(waiting.timer);
      this.run(waiting.hold);
      waiting.start();
    }
  }
}

function overloaded(): ApiError {
  return new ApiError('overloaded', { headers: { 'Retry-After': String(OVERLOADED_RETRY_AFTER_SECONDS) } });
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route's work runs within this budget (work-budget.ts): 503 overloaded past its queue. */
    workBudget?: WorkBudget;
    /**
     * The route's answers are built once for every request asking while one is built, and kept
     * (EtagCaching.sendKept): the build takes the budget's place (`acquire`), not each request, so
     * requests joining a build or finding its answer kept never wait for a place nor are refused.
     */
    budgetsSharedBuilds?: boolean;
  }
}

/** onRequest: a budget whose queue is full refuses at once, before the body is read. */
export function refuseWhenFull(request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void): void {
  const budget = requestBudget(request);
  done(budget?.full === true ? overloaded() : undefined);
}

/** preHandler: the handler runs when the budget gives the request a place. */
export function admitToBudget(request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void): void {
  const budget = requestBudget(request);
  if (budget === undefined) done();
  else budget.admit(reply.raw, done);
}

/** The budget each request of the route takes a place of (none when the route budgets its shared builds itself). */
function requestBudget(request: FastifyRequest): WorkBudget | undefined {
  const config = request.routeOptions.config;
  return config.budgetsSharedBuilds === true ? undefined : config.workBudget;
}

/**
 * A route's work budget: full, it refuses before the body is read (onRequest, 503 overloaded);
 * otherwise the handler runs when the budget gives the request a place (preHandler).
 */
export const workBudgetPlugin = platformPlugin('work-budget', (app) => {
  app.addHook('onRequest', refuseWhenFull);
  app.addHook('preHandler', admitToBudget);
});

/** Work on the event loop gives way to I/O at least this often (a few milliseconds). */
export const TIME_SLICE_MS = 5;

/**
 * A long loop of synchronous work in a request (an export's rows, a batch's houses) calls `pause()`
 * between its steps: once TIME_SLICE_MS have passed since the last pause, it waits for the next turn
 * of the event loop (setImmediate, after the I/O phase), so that other requests and /health are read
 * and answered whatever the socket of this one does (a fast reader never makes it wait otherwise).
 */
export class TimeSlice {
  private started = performance.now();

  /** Whether the slice is used up. */
  get due(): boolean {
    return performance.now() - this.started >= TIME_SLICE_MS;
  }

  /** Waits for the next turn of the loop if the slice is used up; resolves at once otherwise. */
  async pause(): Promise<void> {
    if (!this.due) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.started = performance.now();
  }
}

/**
 * `work` applied to `items` in pieces of `size` (each piece one synchronous call), the results in
 * order, pausing between pieces as a TimeSlice does: a batch gives way to other requests while it is
 * computed. `size` is chosen so that one piece takes about a millisecond or a few.
 */
export async function mapInPieces<T, R>(items: readonly T[], size: number, work: (piece: readonly T[]) => R[]): Promise<R[]> {
  const slice = new TimeSlice();
  const results: R[] = [];
  for (let from = 0; from < items.length; from += size) {
    if (from > 0) await slice.pause();
    results.push(...work(items.slice(from, from + size)));
  }
  return results;
}
