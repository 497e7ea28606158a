import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Type } from 'typebox';
import { afterEach, describe, expect, it } from 'vitest';
import { createServiceApp } from '../../src/platform/app.js';
import type { PlatformApp } from '../../src/platform/platform-app.js';
import { errorResponses } from '../../src/platform/error-registry.js';
import { readPlatformSettings } from '../../src/platform/settings.js';
import { awayFromPlace, mapInPieces, TimeSlice, TIME_SLICE_MS, WorkBudget, type WorkBudgetLimits } from '../../src/platform/work-budget.js';
import { expectError } from '../support/http.js';
import { createKey, keyFilePath } from '../support/key-files.js';

/**
 * Work budgets (docs/reliability.md, "Work budgets"): a route declares its budget; at most
 * `concurrency` of its requests run at once, `queue` more wait in order of arrival, each at most
 * `maxWaitMs`; past that 503 overloaded with Retry-After, in the error object. Long synchronous work
 * gives way to the event loop every few milliseconds.
 */
const info = { title: 'Test API', version: '1', description: 'A test service', tags: [], usesApiKey: true };
const KEY = 'work-budget-key-0123';

interface Harness {
  app: PlatformApp;
  budget: WorkBudget;
  /** The order in which handlers started, by the `n` query parameter. */
  started: number[];
  /** Lets every started handler answer. */
  finishAll: () => void;
}

/** Resolves once `condition` holds (checked every 5 ms), or fails after 10 s. */
async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('the condition did not come to hold in 10 s');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

let harness: Harness | undefined;
afterEach(async () => {
  harness?.finishAll();
  await harness?.app.close();
  harness = undefined;
});

/** A key file with two clients' keys (`a`, `b`), beside API_KEY. */
async function twoClients(): Promise<{ env: Record<string, string>; a: string; b: string; aId: string }> {
  const path = keyFilePath();
  const a = await createKey(path, '--name', 'Flooding client');
  const b = await createKey(path, '--name', 'Other client');
  return { env: { API_KEYS_FILE: path }, a: a.key, b: b.key, aId: a.id };
}

/** A service whose budgeted route waits until the test lets it answer (`env`: more settings, a key file). */
async function serviceWithBudget(limits: WorkBudgetLimits, env: Record<string, string> = {}): Promise<Harness> {
  const budget = new WorkBudget('test work', limits);
  const started: number[] = [];
  let waiting: (() => void)[] = [];
  const app = await createServiceApp(
    {
      // A key of the key file opens one of the three services: the harness stands in for tickets.
      name: 'tickets',
      openapi: info,
      registerRoutes(service) {
        service.get(
          '/v1/work',
          {
            config: { requiresApiKey: true, workBudget: budget },
            schema: {
              operationId: 'doWork',
              querystring: Type.Object({ n: Type.Integer() }),
              response: { 200: Type.Object({ n: Type.Integer() }, { description: 'Done' }), ...errorResponses('unauthorized', 'model_unavailable') },
            },
          },
          async (request) => {
            started.push(request.query.n);
            await new Promise<void>((resolve) => waiting.push(resolve));
            return { n: request.query.n };
          },
        );
      },
    },
    readPlatformSettings({ API_KEY: KEY, ...env }, 0),
    { logger: false },
  );
  await app.ready();
  const finishAll = () => {
    const now = waiting;
    waiting = [];
    for (const finish of now) finish();
  };
  harness = { app, budget, started, finishAll };
  return harness;
}

/** A request sent at once (light-my-request sends when its answer is awaited). */
const work = async (app: PlatformApp, n: number, key = KEY) => app.inject({ method: 'GET', url: `/v1/work?n=${n}`, headers: { 'x-api-key': key } });

/** Lets the event loop turn a few times (the budget starts the next job on the next turn). */
const turns = async (count = 5) => {
  for (let i = 0; i < count; i++) await new Promise((resolve) => setImmediate(resolve));
};

