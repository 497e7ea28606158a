import { describe, expect, it } from 'vitest';
import { expectError, fromFetch } from '../support/http.js';
import { runUntilExit, startService } from '../support/process.js';

const ENTRY = 'src/services/tickets/main.ts';

/** The start command (npm run start:tickets) as a user runs it: settings from the environment, SIGTERM. */
describe('start command of the ticket service', () => {
  it('reads PORT, HOST and API_KEY from the environment and answers over HTTP', async () => {
    const service = await startService(ENTRY, { API_KEY: 'ticket-start-key-01' });
    try {
      const ok = await fetch(`${service.baseUrl}/v1/classify`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': 'ticket-start-key-01' },
        body: JSON.stringify({ subject: 'My parcel is lost' }),
      });
      expect(ok.status).toBe(200);
      expect(await ok.json()).toEqual({ category: 'shipping', priority: 1, confidence: 0.7, model_version: 'keywords-1.0' });
      expectError(await fromFetch(await fetch(`${service.baseUrl}/v1/classify`, { method: 'GET' })), 405, 'method_not_allowed', []);
    } finally {
      await service.stop();
    }
    expect(service.stdout()).not.toContain('ticket-start-key-01');
  });

  it('SIGTERM: finishes the requests in flight, then exits 0', async () => {
    const service = await startService(ENTRY);
    // A slow upload: the request is accepted, then SIGTERM arrives before its body is complete.
    const url = new URL(`${service.baseUrl}/v1/classify`);
    const { request } = await import('node:http');
    const answer = new Promise<{ status: number; body: string }>((resolveAnswer, reject) => {
      const req = request(
        { host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { 'content-type': 'application/json', 'content-length': '20' } },
        (res) => {
          let body = '';
          res.on('data', (chunk: Buffer) => (body += chunk.toString()));
          res.on('end', () => resolveAnswer({ status: res.statusCode ?? 0, body }));
        },
      );
      req.on('error', reject);
      req.write('{"subject":');
      setTimeout(() => {
        service.child.kill('SIGTERM');
        setTimeout(() => req.end('"refund"}'), 300);
      }, 300);
    });
    const result = await answer;
    expect(result.status).toBe(200);
    expect(JSON.parse(result.body).category).toBe('billing');
    expect(await service.exited).toBe(0);
  });

  it('a setting with an invalid value stops the start with one clear line naming the variable', async () => {
    const invalid = [
      ['PORT', 'eighty'],
      ['CLASSIFIER_MODE', 'sometimes'],
      ['ALLOWED_ORIGINS', '*'],
      ['SHOW_DOCS', 'maybe'],
    ] as const;
    // The four starts at once: each waits on a process of its own.
    const runs = await Promise.all(invalid.map(([variable, value]) => runUntilExit(ENTRY, { [variable]: value, PORT: variable === 'PORT' ? value : '0' })));
    for (const [i, [variable]] of invalid.entries()) {
      const { code, stderr: err } = runs[i]!;
      expect(code, variable).toBe(1);
      const lines = err.trim().split('\n');
      expect(lines, err).toHaveLength(1);
      expect(lines[0]).toMatch(new RegExp(`^Invalid setting ${variable}: `));
    }
  });
});
