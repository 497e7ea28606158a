import { AsyncLocalStorage } from 'node:async_hooks';
import type { ServerResponse } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from './error-registry.js';
import { whenAnswerWorkEnds } from './long-answers.js';
import { platformPlugin } from './platform-app.js';

/**
 * A budget per kind of work (docs/reliability.md, "Work budgets"): each expensive operation of a
 * service (explanations, exports, row walks) runs at most `concurrency` at once; up to `queue` more
 * wait their turn, in order of arrival (between keys, by fair shares: WorkBudget), each at most
 * `maxWaitMs`; past the queue a request is
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

/** A place that work running in an async context holds (WorkBudget.holding): given back while it waits away from it. */
interface HeldPlace {
  release: () => void;
  /** The waits in `awayFromPlace` running: the place is given back at the first and taken again after the last. */
  away: number;
  /** The place being taken again (settled when it is held, or refused). */
  taking: Promise<void>;
  takeAgain: () => Promise<void>;
}

const heldPlaces = new AsyncLocalStorage<HeldPlace>();

/**
 * Waits for `wait` (a job queued for another thread) with the work budget's place of the work that
 * runs it (WorkBudget.holding) given back meanwhile, and taken again, first in the queue, before going
 * on; outside `holding`, merely waits.
 */
export async function awayFromPlace<T>(wait: Promise<T>): Promise<T> {
  const place = heldPlaces.getStore();
  if (place === undefined) return wait;
  await place.taking;
  if (place.away++ === 0) place.release();
  try {
    return await wait;
  } finally {
    if (--place.away === 0) place.taking = place.takeAgain();
    await place.taking;
  }
}

/** Seconds a client is told to wait after a 503 overloaded (Retry-After). */
export const OVERLOADED_RETRY_AFTER_SECONDS = 1;

/**
 * Whose a job is (api-key.ts, budgetOwner): the key's id, and whether the service's keys tell several
 * callers apart (with one shared key there is nobody to be fair to).
 */
export interface BudgetOwner {
  id: string;
  shared: boolean;
}

interface Waiting {
  owner: BudgetOwner | null;
  /** Holds the place once given until the work is done: calls `release` then (once). */
  hold: (release: () => void) => void;
  start: (error?: Error) => void;
  /** Set when it started, or left the queue (its client went away, or it waited too long). */
  gone: boolean;
  timer: NodeJS.Timeout | undefined;
}

/** What one caller has of a budget: its places, its waiting jobs, and when it last got a place. */
interface OwnerShare {
  running: number;
  waiting: number;
  lastStart: number;
}

/**
 * Fair shares between callers (keys), when the keys tell several apart (`BudgetOwner.shared`):
 *
 * - one caller holds at most its share of the places: the places divided by the callers running or
 *   waiting (rounded up), and never all of them when there are two or more, even alone: a place is
 *   kept for whoever comes next, so that a key flooding exports leaves the other export place free
 *   for another key at once (no running job is ever stopped, so a share can only be kept, not taken
 *   back). A caller at its share waits in the queue even while a place is free;
 * - a freed place goes to the waiting caller that holds the fewest places, and among equals to the one
 *   that got a place longest ago (a round robin between callers; in order of arrival within one);
 * - a full queue takes a newcomer in by refusing (503 overloaded) the latest waiting job of the caller
 *   with the most waiting jobs, when that caller has at least two more than the newcomer: a flood
 *   cannot fill the queue against the others.
 *
 * Jobs of no caller (a shared build, `acquire`; a service without keys) and jobs of one shared key keep
 * the plain order of arrival, every place usable by any.
 */
export class WorkBudget {
  private running = 0;
  private readonly waiting: Waiting[] = [];
  private readonly owners = new Map<string, OwnerShare>();
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

  /** The places and waiting jobs of one caller (for the tests). */
  loadOf(ownerId: string): { running: number; waiting: number } {
    const share = this.owners.get(ownerId);
    return { running: share?.running ?? 0, waiting: share?.waiting ?? 0 };
  }

  /** Whether a new request of `owner` would be refused now (its queue full, and no flood to make room). */
  refuses(owner: BudgetOwner | null = null): boolean {
    if (this.waiting.length < this.limits.queue) return false;
    if (this.running < this.limits.concurrency && this.waiting.length === 0 && this.underShare(owner)) return false;
    return this.floodToRefuse(owner) === undefined;
  }

