import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { readSnapshotMeta } from '../../../src/snapshot/snapshot-readers.js';
import { REPO_ROOT } from '../../support/http.js';
import { MISSING_COLUMNS_FIXTURE, STANDARD_41_FIXTURE } from './fixture-paths.js';

/**
 * The hand-written export through the snapshot command in processes of their own: ensureSnapshot
 * from two processes at once, and the command line (in process: fixture-snapshot.test.ts).
 */
const run = promisify(execFile);
const directory = mkdtempSync(join(tmpdir(), 'snapshot-command-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

describe('ensureSnapshot from two processes at once', () => {
  it('builds once; both processes find a complete snapshot', async () => {
    const path = join(directory, 'two-processes', 'snapshot.sqlite');
    const tsx = join(REPO_ROOT, 'node_modules/.bin/tsx');
    const child = join(REPO_ROOT, 'test/ingest/nyc311/ensure-snapshot-child.ts');
    const results = await Promise.all([0, 1].map(() => run(tsx, [child, path, STANDARD_41_FIXTURE], { cwd: REPO_ROOT })));
    const built = results.map((r) => (JSON.parse(r.stdout) as { built: boolean }).built);
    expect(built.filter(Boolean)).toHaveLength(1);
    expect(readdirSync(join(directory, 'two-processes'))).toEqual(['snapshot.sqlite']);
    const check = new Database(path, { readonly: true });
    expect(readSnapshotMeta(check).row_count).toBe(15);
    check.close();
  }, 60_000);
});

describe('the snapshot command', () => {
  const cli = join(REPO_ROOT, 'src/ingest/nyc311/cli.ts');
  const tsx = join(REPO_ROOT, 'node_modules/.bin/tsx');

  it('builds a SQLite snapshot from an export and prints a summary', async () => {
    const output = join(directory, 'cli.sqlite');
    const { stdout, stderr } = await run(tsx, [cli, '--input', STANDARD_41_FIXTURE, '--output', output], { cwd: REPO_ROOT });
    const summary = JSON.parse(stdout) as { row_count: number; removed: Record<string, number> };
    expect(summary.row_count).toBe(15);
    expect(summary.removed.repeated_submission).toBe(3);
    expect(stderr).toMatch(/reading and cleaning/);
    expect(existsSync(output)).toBe(true);
  }, 60_000);

  it('--threads 2 (staging and writer threads) builds the snapshot of --threads 0; --threads takes a count', async () => {
    const snapshotIdWith = async (threads: string): Promise<string> => {
      const output = join(directory, `cli-threads-${threads}.sqlite`);
      const { stdout } = await run(tsx, [cli, '--input', STANDARD_41_FIXTURE, '--output', output, '--threads', threads, '--quiet'], { cwd: REPO_ROOT });
      return (JSON.parse(stdout) as { snapshot_id: string }).snapshot_id;
    };
    expect(await snapshotIdWith('2')).toBe(await snapshotIdWith('0'));
    const attempt = run(tsx, [cli, '--input', STANDARD_41_FIXTURE, '--output', join(directory, 'never.sqlite'), '--threads', 'two'], { cwd: REPO_ROOT });
    await expect(attempt).rejects.toMatchObject({ code: 2, stderr: expect.stringMatching(/--threads must be an integer from 0 to 64/) });
  }, 60_000);

  it('stops with a clear message naming the missing columns', async () => {
    const attempt = run(tsx, [cli, '--input', MISSING_COLUMNS_FIXTURE, '--output', join(directory, 'never.sqlite'), '--quiet'], { cwd: REPO_ROOT });
    await expect(attempt).rejects.toMatchObject({ code: 1, stderr: expect.stringMatching(/lacks the needed columns "Status", "Borough"/) });
    expect(existsSync(join(directory, 'never.sqlite'))).toBe(false);
  }, 60_000);
});
