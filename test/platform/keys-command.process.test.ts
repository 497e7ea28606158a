import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/http.js';
import { keyFilePath, within } from '../support/key-files.js';
import { runUntilExit, startService, type RunningService } from '../support/process.js';

/**
 * `npm run keys` as an operator runs it, and services started by their start commands reading the
 * file it writes: two replicas see a revoke within 2 s; SIGHUP reads the file at once; an unusable
 * file at start is one line and exit 1.
 */
const run = promisify(execFile);
let cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

async function npmKeys(...args: string[]): Promise<{ stdout: string; stderr: string }> {
  return run('npm', ['run', '--silent', 'keys', '--', ...args], { cwd: REPO_ROOT, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' } });
}

async function started(entry: string, env: Record<string, string>): Promise<RunningService> {
  const service = await startService(entry, env);
  cleanups.push(() => service.stop());
  return service;
}

const classify = (service: RunningService, key: string) =>
  fetch(`${service.baseUrl}/v1/classify`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: '{"subject":"My parcel is lost"}' });

describe('npm run keys and running services', () => {
  it('create prints the key alone on stdout; two tickets processes accept it, and refuse it within 2 s of revoke', async () => {
    const path = keyFilePath();
    const created = await npmKeys('create', '--file', path, '--name', 'Process test', '--services', 'tickets');
    const key = created.stdout.trim();
    expect(key).toMatch(/^cs_[0-9A-Za-z]{36}$/);
    const id = /Created (key_[0-9a-f]{12})/.exec(created.stderr)?.[1];
    expect(id).toBeDefined();
    const env = { API_KEYS_FILE: path };
    const [one, two] = await Promise.all([started('src/services/tickets/main.ts', env), started('src/services/tickets/main.ts', env)]);
    expect((await classify(one, key)).status).toBe(200);
    expect((await classify(two, key)).status).toBe(200);
    await npmKeys('revoke', id!, '--file', path);
    const took = await within(2_000, async () => (await classify(one, key)).status === 401 && (await classify(two, key)).status === 401);
    expect(took).toBeLessThan(2_000);
    const listed = await npmKeys('list', '--file', path);
    expect(listed.stdout).toMatch(new RegExp(`${id}\\s+Process test\\s+tickets\\s+-\\s+-\\s+revoked`));
    for (const service of [one, two]) {
      await service.stop();
      expect(service.stdout() + service.stderr()).not.toContain(key);
      expect(service.stdout()).toContain(`"key_id":"${id}"`);
    }
  }, 60_000);

  it('SIGHUP reads the key file again at once', async () => {
    const path = keyFilePath();
    await npmKeys('create', '--file', path, '--name', 'First');
    const service = await started('src/services/tickets/main.ts', { API_KEYS_FILE: path });
    const second = (await npmKeys('create', '--file', path, '--name', 'Second')).stdout.trim();
    service.child.kill('SIGHUP');
    await within(2_000, () => service.stdout().includes('"cause":"SIGHUP"'));
    expect((await classify(service, second)).status).toBe(200);
    expect(service.child.exitCode).toBeNull();
  }, 60_000);

  it('at start, an unusable key file stops the start: one line naming API_KEYS_FILE, exit 1', async () => {
    const path = keyFilePath();
    writeFileSync(path, '{"version": 1, "keys": [{"id": "a"}]}');
    const { code, stdout, stderr } = await runUntilExit('src/services/tickets/main.ts', { API_KEYS_FILE: path });
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toBe(`Invalid setting API_KEYS_FILE: ${JSON.stringify(path)}: keys[0].name, keys[0].sha256, keys[0].services: missing\n`);
  }, 60_000);
});
