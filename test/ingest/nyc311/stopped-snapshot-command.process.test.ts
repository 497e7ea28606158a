/**
 * The snapshot command stopped by a signal leaves nothing behind: not its stages in the temporary
 * directory (about 300 bytes a request read: gigabytes for a history of tens of millions), nor the
 * SQLite file it had not yet renamed onto the output; and it stops with the signal, as it would have.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../support/http.js';

const CLI = join(REPO_ROOT, 'src/ingest/nyc311/cli.ts');
const made: string[] = [];
afterEach(() => {
  for (const directory of made.splice(0)) rmSync(directory, { recursive: true, force: true });
});
const directory = (name: string): string => {
  const path = mkdtempSync(join(tmpdir(), `${name}-`));
  made.push(path);
  return path;
};

/** Starts the command on a synthetic history, sends `signal` once `ready()` holds, and resolves with how it stopped. */
async function stopWhen(args: string[], temporary: string, ready: () => boolean, signal: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null; seen: boolean }> {
  const child = spawn(process.execPath, ['--import', 'tsx', CLI, ...args, '--quiet'], { cwd: REPO_ROOT, env: { ...process.env, TMPDIR: temporary }, stdio: 'ignore' });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, sig) => resolve({ code, signal: sig })));
  const state = { seen: false, stopped: false };
  void exited.then(() => (state.stopped = true));
  while (!state.stopped && !state.seen) {
    if (ready()) {
      state.seen = true;
      child.kill(signal);
    } else await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return { ...(await exited), seen: state.seen };
}

describe('the snapshot command stopped by a signal', () => {
  it('SIGTERM while it stages the export (worker threads): its stage directories are removed and it stops with SIGTERM', { timeout: 120_000 }, async () => {
    const temporary = directory('stage-tmp');
    const out = directory('stage-out');
    const stages = (): string[] => readdirSync(temporary).filter((name) => name.startsWith('snapshot-stage-'));
    const how = await stopWhen(['--rows', '200000', '--from', '2024', '--to', '2024', '--threads', '2', '--output', join(out, 'snapshot.sqlite')], temporary, () => stages().length > 0, 'SIGTERM');
    expect(how.seen).toBe(true);
    expect(how.signal).toBe('SIGTERM');
    expect(stages()).toEqual([]);
    expect(readdirSync(out)).toEqual([]);
  });

  it('SIGINT while its writer thread writes the SQLite file: the file not yet renamed onto the output is removed, with the stages', { timeout: 120_000 }, async () => {
    const temporary = directory('write-tmp');
    const out = directory('write-out');
    const writing = (): boolean => readdirSync(out).some((name) => name.startsWith('snapshot.sqlite.tmp-'));
    const how = await stopWhen(['--rows', '60000', '--from', '2024', '--to', '2024', '--threads', '1', '--output', join(out, 'snapshot.sqlite')], temporary, writing, 'SIGINT');
    expect(how.seen).toBe(true);
    expect(how.signal).toBe('SIGINT');
    expect(readdirSync(out)).toEqual([]);
    expect(readdirSync(temporary).filter((name) => name.startsWith('snapshot-stage-'))).toEqual([]);
  });
});
