import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { readSnapshotMeta } from '../../../src/snapshot/snapshot-readers.js';
import { REPO_ROOT } from '../../support/http.js';
import { MALFORMED_FIXTURE, STANDARD_41_FIXTURE } from './fixture-paths.js';

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

  it('stops, writing nothing, when more than 1% of the records are malformed: each column named with an example and the forms it is read in', async () => {
    const attempt = run(tsx, [cli, '--input', MALFORMED_FIXTURE, '--output', join(directory, 'never.sqlite'), '--quiet'], { cwd: REPO_ROOT });
    await expect(attempt).rejects.toMatchObject({ code: 1 });
    const { stderr } = (await attempt.catch((error: unknown) => error)) as { stderr: string };
    expect(stderr).toContain('snapshot: 6 of 8 records (75.0%) hold a value in a form no export uses, more than the 1% the command leaves out on its own: nothing was written.');
    expect(stderr).toContain('  Created Date: 2 records, e.g. line 5, Unique Key 2004: Created Date "2025-02-03T10:30:00Z". Read as: 05/01/2022 12:04:47 AM (the portal)');
    expect(stderr).toContain('  Latitude: 1 records, e.g. line 7, Unique Key 2006: Latitude "N40.676". Read as: a decimal number (40.7128; also 40,7128, as a spreadsheet of a European locale writes it), or empty.');
    expect(stderr).toContain('give --allow-malformed to leave these records out and go on');
    expect(stderr).not.toMatch(/\n\s+at /); // no stack trace
    expect(existsSync(join(directory, 'never.sqlite'))).toBe(false);
  }, 60_000);

  it('--allow-malformed goes on, leaves them out and says how many, in the JSON summary and on stderr', async () => {
    const output = join(directory, 'allowed.sqlite');
    const { stdout, stderr } = await run(tsx, [cli, '--input', MALFORMED_FIXTURE, '--output', output, '--no-filter', '--allow-malformed', '--quiet'], { cwd: REPO_ROOT });
    const summary = JSON.parse(stdout) as Record<string, unknown>;
    expect(summary).toMatchObject({
      row_count: 2,
      raw_rows_read: 8,
      export: { format: 'portal_csv', column_count: 41, missing_columns: [{ column: 'Council District', gives: 'council_district is null for every row' }] },
      not_served: { malformed_record: { rows: 6, examples: [{ line: 4, unique_key: '2003', column: 'Closed Date', value: 'not a date' }, { line: 5 }, { line: 6 }] } },
      malformed_by_column: { 'Created Date': { rows: 2 } },
    });
    expect(stderr).toContain('snapshot: read as the portal\'s CSV (columns named as the portal shows them), 41 columns, 8 records');
    expect(stderr).toContain('snapshot: column "Council District" is not in the export: council_district is null for every row');
    expect(stderr).toContain('snapshot: 6 rows not served: malformed_record (a value in a form no export uses), e.g. line 4, Unique Key 2003: Closed Date "not a date"');
    expect(stderr).toContain('snapshot: --allow-malformed: 6 malformed records left out, 2 requests served');
    expect(existsSync(output)).toBe(true);
  }, 60_000);

  it('refuses a file that is not an export with one line and no stack trace', async () => {
    const zip = join(directory, 'export.zip');
    writeFileSync(zip, Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x14, 0x00, 0x00, 0x00, 0x0a, 0x00]));
    const attempt = run(tsx, [cli, '--input', zip, '--output', join(directory, 'never.sqlite'), '--quiet'], { cwd: REPO_ROOT });
    await expect(attempt).rejects.toMatchObject({ code: 1, stderr: '\nsnapshot: The export is a ZIP archive or a spreadsheet workbook (.xlsx), not a CSV or JSON file: unpack it, or save the sheet as CSV, first.\n' });
    const absent = run(tsx, [cli, '--input', join(directory, 'absent.csv'), '--output', join(directory, 'never.sqlite'), '--quiet'], { cwd: REPO_ROOT });
    await expect(absent).rejects.toMatchObject({ code: 1, stderr: expect.stringMatching(/^\nsnapshot: cannot read .*absent\.csv: no such file\n$/) });
  }, 60_000);
});
