import { request, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SettingsError } from '../../src/platform/setting-readers.js';
import { readPlatformSettings } from '../../src/platform/settings.js';
import { readRequestSettings } from '../../src/services/requests/settings.js';
import { LogCapture } from '../support/http.js';
import { startService, type RunningService } from '../support/process.js';
import { createSqliteFixture, readFixtureRows, type FixtureDatabase } from '../requests/support/fixture-database.js';
import { startTestApp, TEST_API_KEY, TEST_CURSOR_SECRET, type TestApp } from '../requests/support/requests-app.js';
import { REQUESTS } from './services.js';

/**
 * Bounded shutdown and the export's time bound (docs/reliability.md, "Bounded shutdown"): after
 * SIGTERM what finishes within SHUTDOWN_GRACE_SECONDS finishes, what is still open then is cut, and
 * the process exits; an export past EXPORT_MAX_SECONDS is cut. A cut chunked answer ends without its
 * terminating chunk, so the client knows it is incomplete. The exports here are about 60,000 rows
 * (copies of the fixture rows, about 10 MB of CSV), more than the socket buffers hold, read by a
 * client that takes about 100 KB a second: the service is still sending when the bound comes. Once
 * the cut is made, the client reads what the kernel already holds at full speed (`drain`), then
 * sees the end without the last chunk.
 */
const EXPORT = '/v1/exports/service-requests';
const SLOW_BYTES_PER_SECOND = 100_000;

interface SlowRead {
  response: Promise<IncomingMessage>;
  /** Resolves when the answer ended or was cut: `complete` is false when the connection closed before its end. */
  ended: Promise<{ complete: boolean; bytes: number; error?: string }>;
  bytes: () => number;
  /** From now on, reads as fast as the bytes come. */
  drain: () => void;
}

/** GET `path` with the key, read at about `bytesPerSecond`. */
function slowRead(baseUrl: string, path: string, bytesPerSecond = SLOW_BYTES_PER_SECOND): SlowRead {
  let bytes = 0;
  let fast = false;
  let current: IncomingMessage | undefined;
  let gotResponse!: (response: IncomingMessage) => void;
  const response = new Promise<IncomingMessage>((resolveResponse) => (gotResponse = resolveResponse));
  const ended = new Promise<{ complete: boolean; bytes: number; error?: string }>((resolveEnd) => {
    const req = request(`${baseUrl}${path}`, { headers: { 'x-api-key': TEST_API_KEY }, agent: false }, (res) => {
      current = res;
      gotResponse(res);
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        if (fast) return;
        res.pause();
        setTimeout(() => res.resume(), (chunk.length / bytesPerSecond) * 1_000);
      });
      let error: string | undefined;
      res.on('error', (failure: NodeJS.ErrnoException) => (error = failure.code ?? failure.message));
      res.on('close', () => resolveEnd({ complete: res.complete, bytes, ...(error === undefined ? {} : { error }) }));
    });
    req.on('error', (failure: NodeJS.ErrnoException) => resolveEnd({ complete: false, bytes, error: failure.code ?? failure.message }));
    req.end();
  });
  const drain = () => {
    fast = true;
    current?.resume();
  };
  return { response, ended, bytes: () => bytes, drain };
}

const sleep = (ms: number) => new Promise((wait) => setTimeout(wait, ms));