  /**
   * Runs `start` when the request has a place (at once when one is free and nobody waits), or with
   * the 503 overloaded error when the queue is full. The place is held until the answer's work is over
   * (`whenAnswerWorkEnds`).
   */
  admit(response: ServerResponse, start: (error?: Error) => void, owner: BudgetOwner | null = null): void {
    const holdUntilWorkEnds = (release: () => void): void => whenAnswerWorkEnds(response, release);
    const waiting = this.enter(owner, holdUntilWorkEnds, start);
    // A client gone while it waited leaves the queue.
    if (waiting !== null) response.once('close', () => this.leave(waiting));
  }

  /**
   * A place for work that no single request owns (an answer built once for every request asking for
   * it, EtagCaching.sendKept): resolves, when a place is given, with the function that gives it back;
   * rejects with 503 overloaded as `admit` refuses. The caller must release it (its work is bounded).
   * `returning`: work that held a place and gave it back while it waited elsewhere (`awayFromPlace`):
   * it waits first in the queue, and a full queue does not refuse it.
   */
  acquire(returning = false): Promise<() => void> {
    return new Promise((resolve, reject) => {
      let release: (() => void) | undefined;
      this.enter(
        null,
        (given) => (release = given),
        (error) => (error === undefined ? resolve(release as () => void) : reject(error)),
        returning,
      );
    });
  }

  /**
   * Runs `work` holding a place, as `acquire`, except while it waits in `awayFromPlace` (a job queued
   * for a walk worker): the places bound the work of this thread, not the waits for other threads.
   */
  async holding<T>(work: () => Promise<T>): Promise<T> {
    const place: HeldPlace = { release: await this.acquire(), away: 0, taking: Promise.resolve(), takeAgain: async () => void (place.release = await this.acquire(true)) };
    try {
      return await heldPlaces.run(place, work);
    } finally {
      await place.taking.catch(() => undefined);
      place.release();
    }
  }

  /** Starts (on the next turn) or queues a job; the queued entry, or null when it started or was refused. */
  private enter(owner: BudgetOwner | null, hold: Waiting['hold'], start: Waiting['start'], returning = false): Waiting | null {
    if (this.running < this.limits.concurrency && this.waiting.length === 0 && this.underShare(owner)) {
      // Even a free place starts on the next turn: requests read in one I/O phase (a flood arrives
      // as a burst) each start after the others of the burst, and the unbudgeted ones, are read.
      this.run(owner, hold);
      setImmediate(start);
      return null;
    }
    if (this.waiting.length >= this.limits.queue && !returning) {
      const flood = this.floodToRefuse(owner);
      if (flood === undefined) {
        start(overloaded());
        return null;
      }
      if (this.leave(flood)) flood.start(overloaded());
    }
    const waiting: Waiting = { owner, hold, start, gone: false, timer: undefined };
    if (returning) this.waiting.unshift(waiting);
    else this.waiting.push(waiting);
    if (owner !== null) this.shareOf(owner.id).waiting += 1;
    waiting.timer = setTimeout(() => {
      if (this.leave(waiting)) start(overloaded());
    }, this.limits.maxWaitMs);
    // A place may be free that the waiting callers could not take (each at its share): this one may.
    this.nextTurn();
    return waiting;
  }

  /** The latest waiting job of the caller with the most waiting jobs, when it has two more than `owner`. */
  private floodToRefuse(owner: BudgetOwner | null): Waiting | undefined {
    if (owner?.shared !== true) return undefined;
    let flooding: string | undefined;
    let most = (this.owners.get(owner.id)?.waiting ?? 0) + 1;
    for (const [id, share] of this.owners) {
      if (share.waiting > most) {
        most = share.waiting;
        flooding = id;
      }
    }
    if (flooding === undefined) return undefined;
    for (let at = this.waiting.length - 1; at >= 0; at--) {
      const waiting = this.waiting[at] as Waiting;
      if (!waiting.gone && waiting.owner?.id === flooding) return waiting;
    }
    return undefined;
  }

  /** Whether `owner` may take one more place now. */
  private underShare(owner: BudgetOwner | null): boolean {
    if (owner === null || !owner.shared) return true;
    const { concurrency } = this.limits;
    let callers = this.owners.has(owner.id) ? 0 : 1;
    for (const share of this.owners.values()) if (share.running > 0 || share.waiting > 0) callers += 1;
    let places = Math.ceil(concurrency / Math.max(callers, 1));
    if (concurrency >= 2) places = Math.min(places, concurrency - 1);
    return (this.owners.get(owner.id)?.running ?? 0) < Math.max(1, places);
  }

