import { Agent, request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { startService, type RunningService } from '../support/process.js';
import { TICKETS } from './services.js';

/**
 * SIGTERM in the middle of a load (the reliability decisions): the real tickets service in its own process, 20
 * keep-alive clients that always have one request written onto their connection. SIGTERM arrives
 * while those requests are in flight. Every request the service read is answered, every request
 * written before SIGTERM is answered (none is lost to a reset of an idle keep-alive connection), the
 * only failure allowed is a new connection refused once the service stopped listening, and the
 * process exits 0. The service's log (one line per request) is compared with what the clients got.
 */
const KEY = 'sigterm-test-key';
const CLIENTS = 20;
const BODY = JSON.stringify({ subject: 'I was charged twice this month', body: 'Please refund the second payment.' });

interface Outcome {
  status?: number;
  connectionClose?: boolean;
  error?: string;
  reusedSocket?: boolean;
}

let service: RunningService | undefined;
afterEach(() => {
  if (service && service.child.exitCode === null) service.child.kill('SIGKILL');
  service = undefined;
});

describe.skipIf(!TICKETS.available)('SIGTERM during a load', () => {
  it('answers every request written before and after SIGTERM on open connections, refuses new ones, exits 0', async () => {
    service = await startService('src/services/tickets/main.ts', { API_KEY: KEY });
    const running = service;
    const { hostname, port } = new URL(running.baseUrl);
    const agent = new Agent({ keepAlive: true, maxSockets: CLIENTS });
    const outcomes = new Map<string, Outcome>();
    const pending = new Set<string>();
    let sequence = 0;
    let refused = false;

    const one = () =>
      new Promise<void>((done) => {
        const id = `sigterm-${sequence++}`;
        const outcome: Outcome = {};
        outcomes.set(id, outcome);
        pending.add(id);
        const finish = () => {
          pending.delete(id);
          done();
        };
        const req = request(
          {
            agent,
            host: hostname,
            port,
            method: 'POST',
            path: '/v1/classify',
            headers: { 'content-type': 'application/json', 'x-api-key': KEY, 'x-request-id': id },
          },
          (response) => {
            response.resume();
            response.on('end', () => {
              outcome.status = response.statusCode;
              outcome.connectionClose = response.headers.connection === 'close';
              finish();
            });
          },
        );
        req.on('error', (error: NodeJS.ErrnoException) => {
          outcome.error = error.code ?? error.message;
          outcome.reusedSocket = req.reusedSocket;
          if (error.code === 'ECONNREFUSED') refused = true;
          finish();
        });
        req.end(BODY);
      });

    const loops = Array.from({ length: CLIENTS }, async () => {
      while (!refused) await one();
    });
    // Load until a few hundred requests were answered, then SIGTERM with one request per client in flight.
    const started = Date.now();
    while (outcomes.size - pending.size < 300 && Date.now() - started < 15_000) await new Promise((r) => setTimeout(r, 20));
    const inFlightAtSigterm = [...pending];
    const signalledAt = Date.now();
    running.child.kill('SIGTERM');
    const code = await running.exited;
    const exitedAfterMs = Date.now() - signalledAt;
    refused = true;
    await Promise.all(loops);
    agent.destroy();

    expect(code).toBe(0);
    expect(exitedAfterMs).toBeLessThan(10_000);
    expect(inFlightAtSigterm.length).toBe(CLIENTS);
    // Each request in flight at SIGTERM got an HTTP answer.
    for (const id of inFlightAtSigterm) expect({ id, ...outcomes.get(id) }).toMatchObject({ id, status: 200 });
    // The only errors: connections opened after the service stopped listening, refused (never accepted).
    const errors = [...outcomes].filter(([, outcome]) => outcome.error !== undefined);
    for (const [id, outcome] of errors) expect({ id, ...outcome }).toMatchObject({ id, error: 'ECONNREFUSED', reusedSocket: false });
    expect(errors.length).toBeLessThanOrEqual(CLIENTS);
    // Answers after SIGTERM close their connection; nothing but 200 (or 503 while closing) is answered.
    const answered = [...outcomes].filter(([, outcome]) => outcome.status !== undefined);
    expect(answered.filter(([, outcome]) => outcome.status !== 200 && outcome.status !== 503)).toEqual([]);
    expect(answered.filter(([, outcome]) => outcome.connectionClose).length).toBeGreaterThanOrEqual(CLIENTS);

    // The service's side: one log line per request it read; each of them was answered to the client.
    const logged = running
      .stdout()
      .split('\n')
      .filter((line) => line.includes('"msg":"request"'))
      .map((line) => JSON.parse(line) as { request_id: string; path: string; status: number })
      .filter((line) => line.path === '/v1/classify');
    const loggedIds = new Set(logged.map((line) => line.request_id));
    expect(loggedIds.size).toBe(logged.length);
    for (const line of logged) expect({ id: line.request_id, status: outcomes.get(line.request_id)?.status }).toEqual({ id: line.request_id, status: line.status });
    expect(logged.length).toBe(answered.filter(([, outcome]) => outcome.status === 200).length);
  });
});
