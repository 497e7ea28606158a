import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { buildTicketsApp } from '../../src/services/tickets/app.js';
import { readTicketSettings } from '../../src/services/tickets/settings.js';

/** A body trickled in slowly is cut off: 408 request_timeout with the error object, connection closed. */
describe('slow request bodies', () => {
  it('a body not complete within the time limit answers 408 request_timeout and closes the connection', async () => {
    const app = await buildTicketsApp(readTicketSettings({}), { logger: false, bodyTimeoutMs: 600 });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = app.server.address() as AddressInfo;
    const started = Date.now();
    const answer = await new Promise<string>((resolve, reject) => {
      let trickle: NodeJS.Timeout | undefined;
      // The trickle starts once the head is written (a socket still connecting takes writes too).
      const socket = connect(port, '127.0.0.1', () => {
        socket.write('POST /v1/classify HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 40\r\n\r\n{"subj');
        trickle = setInterval(() => socket.writable && socket.write(' '), 100);
      });
      let text = '';
      socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
      socket.on('close', () => {
        clearInterval(trickle);
        resolve(text);
      });
      socket.on('error', reject);
    });
    const elapsed = Date.now() - started;
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(answer).toMatch(/X-Request-ID: [0-9a-f-]{36}/);
    const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
    expect(body.error).toMatchObject({ code: 'request_timeout', fields: [] });
    expect(elapsed).toBeGreaterThanOrEqual(550);
    expect(elapsed).toBeLessThan(3000);
    // The service keeps serving.
    expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(200);
    await app.close();
  });

  it('a body that arrives in time is answered normally', async () => {
    const app = await buildTicketsApp(readTicketSettings({}), { logger: false, bodyTimeoutMs: 600 });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = app.server.address() as AddressInfo;
    const response = await fetch(`http://127.0.0.1:${port}/v1/classify`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"subject":"refund"}' });
    expect(response.status).toBe(200);
    await new Promise((r) => setTimeout(r, 900));
    expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(200);
    await app.close();
  });
});
