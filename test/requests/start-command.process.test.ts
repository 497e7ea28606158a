import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/http.js';
import { runUntilExit, startService } from '../support/process.js';
import { fixtureDuringSuite } from './support/fixture-database.js';

const ENTRY = 'src/services/requests/main.ts';

/** The start command (main.ts), as `npm run start:requests` runs it, in its own process. */
describe('start command of the service-request API', () => {
  const fixture = fixtureDuringSuite();

  /** main.ts in its own process, on the fixture unless `settings` says otherwise; no key or secret unless given. */
  const startRequests = (settings: Record<string, string>) => startService(ENTRY, { DATABASE_URL: fixture.databaseUrl, ...settings });

  it('without API_KEY: a random key shown once on stderr with how to set a fixed one, never on stdout; SIGTERM exits 0', async () => {
    const service = await startRequests({});
    try {
      const url = service.baseUrl;
      const key = /the key for this run is (\S+)/.exec(service.stderr())?.[1];
      expect(key).toMatch(/^[A-Za-z0-9_-]{32}$/);
      expect(service.stderr()).toContain('Set API_KEY (several keys separated by commas) to use fixed keys that survive a restart.');
      expect((await fetch(`${url}/v1/dataset`)).status).toBe(401);
      expect((await fetch(`${url}/v1/dataset`, { headers: { 'x-api-key': key! } })).status).toBe(200);
      expect((await fetch(`${url}/v1/nowhere`, { headers: { 'x-api-key': key! } })).status).toBe(404);
      expect((await fetch(`${url}/health`)).status).toBe(200);
      expect(await service.stop()).toBe(0);
      expect(service.stderr().split(key!).length - 1, 'the key appears once on stderr').toBe(1);
      expect(service.stdout(), 'the key never reaches the log stream').not.toContain(key!);
      const lines = service.stdout().trim().split('\n');
      for (const line of lines) expect(() => JSON.parse(line) as unknown, line).not.toThrow();
      const requestLines = lines.filter((line) => line.includes('"msg":"request"'));
      expect(requestLines.length).toBeGreaterThanOrEqual(4);
      for (const line of requestLines) expect(Object.keys(JSON.parse(line) as object)).toEqual(expect.arrayContaining(['method', 'path', 'status', 'duration_ms', 'request_id']));
      // Every JSON log line names the service; the start line gives the URL and the docs URLs.
      const jsonLines = service.stdout().split('\n').filter((line) => line.startsWith('{'));
      for (const line of jsonLines) expect((JSON.parse(line) as { service: string }).service, line).toBe('requests');
      const startLines = jsonLines.filter((line) => line.includes('Server listening at'));
      expect(startLines).toHaveLength(1);
      expect((JSON.parse(startLines[0]!) as { msg: string }).msg).toBe(
        `Server listening at ${url}; docs ${url}/docs and ${url}/redoc, OpenAPI ${url}/openapi.json`,
      );
    } finally {
      await service.stop();
    }
  });

  it('without CURSOR_SECRET: one warning line says cursors will not survive a restart or work on another replica', async () => {
    const service = await startRequests({ API_KEY: 'fixed-key-of-the-test-0123' });
    expect(await service.stop()).toBe(0);
    const warnings = service.stdout().split('\n').filter((line) => line.includes('CURSOR_SECRET'));
    expect(warnings).toHaveLength(1);
    expect(JSON.parse(warnings[0]!)).toMatchObject({ level: 40, msg: expect.stringMatching(/not survive a restart or work on another replica/) });
    expect(service.stderr()).not.toContain('the key for this run');
  });

  it('with API_KEY and CURSOR_SECRET set: neither is written anywhere, and no warning about them', async () => {
    const key = 'fixed-key-of-the-test-0123';
    const secrets = 'cursor-secret-new-0123456789abcdef,cursor-secret-old-0123456789abcdef';
    const service = await startRequests({ API_KEY: `${key},second-key-0123456`, CURSOR_SECRET: secrets });
    try {
      expect((await fetch(`${service.baseUrl}/v1/service-requests?limit=1`, { headers: { 'x-api-key': key } })).status).toBe(200);
      expect((await fetch(`${service.baseUrl}/v1/service-requests?cursor=bad`, { headers: { 'x-api-key': 'second-key-0123456' } })).status).toBe(422);
    } finally {
      await service.stop();
    }
    expect(await service.exited).toBe(0);
    for (const text of [key, 'second-key-0123456', 'cursor-secret-new', 'cursor-secret-old']) {
      expect(service.stdout()).not.toContain(text);
      expect(service.stderr()).not.toContain(text);
    }
    expect(service.stdout()).not.toContain('is not set');
  });

  it('DATABASE_URL naming a SQLite file that does not exist stops the start with one line naming the variable', async () => {
    const missing = resolve(REPO_ROOT, 'no-such-folder/snapshot.sqlite');
    const { code, stderr } = await runUntilExit(ENTRY, { PORT: '0', API_KEY: 'start-command-key-01', DATABASE_URL: missing });
    expect(code).toBe(1);
    expect(stderr.trim().split('\n')).toEqual([`Invalid setting DATABASE_URL: the SQLite file ${missing} does not exist (unset DATABASE_URL to build and use the default snapshot)`]);
    expect(existsSync(missing)).toBe(false);
  });
});
