import { connect, type AddressInfo, type Socket } from 'node:net';
import { Type } from 'typebox';
import { afterEach, describe, expect, it } from 'vitest';
import { createServiceApp } from '../../src/platform/app.js';
import type { PlatformApp } from '../../src/platform/platform-app.js';
import { RequestTurns } from '../../src/platform/request-turns.js';
import { readPlatformSettings } from '../../src/platform/settings.js';

/**
 * Requests per turn of the event loop (docs/reliability.md, "Requests per turn"): a turn starts
 * requests until it has spent its budget; the next ones start in later turns, in order of arrival,
 * so that timers, deadlines and other sockets get their turn between them.
 */

/** Keeps the thread busy for `ms` (a request's synchronous work). */
function busy(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

/** Counts the turns of the event loop: a 1 ms timer fires once in every turn that lasts longer. */
function turnCounter(): { readonly turn: number; stop: () => void } {
  const counter = { turn: 0, stop: () => clearInterval(timer) };
  const timer = setInterval(() => counter.turn++, 1);
  return counter;
}

/** Resolves once `condition` holds (checked every turn), or rejects after 5 s. */
async function until(condition: () => boolean): Promise<void> {
  const deadline = performance.now() + 5_000;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

/** How many starts each turn ran, the turns in order. */
function startsPerTurn(turns: number[]): number[] {
  const counts = new Map<number, number>();
  for (const turn of turns) counts.set(turn, (counts.get(turn) ?? 0) + 1);
  return [...counts.values()];
}

/**
 * A clock of the test's own for RequestTurns: a request's work advances it by the milliseconds it
 * would take, so that what a turn starts depends on the budget alone, not on how the machine shares
 * its cores (a thread kept off its core between two requests would spend a real clock's budget).
 */
function virtualClock(): { now: () => number; work: (ms: number) => void } {
  let at = 0;
  return { now: () => at, work: (ms) => (at += ms) };
}

/** Counts the turns of the event loop exactly: one immediate per check phase, each setting the next. */
function checkPhaseCounter(): { readonly turn: number; stop: () => void } {
  let handle = setImmediate(function tick() {
    counter.turn++;
    handle = setImmediate(tick);
  });
  const counter = { turn: 0, stop: () => clearImmediate(handle) };
  return counter;
}

describe('RequestTurns', () => {
  it('starts every request at once while the turn is under its budget', () => {
    const turns = new RequestTurns(5);
    const started: number[] = [];
    for (let n = 0; n < 10; n++) turns.run(() => started.push(n));
    expect(started).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(turns.waitingCount).toBe(0);
  });

  it('starts the requests that come once the turn has spent its budget in later turns, in order of arrival', async () => {
    const clock = virtualClock();
    const turns = new RequestTurns(5, clock.now);
    const counter = checkPhaseCounter();
    const started: number[] = [];
    const startedInTurn: number[] = [];
    // Ten requests of 3 ms read in one turn: the first two start (at 0 and 3 ms), the third comes at 6 ms.
    for (let n = 0; n < 10; n++) {
      turns.run(() => {
        started.push(n);
        startedInTurn.push(counter.turn);
        clock.work(3);
      });
    }
    expect(started).toEqual([0, 1]);
    expect(turns.waitingCount).toBe(8);
    await until(() => started.length === 10);
    counter.stop();
    expect(started).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    // At most the budget plus one request per turn: two requests of 3 ms against 5 ms, in five turns.
    expect(startsPerTurn(startedInTurn)).toEqual([2, 2, 2, 2, 2]);
  });

  it('makes a request that comes while others wait wait behind them, even in a fresh turn', async () => {
    const clock = virtualClock();
    const turns = new RequestTurns(5, clock.now);
    const started: string[] = [];
    for (const name of ['a', 'b', 'c', 'd']) {
      turns.run(() => {
        started.push(name);
        clock.work(3);
      });
    }
    expect(started).toEqual(['a', 'b']);
    // The turn's check phase: its clock has stopped, and the waiting requests start in the next turn's.
    await new Promise((resolve) => setImmediate(resolve));
    turns.run(() => started.push('late'));
    expect(started).toEqual(['a', 'b']);
    await until(() => started.length === 5);
    expect(started).toEqual(['a', 'b', 'c', 'd', 'late']);
  });

  it('refuses a budget that is not above 0 ms', () => {
    for (const budgetMs of [0, -1, Number.NaN]) expect(() => new RequestTurns(budgetMs)).toThrow('the request budget of a turn must be above 0 ms');
  });
});

describe('requests per turn through the HTTP server', () => {
  let app: PlatformApp | undefined;
  const sockets: Socket[] = [];
  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.destroy();
    await app?.close();
    app = undefined;
  });

  it('ten clients whose requests of 3 ms arrive together are started two per turn (budget 5 ms), each answered 200', async () => {
    const counter = turnCounter();
    const startedInTurn: number[] = [];
    app = await createServiceApp(
      {
        name: 'test',
        openapi: { title: 'Test API', version: '1', description: 'A test service', tags: [], usesApiKey: false },
        registerRoutes(service) {
          service.get(
            '/v1/work',
            { schema: { operationId: 'doWork', response: { 200: Type.Object({ turn: Type.Integer() }, { description: 'Done' }) } } },
            (_request, reply) => {
              startedInTurn.push(counter.turn);
              busy(3);
              void reply.send({ turn: counter.turn });
            },
          );
        },
      },
      readPlatformSettings({}, 0),
      { logger: false, backpressure: { turnBudgetMs: 5 } },
    );
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as AddressInfo;
    const answers: string[] = [];
    for (let c = 0; c < 10; c++) {
      const socket = connect(port, '127.0.0.1');
      sockets.push(socket);
      await new Promise((resolve) => socket.once('connect', resolve));
      let text = '';
      socket.on('data', (chunk: Buffer) => {
        text += chunk.toString('latin1');
        if (text.includes('\r\n\r\n') && text.endsWith('}')) answers.push(text);
      });
    }
    // Every request is in the server's sockets before its next turn reads them.
    for (const socket of sockets) socket.write('GET /v1/work HTTP/1.1\r\nHost: test\r\n\r\n');
    await until(() => answers.length === 10);
    counter.stop();
    expect(answers.every((answer) => answer.startsWith('HTTP/1.1 200 '))).toBe(true);
    expect(startedInTurn).toHaveLength(10);
    expect(Math.max(...startsPerTurn(startedInTurn))).toBeLessThanOrEqual(2);
  });
});