describe('work budgets', () => {
  it('at most `concurrency` requests run at once; the others wait and start in order of arrival', async () => {
    const { app, budget, started, finishAll } = await serviceWithBudget({ concurrency: 2, queue: 4, maxWaitMs: 5_000 });
    const answers = [1, 2, 3, 4, 5].map((n) => work(app, n));
    await turns();
    expect(started).toEqual([1, 2]);
    expect(budget.load).toEqual({ running: 2, waiting: 3 });
    finishAll();
    await turns(10);
    expect(started.slice(0, 4)).toEqual([1, 2, 3, 4]);
    for (;;) {
      finishAll();
      await turns();
      if (started.length === 5 && budget.load.running === 0) break;
    }
    expect(started).toEqual([1, 2, 3, 4, 5]);
    expect((await Promise.all(answers)).map((answer) => answer.statusCode)).toEqual([200, 200, 200, 200, 200]);
  });

  it('past the queue bound: 503 overloaded with Retry-After, the error object with the request id', async () => {
    const { app, finishAll } = await serviceWithBudget({ concurrency: 1, queue: 1, maxWaitMs: 5_000 });
    const running = work(app, 1);
    const queued = work(app, 2);
    await turns();
    const refused = await work(app, 3);
    expectError(refused, 503, 'overloaded', [], 'The service is busy with work of this kind; retry after the number of seconds in Retry-After');
    expect(refused.headers['retry-after']).toBe('1');
    finishAll();
    await turns(10);
    finishAll();
    expect([(await running).statusCode, (await queued).statusCode]).toEqual([200, 200]);
  });

  it('a request that waited its longest is answered 503 overloaded', async () => {
    const { app, budget } = await serviceWithBudget({ concurrency: 1, queue: 4, maxWaitMs: 50 });
    void work(app, 1);
    const waited = await work(app, 2);
    expectError(waited, 503, 'overloaded', []);
    expect(waited.headers['retry-after']).toBe('1');
    expect(budget.load).toEqual({ running: 1, waiting: 0 });
  });

  it('a client that goes away gives its place back, running or waiting', async () => {
    const { app, budget, started } = await serviceWithBudget({ concurrency: 1, queue: 4, maxWaitMs: 5_000 });
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = app.server.address() as AddressInfo;
    const leave = (n: number) => {
      const sent = request({ host: '127.0.0.1', port, path: `/v1/work?n=${n}`, headers: { 'x-api-key': KEY } });
      sent.on('error', () => undefined);
      sent.end();
      return sent;
    };
    // Each step waits for what it needs (however busy the machine), not for a fixed time.
    const first = leave(1);
    await until(() => budget.load.running === 1);
    const second = leave(2);
    await until(() => budget.load.waiting === 1);
    expect(budget.load).toEqual({ running: 1, waiting: 1 });
    second.destroy();
    first.destroy();
    await until(() => budget.load.running === 0 && budget.load.waiting === 0);
    expect(started).toEqual([1]);
    expect(url).toMatch(/^http:/);
  });


  it('work no single request owns (a shared build) takes a place with acquire, waits in the same queue, and gives it back with its release', async () => {
    const budget = new WorkBudget('shared builds', { concurrency: 1, queue: 1, maxWaitMs: 5_000 });
    const releaseFirst = await budget.acquire();
    expect(budget.load).toEqual({ running: 1, waiting: 0 });
    const second = budget.acquire();
    await turns();
    expect(budget.load).toEqual({ running: 1, waiting: 1 });
    await expect(budget.acquire()).rejects.toMatchObject({ code: 'overloaded' });
    releaseFirst();
    releaseFirst();
    const releaseSecond = await second;
    expect(budget.load).toEqual({ running: 1, waiting: 0 });
    releaseSecond();
    expect(budget.load).toEqual({ running: 0, waiting: 0 });
  });

  it('work held by `holding` gives its place back while it waits away from it (a walk worker queue), and takes one again first in the queue, even a full one', async () => {
    const budget = new WorkBudget('shared builds', { concurrency: 1, queue: 1, maxWaitMs: 5_000 });
    const steps: string[] = [];
    let endWait = (): void => undefined;
    const waited = new Promise<void>((resolve) => (endWait = resolve));
    let endSecond = (): void => undefined;
    const secondHeld = new Promise<void>((resolve) => (endSecond = resolve));
    const first = budget.holding(async () => {
      steps.push('first holds');
      // Two waits at once give the place back once and take it again once.
      await Promise.all([awayFromPlace(waited), awayFromPlace(waited)]);
      steps.push('first holds again');
    });
    await turns();
    const second = budget.holding(async () => {
      steps.push('second holds');
      await secondHeld;
    });
    await turns();
    expect(steps).toEqual(['first holds', 'second holds']);
    const third = budget.holding(() => Promise.resolve(void steps.push('third holds')));
    await turns();
    expect(budget.load).toEqual({ running: 1, waiting: 1 });
    endWait();
    await turns();
    // The queue is full (the third), yet the first is taken in, before the third.
    expect(budget.load).toEqual({ running: 1, waiting: 2 });
    endSecond();
    await Promise.all([first, second, third]);
    expect(steps).toEqual(['first holds', 'second holds', 'first holds again', 'third holds']);
    expect(budget.load).toEqual({ running: 0, waiting: 0 });
  });

  it('outside `holding`, a wait away from a place merely waits', async () => {
    expect(await awayFromPlace(Promise.resolve(7))).toBe(7);
  });

  it('a shared build that waited its longest for a place is refused 503 overloaded', async () => {
    const budget = new WorkBudget('shared builds', { concurrency: 1, queue: 4, maxWaitMs: 50 });
    const release = await budget.acquire();
    await expect(budget.acquire()).rejects.toMatchObject({ code: 'overloaded' });
    release();
    expect(budget.load).toEqual({ running: 0, waiting: 0 });
  });
  it('between keys: one key never takes every place of a budget of two; another key gets the free place at once', async () => {
    const clients = await twoClients();
    const { app, budget, started, finishAll } = await serviceWithBudget({ concurrency: 2, queue: 8, maxWaitMs: 5_000 }, clients.env);
    const flood = [1, 2, 3, 4, 5].map((n) => work(app, n, clients.a));
    await turns();
    expect(started).toEqual([1]);
    expect(budget.loadOf(clients.aId)).toEqual({ running: 1, waiting: 4 });
    const other = work(app, 101, clients.b);
    await turns();
    expect(started).toEqual([1, 101]);
    for (;;) {
      finishAll();
      await turns();
      if (started.length === 6 && budget.load.running === 0) break;
    }
    expect(started).toEqual([1, 101, 2, 3, 4, 5]);
    expect((await Promise.all([...flood, other])).map((answer) => answer.statusCode)).toEqual([200, 200, 200, 200, 200, 200]);
  });

  it('between keys: a full queue refuses the flooding key\'s latest waiting request, not the newcomer; a freed place goes to the key that got one longest ago', async () => {
    const clients = await twoClients();
    const { app, started, finishAll } = await serviceWithBudget({ concurrency: 1, queue: 3, maxWaitMs: 5_000 }, clients.env);
    const flood = [1, 2, 3, 4, 5].map((n) => work(app, n, clients.a));
    await turns();
    // 1 runs, 2 to 4 wait, 5 finds the queue full of its own key's requests: refused.
    expectError(await flood[4]!, 503, 'overloaded', []);
    // The other key's first request takes the place of the flood's latest waiting one (4), refused;
    // its second finds the waiting requests shared (2 and 1): refused itself.
    const first = work(app, 101, clients.b);
    await turns();
    expectError(await flood[3]!, 503, 'overloaded', []);
    expectError(await work(app, 102, clients.b), 503, 'overloaded', []);
    for (;;) {
      finishAll();
      await turns();
      if (started.length === 4) break;
    }
    // The other key first: the flooding key got its place last.
    expect(started).toEqual([1, 101, 2, 3]);
    finishAll();
    expect((await Promise.all([flood[0]!, flood[1]!, flood[2]!, first])).map((answer) => answer.statusCode)).toEqual([200, 200, 200, 200]);
  });

  it('between keys at a budget of one place: the keys take turns', async () => {
    const clients = await twoClients();
    const { app, started, finishAll } = await serviceWithBudget({ concurrency: 1, queue: 8, maxWaitMs: 5_000 }, clients.env);
    const answers = [1, 2, 3].map((n) => work(app, n, clients.a));
    await turns();
    answers.push(...[101, 102].map((n) => work(app, n, clients.b)));
    for (;;) {
      finishAll();
      await turns();
      if (started.length === 5) break;
    }
    expect(started).toEqual([1, 101, 2, 102, 3]);
    finishAll();
    expect((await Promise.all(answers)).every((answer) => answer.statusCode === 200)).toBe(true);
  });

  it('the OpenAPI description of a budgeted route lists 503 overloaded with the route\'s other 503 codes, and Retry-After', async () => {
    const { app } = await serviceWithBudget({ concurrency: 1, queue: 1, maxWaitMs: 1_000 });
    const spec = app.swagger() as unknown as { paths: Record<string, Record<string, { responses: Record<string, { description: string; headers?: Record<string, unknown> }> }>> };
    const unavailable = spec.paths['/v1/work']?.get?.responses['503'];
    expect(unavailable?.description).toBe(
      'code model_unavailable: No usable model is loaded; code overloaded: Too many requests of this kind are running or waiting (Retry-After says when to try again)',
    );
    expect(Object.keys(unavailable?.headers ?? {})).toContain('Retry-After');
    expect(unavailable?.headers?.['Retry-After']).toMatchObject({ description: 'With code overloaded: seconds to wait before trying again' });
  });
});