describe.skipIf(!REQUESTS.available)('bounded shutdown and the export time bound', () => {
  let fixture: FixtureDatabase;
  beforeAll(() => {
    const rows = readFixtureRows();
    const copies = Math.ceil(60_000 / rows.length);
    fixture = createSqliteFixture({
      rows: Array.from({ length: copies }, (_, copy) => rows.map((row) => ({ ...row, id: row.id + copy * 1_000_000 }))).flat(),
    });
  }, 60_000);
  afterAll(async () => fixture.drop());

  describe('SIGTERM (the service in its own process, SHUTDOWN_GRACE_SECONDS=2)', () => {
    let service: RunningService | undefined;
    afterEach(() => {
      if (service && service.child.exitCode === null) service.child.kill('SIGKILL');
    });

    it('a slow, steady export reader keeps the process no longer than the grace; its chunked answer is cut; a short request in flight finishes', async () => {
      service = await startService('src/services/requests/main.ts', {
        API_KEY: TEST_API_KEY,
        CURSOR_SECRET: TEST_CURSOR_SECRET,
        DATABASE_URL: fixture.databaseUrl,
        SHUTDOWN_GRACE_SECONDS: '2',
      });
      const running = service;
      const exportRead = slowRead(running.baseUrl, EXPORT);
      const exportResponse = await exportRead.response;
      expect(exportResponse.statusCode).toBe(200);
      expect(exportResponse.headers['transfer-encoding']).toBe('chunked');
      await sleep(500);
      // A page of 1000 rows, read at about 1 MB/s: it ends within the grace.
      const page = slowRead(running.baseUrl, '/v1/service-requests?limit=1000', 1_000_000);
      expect((await page.response).statusCode).toBe(200);
      const bytesAtSigterm = exportRead.bytes();
      const signalledAt = Date.now();
      running.child.kill('SIGTERM');
      const code = await running.exited;
      const exitedAfterMs = Date.now() - signalledAt;

      expect(code).toBe(0);
      // The grace (2 s), and a margin for the cut and the exit on a machine shared with other work.
      expect(exitedAfterMs).toBeGreaterThanOrEqual(1_900);
      expect(exitedAfterMs).toBeLessThan(7_000);
      exportRead.drain();
      const exported = await exportRead.ended;
      // The reader kept reading during the grace, then its answer was cut: no terminating chunk.
      expect(exported.complete).toBe(false);
      expect(exported.bytes).toBeGreaterThan(bytesAtSigterm);
      const short = await page.ended;
      expect(short).toMatchObject({ complete: true });
      expect(running.stdout()).toContain('shutdown grace over: cutting the connections still open');
    }, 30_000);
  });

  describe('EXPORT_MAX_SECONDS=1', () => {
    let service: TestApp;
    let baseUrl: string;
    const logs = new LogCapture();
    beforeAll(async () => {
      service = await startTestApp(fixture.databaseUrl, { EXPORT_MAX_SECONDS: '1', LOG_LEVEL: 'warn' }, { logStream: logs, logger: true });
      await service.app.listen({ host: '127.0.0.1', port: 0 });
      baseUrl = `http://127.0.0.1:${(service.app.server.address() as AddressInfo).port}`;
    });
    afterAll(async () => service.app.close());

    it('an export still being sent after its time bound is cut without its last chunk; the service answers on', async () => {
      const cuts = () => logs.lines().filter((line) => line.msg === 'answer cut: still running at its time bound').length;
      const started = Date.now();
      const exportRead = slowRead(baseUrl, EXPORT);
      expect((await exportRead.response).headers['transfer-encoding']).toBe('chunked');
      while (cuts() === 0 && Date.now() - started < 5_000) await sleep(20);
      const cutAfterMs = Date.now() - started;
      expect(cuts()).toBe(1);
      expect(cutAfterMs).toBeGreaterThanOrEqual(950);
      // The timer may wait for the event loop (the export's reads): a generous bound on a shared machine.
      expect(cutAfterMs).toBeLessThan(3_000);
      exportRead.drain();
      const exported = await exportRead.ended;
      expect(exported.complete).toBe(false);
      expect(exported.bytes).toBeGreaterThan(0);
      expect((await service.app.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200);
    }, 20_000);

    it('an export that ends within its time bound ends normally (with its terminating chunk)', async () => {
      const exported = await slowRead(baseUrl, `${EXPORT}?borough=queens&created_from=2025-01-01&created_to=2025-01-02`, Number.POSITIVE_INFINITY).ended;
      expect(exported).toMatchObject({ complete: true });
    });
  });

  it('SHUTDOWN_GRACE_SECONDS and EXPORT_MAX_SECONDS: whole seconds, default 10 and 300; anything else refuses the start', () => {
    expect(readPlatformSettings({}, 8001).shutdownGraceMs).toBe(10_000);
    expect(readPlatformSettings({ SHUTDOWN_GRACE_SECONDS: ' 0 ' }, 8001).shutdownGraceMs).toBe(0);
    expect(readRequestSettings({ API_KEY: 'shutdown-key-0123456' }).exportMaxMs).toBe(300_000);
    expect(readRequestSettings({ API_KEY: 'shutdown-key-0123456', EXPORT_MAX_SECONDS: '86400' }).exportMaxMs).toBe(86_400_000);
    for (const value of ['', 'ten', '1.5', '-1', '3601', '10s']) {
      expect(() => readPlatformSettings({ SHUTDOWN_GRACE_SECONDS: value }, 8001)).toThrow(SettingsError);
    }
    expect(() => readPlatformSettings({ SHUTDOWN_GRACE_SECONDS: '3601' }, 8001)).toThrow('Invalid setting SHUTDOWN_GRACE_SECONDS: "3601" is not a whole number of seconds from 0 to 3600');
    for (const value of ['0', '86401', 'forever']) {
      expect(() => readRequestSettings({ API_KEY: 'shutdown-key-0123456', EXPORT_MAX_SECONDS: value })).toThrow(SettingsError);
    }
    expect(() => readRequestSettings({ API_KEY: 'shutdown-key-0123456', EXPORT_MAX_SECONDS: '0' })).toThrow('Invalid setting EXPORT_MAX_SECONDS: "0" is not a whole number of seconds from 1 to 86400');
  });
});
