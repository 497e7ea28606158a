import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../support/http.js';

/**
 * The synthetic history's generator and the snapshot command run in a V8 heap far smaller than the
 * rows would take: each in a process of its own with a bounded heap (test/ingest/nyc311/bounded-memory-child.ts).
 */
const run = promisify(execFile);
const tsx = join(REPO_ROOT, 'node_modules/.bin/tsx');
const child = join(REPO_ROOT, 'test/ingest/nyc311/bounded-memory-child.ts');
const directory = mkdtempSync(join(tmpdir(), 'snapshot-history-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

describe('synthetic history', () => {
  it('is generated in a 40 MB heap whatever the number of rows (150,000 rows here)', async () => {
    const { stdout } = await run(tsx, [child, 'generate', '150000'], { cwd: REPO_ROOT, env: { ...process.env, NODE_OPTIONS: '--max-old-space-size=40' } });
    expect((JSON.parse(stdout) as { records: number }).records).toBeGreaterThan(150_000);
  }, 120_000);
});

describe('snapshot command in bounded memory', () => {
  it('loads a history of 150,000 rows into SQLite in a 64 MB heap', async () => {
    const output = join(directory, 'history.sqlite');
    const { stdout } = await run(tsx, [child, 'snapshot', '150000', output], { cwd: REPO_ROOT, env: { ...process.env, NODE_OPTIONS: '--max-old-space-size=64' } });
    expect((JSON.parse(stdout) as { row_count: number }).row_count).toBe(150_000);
    const db = new Database(output, { readonly: true });
    try {
      expect(db.prepare('SELECT count(*) FROM service_requests').pluck().get()).toBe(150_000);
    } finally {
      db.close();
    }
  }, 240_000);
});
