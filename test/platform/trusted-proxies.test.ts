import { describe, expect, it } from 'vitest';
import type { PlatformApp } from '../../src/platform/platform-app.js';
import { readPlatformSettings } from '../../src/platform/settings.js';
import { buildTicketsApp } from '../../src/services/tickets/app.js';
import { readTicketSettings } from '../../src/services/tickets/settings.js';
import { LogCapture } from '../support/http.js';

/**
 * TRUSTED_PROXIES (the hostile-input decisions; README, "Settings"): X-Forwarded-For names the
 * client only on a request from a proxy listed there; otherwise the client is the address that
 * connected, for the rate limit as for the log line. A list that holds no usable address stops the start.
 */
const PROXY = '10.0.0.5';

interface LoggedApp {
  app: PlatformApp;
  logs: LogCapture;
}

async function ticketsApp(env: Record<string, string>): Promise<LoggedApp> {
  const logs = new LogCapture();
  const app = await buildTicketsApp(readTicketSettings({ API_KEY: 'proxies-key-0123456789', RATE_LIMIT: '2/minute', ...env }), { logStream: logs });
  await app.ready();
  return { app, logs };
}

/** A request without a key (counted by the client's address), from `from`, with an X-Forwarded-For. */
function categories(app: PlatformApp, from: string, forwardedFor?: string) {
  return app.inject({ method: 'GET', url: '/v1/categories', remoteAddress: from, headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor } });
}

/** The client addresses of the request log lines, in order. */
function clientAddresses(logs: LogCapture): unknown[] {
  return logs.raw.map((line) => JSON.parse(line) as { msg?: string; client_address?: unknown }).filter((line) => line.msg === 'request').map((line) => line.client_address);
}

describe('TRUSTED_PROXIES', () => {
  it('unset: X-Forwarded-For is ignored; a client that names other addresses is still counted as itself', async () => {
    const { app, logs } = await ticketsApp({});
    const statuses = [];
    for (const forwarded of ['203.0.113.1', '203.0.113.2', '203.0.113.3']) statuses.push((await categories(app, '198.51.100.7', forwarded)).statusCode);
    expect(statuses).toEqual([200, 200, 429]);
    expect(clientAddresses(logs)).toEqual(['198.51.100.7', '198.51.100.7', '198.51.100.7']);
    await app.close();
  });

  it('a request from a listed proxy is counted and logged as the client X-Forwarded-For names (its right end)', async () => {
    const { app, logs } = await ticketsApp({ TRUSTED_PROXIES: `${PROXY}, 192.168.7.0/24` });
    const statuses = [];
    for (const forwarded of ['203.0.113.1', '203.0.113.2', '198.51.100.99, 203.0.113.1', '203.0.113.1']) statuses.push((await categories(app, PROXY, forwarded)).statusCode);
    // The third names 203.0.113.1 at its right end (what the proxy saw); the address before it, written by the client, is not believed.
    expect(statuses).toEqual([200, 200, 200, 429]);
    expect(clientAddresses(logs)).toEqual(['203.0.113.1', '203.0.113.2', '203.0.113.1', '203.0.113.1']);
    expect((await categories(app, '192.168.7.20', '203.0.113.50')).statusCode).toBe(200);
    expect(clientAddresses(logs).at(-1)).toBe('203.0.113.50');
    await app.close();
  });

  it('a request from an address not listed: its X-Forwarded-For is ignored', async () => {
    const { app, logs } = await ticketsApp({ TRUSTED_PROXIES: PROXY });
    for (const forwarded of ['203.0.113.1', '203.0.113.2']) await categories(app, '198.51.100.7', forwarded);
    expect((await categories(app, '198.51.100.7', '203.0.113.3')).statusCode).toBe(429);
    expect(clientAddresses(logs)).toEqual(['198.51.100.7', '198.51.100.7', '198.51.100.7']);
    await app.close();
  });

  it('reads IPv4 and IPv6 addresses and ranges; anything else, and a range of every address, stops the start naming the variable', () => {
    expect(readPlatformSettings({ TRUSTED_PROXIES: ' 10.0.0.5 , 10.1.0.0/16, ::1, fd00::/8 ' }, 0).trustedProxies).toEqual(['10.0.0.5', '10.1.0.0/16', '::1', 'fd00::/8']);
    expect(readPlatformSettings({}, 0).trustedProxies).toEqual([]);
    for (const bad of ['proxy.internal', '10.0.0.300', '10.0.0.0/33', '::1/129', '10.0.0.0/8/1', '10.0.0.0/', 'true', '*', 'loopback', '10.0.0.5,', '', '10.0.0.5,10.0.0.5']) {
      expect(() => readPlatformSettings({ TRUSTED_PROXIES: bad }, 0), bad).toThrow(/^Invalid setting TRUSTED_PROXIES: /);
    }
    for (const everyone of ['0.0.0.0/0', '::/0']) expect(() => readPlatformSettings({ TRUSTED_PROXIES: everyone }, 0), everyone).toThrow(/holds every address/);
  });
});