describe('work on the event loop gives way every few milliseconds', () => {
  it('a loop that pauses on a TimeSlice lets the event loop turn within a slice or so of work', async () => {
    const slice = new TimeSlice();
    const loop = { turned: false };
    setImmediate(() => (loop.turned = true));
    const started = performance.now();
    // The work before the turn is counted in steps of 0.5 ms of the clock: neither the process's CPU
    // time (its compiler and collector threads count in it) nor the wall time of the whole loop (the
    // process may wait for a core) is the loop's own work.
    const STEP_MS = 0.5;
    let steps = 0;
    let turnedAfterSteps = Infinity;
    while (performance.now() - started < 100) {
      const busy = performance.now() + STEP_MS;
      while (performance.now() < busy);
      steps += 1;
      await slice.pause();
      if (loop.turned && turnedAfterSteps === Infinity) turnedAfterSteps = steps;
    }
    // The first pause after TIME_SLICE_MS gives way: about TIME_SLICE_MS / STEP_MS steps (twice that as a bound).
    expect(turnedAfterSteps).toBeLessThanOrEqual((2 * TIME_SLICE_MS) / STEP_MS);
  });

  it('a loop that never pauses would not have let it turn (the control of the test above)', () => {
    const loop = { turned: false };
    setImmediate(() => (loop.turned = true));
    const started = performance.now();
    while (performance.now() - started < 20);
    expect(loop.turned).toBe(false);
  });

  it('mapInPieces gives the same results, in order, as one call', async () => {
    const items = Array.from({ length: 103 }, (_, i) => i);
    expect(await mapInPieces(items, 10, (piece) => piece.map((x) => x * 2))).toEqual(items.map((x) => x * 2));
  });
});
