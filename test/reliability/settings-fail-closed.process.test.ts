import { createServer, type Server } from 'node:net';
import { describe, expect, it } from 'vitest';
import { runUntilExit } from '../support/process.js';

/**
 * Hostile-client class "settings fail closed" (the hostile-input decisions), through the real start commands:
 * a setting that is set but holds no usable value stops the start with exit code 1 and one line on
 * stderr, `Invalid setting NAME: why`, nothing on stdout, no stack; a key or secret is never echoed.
 * The other values of every setting are checked through the settings reader
 * (test/platform/settings-and-keys.test.ts, test/requests/settings-and-cursor.test.ts).
 */
const TICKETS = 'src/services/tickets/main.ts';
const HOUSES = 'src/services/houses/main.ts';
const REQUESTS = 'src/services/requests/main.ts';
const ALL = 'src/main.ts';

async function expectRefused(entry: string, env: Record<string, string>, variable: string, secret?: string): Promise<void> {
  const { code, stdout, stderr } = await runUntilExit(entry, { PORT: '0', ...env });
  expect(code, stderr).toBe(1);
  expect(stdout).toBe('');
  expect(stderr.split('\n')).toEqual([expect.stringMatching(new RegExp(`^Invalid setting ${variable}: \\S`)), '']);
  if (secret !== undefined) expect(stderr).not.toContain(secret);
}

// Concurrent: each test waits on a process of its own.
describe.concurrent('settings fail closed: the start commands refuse a set but unusable value', { timeout: 60_000 }, () => {
  it.each([
    [TICKETS, ','],
    [TICKETS, ' , '],
    [HOUSES, ','],
    [HOUSES, ' , '],
  ])('%s with API_KEY=%j never starts without a key', async (entry, value) => {
    await expectRefused(entry, { API_KEY: value }, 'API_KEY');
  });

  it('an empty API_KEY is refused, not read as "no key"', async () => {
    await expectRefused(TICKETS, { API_KEY: '' }, 'API_KEY');
  });

  it('LOG_LEVEL is named, not left to a pino message', async () => {
    await expectRefused(HOUSES, { LOG_LEVEL: 'loud' }, 'LOG_LEVEL');
  });

  it('HOST with no usable address', async () => {
    await expectRefused(TICKETS, { HOST: 'http://0.0.0.0:8001' }, 'HOST');
  });

  it('a key with a space inside is refused without echoing it', async () => {
    await expectRefused(REQUESTS, { API_KEY: 'do-not-print-me please' }, 'API_KEY', 'do-not-print-me');
  });

  it('a short CURSOR_SECRET is refused without echoing it', async () => {
    await expectRefused(REQUESTS, { CURSOR_SECRET: 'do-not-print-me' }, 'CURSOR_SECRET', 'do-not-print-me');
  });

  it('npm start names its own port setting (TICKETS_PORT), not PORT', async () => {
    await expectRefused(ALL, { TICKETS_PORT: '' }, 'TICKETS_PORT');
  });

  it('npm start refuses two services on one port', async () => {
    await expectRefused(ALL, { TICKETS_PORT: '18001', REQUESTS_PORT: '18001' }, 'REQUESTS_PORT');
  });

  it('npm start reads every service setting before building any: nothing is logged before the refusal', async () => {
    await expectRefused(ALL, { TICKETS_PORT: '0', HOUSES_PORT: '0', REQUESTS_PORT: '0', MODEL_SHA256: ' ' }, 'MODEL_SHA256');
  });

  it('a HOST that is not an address of this machine is named (the system refuses it at listen)', async () => {
    await expectRefused(TICKETS, { API_KEY: 'fail-closed-key-0123', HOST: '192.0.2.1' }, 'HOST');
  });

  it('a PORT already in use is named', async () => {
    const taken: Server = createServer();
    await new Promise<void>((resolveListen) => taken.listen(0, '127.0.0.1', resolveListen));
    try {
      const port = (taken.address() as { port: number }).port;
      await expectRefused(TICKETS, { API_KEY: 'fail-closed-key-0123', HOST: '127.0.0.1', PORT: String(port) }, 'PORT');
    } finally {
      await new Promise((resolveClose) => taken.close(resolveClose));
    }
  });
});