  private shareOf(id: string): OwnerShare {
    let share = this.owners.get(id);
    if (share === undefined) this.owners.set(id, (share = { running: 0, waiting: 0, lastStart: -Infinity }));
    return share;
  }

  /** A caller with nothing running or waiting is forgotten: the map holds only the callers of the moment. */
  private forgetIfIdle(id: string): void {
    const share = this.owners.get(id);
    if (share !== undefined && share.running === 0 && share.waiting === 0) this.owners.delete(id);
  }

  /** Takes a request out of the queue; false when it had already left it. */
  private leave(waiting: Waiting): boolean {
    if (waiting.gone) return false;
    waiting.gone = true;
    clearTimeout(waiting.timer);
    const at = this.waiting.indexOf(waiting);
    if (at >= 0) this.waiting.splice(at, 1);
    this.leftQueue(waiting);
    // The callers' shares may have grown (one caller fewer).
    this.nextTurn();
    return true;
  }

  private leftQueue(waiting: Waiting): void {
    if (waiting.owner === null) return;
    const share = this.shareOf(waiting.owner.id);
    share.waiting -= 1;
    this.forgetIfIdle(waiting.owner.id);
  }

  private run(owner: BudgetOwner | null, hold: Waiting['hold']): void {
    this.running += 1;
    if (owner !== null) {
      const share = this.shareOf(owner.id);
      share.running += 1;
      share.lastStart = performance.now();
    }
    let released = false;
    hold(() => {
      if (released) return;
      released = true;
      this.running -= 1;
      if (owner !== null) {
        this.shareOf(owner.id).running -= 1;
        this.forgetIfIdle(owner.id);
      }
      this.nextTurn();
    });
  }

  /** Starts waiting requests on the next turn of the loop (once per turn, however many places freed). */
  private nextTurn(): void {
    if (this.turnScheduled || this.waiting.length === 0 || this.running >= this.limits.concurrency) return;
    this.turnScheduled = true;
    setImmediate(() => {
      this.turnScheduled = false;
      this.startWaiting();
    });
  }

  /** Starts waiting requests while there is a place: in order of arrival, or by the callers' shares. */
  private startWaiting(): void {
    while (this.running < this.limits.concurrency) {
      const next = this.nextToStart();
      if (next === undefined) return;
      const waiting = this.waiting[next] as Waiting;
      this.waiting.splice(next, 1);
      waiting.gone = true;
      clearTimeout(waiting.timer);
      this.leftQueue(waiting);
      this.run(waiting.owner, waiting.hold);
      waiting.start();
    }
  }

  /**
   * The index of the waiting job to start: among the callers under their share, the one holding the
   * fewest places, then the one that got a place longest ago, then the first to arrive; a job of no
   * caller, or of a key not shared, in order of arrival.
   */
  private nextToStart(): number | undefined {
    let best: number | undefined;
    let bestShare: OwnerShare | undefined;
    for (let at = 0; at < this.waiting.length; at++) {
      const { owner } = this.waiting[at] as Waiting;
      if (owner === null || !owner.shared) {
        // In order of arrival, after a caller's job that came before it.
        if (best === undefined) return at;
        continue;
      }
      if (!this.underShare(owner)) continue;
      const share = this.shareOf(owner.id);
      if (bestShare === undefined || share.running < bestShare.running || (share.running === bestShare.running && share.lastStart < bestShare.lastStart)) {
        best = at;
        bestShare = share;
      }
    }
    return best;
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


/** The budget each request of the route takes a place of (none when the route budgets its shared builds itself). */
function requestBudget(request: FastifyRequest): WorkBudget | undefined {
  const config = request.routeOptions.config;
  return config.budgetsSharedBuilds === true ? undefined : config.workBudget;
}

/**
 * A route's work budget: full, it refuses before the body is read (onRequest, 503 overloaded);
 * otherwise the handler runs when the budget gives the request a place (preHandler). `ownerOf` names
 * the caller of a request (its key), between whom the budget shares its places.
 */
export const workBudgetPlugin = platformPlugin<{ ownerOf: (request: FastifyRequest) => BudgetOwner | null }>('work-budget', (app, { ownerOf }) => {
  app.addHook('onRequest', (request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void) => {
    const budget = requestBudget(request);
    done(budget?.refuses(ownerOf(request)) === true ? overloaded() : undefined);
  });
  app.addHook('preHandler', (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => {
    const budget = requestBudget(request);
    if (budget === undefined) done();
    else budget.admit(reply.raw, done, ownerOf(request));
  });
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
