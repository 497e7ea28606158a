import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/http.js';
import { createSqliteFixture, type FixtureDatabase } from './support/fixture-database.js';

/** The start command (main.ts), as `npm run start:requests` runs it, in its own process. */
describe('start command of the service-request API', () => {
  let fixture: FixtureDatabase;
  beforeAll(() => {
    fixture = createSqliteFixture();
  });
  afterAll(async () => fixture?.drop());

  it('without API_KEY: a random key printed once on stdout, never in the request log lines; SIGTERM exits 0', async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, PORT: '0', HOST: '127.0.0.1', DATABASE_URL: fixture.databaseUrl };
    delete env.API_KEY;
    delete env.CURSOR_SECRET;
    const child = spawn(process.execPath, ['--import', 'tsx', resolve(REPO_ROOT, 'src/services/requests/main.ts')], {
      cwd: REPO_ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    const exited = new Promise<number | null>((resolveExit) => child.once('exit', (code) => resolveExit(code)));
    try {
      const deadline = Date.now() + 20_000;
      let url: string | undefined;
      while (url === undefined && Date.now() < deadline) {
        url = /"msg":"Server listening at (http:\/\/127\.0\.0\.1:\d+);/.exec(stdout)?.[1];
        if (url === undefined) await new Promise((r) => setTimeout(r, 50));
      }
      expect(url, stdout).toBeDefined();
      const key = /the key for this run is (\S+)/.exec(stdout)?.[1];
      expect(key).toMatch(/^[A-Za-z0-9_-]{32}$/);
      expect((await fetch(`${url}/v1/dataset`)).status).toBe(401);
      expect((await fetch(`${url}/v1/dataset`, { headers: { 'x-api-key': key! } })).status).toBe(200);
      expect((await fetch(`${url}/health`)).status).toBe(200);
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(stdout.split(key!).length - 1, 'the key appears once').toBe(1);
      const requestLines = stdout.split('\n').filter((line) => line.includes('"msg":"request"'));
      expect(requestLines.length).toBeGreaterThanOrEqual(3);
      for (const line of requestLines) expect(Object.keys(JSON.parse(line) as object)).toEqual(expect.arrayContaining(['method', 'path', 'status', 'duration_ms', 'request_id']));
      // Every JSON log line names the service; the start line gives the URL and the docs URLs.
      const jsonLines = stdout.split('\n').filter((line) => line.startsWith('{'));
      for (const line of jsonLines) expect((JSON.parse(line) as { service: string }).service, line).toBe('requests');
      const startLines = jsonLines.filter((line) => line.includes('Server listening at'));
      expect(startLines).toHaveLength(1);
      expect((JSON.parse(startLines[0]!) as { msg: string }).msg).toBe(
        `Server listening at ${url}; docs ${url}/docs and ${url}/redoc, OpenAPI ${url}/openapi.json`,
      );
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });

  it('DATABASE_URL naming a SQLite file that does not exist stops the start with one line naming the variable', async () => {
    const missing = resolve(REPO_ROOT, 'no-such-folder/snapshot.sqlite');
    const child = spawn(process.execPath, ['--import', 'tsx', resolve(REPO_ROOT, 'src/services/requests/main.ts')], {
      cwd: REPO_ROOT,
      env: { ...process.env, PORT: '0', HOST: '127.0.0.1', API_KEY: 'k', DATABASE_URL: missing },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const code = await new Promise<number | null>((resolveExit) => child.once('exit', (exitCode) => resolveExit(exitCode)));
    expect(code).toBe(1);
    expect(stderr.trim().split('\n')).toEqual([`Invalid setting DATABASE_URL: the SQLite file ${missing} does not exist (unset DATABASE_URL to build and use the default snapshot)`]);
    expect(existsSync(missing)).toBe(false);
  });
});
