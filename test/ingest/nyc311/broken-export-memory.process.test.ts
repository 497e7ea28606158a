/**
 * Bounded memory on broken input: an export of 48 MB (read on worker threads, as a large one is)
 * whose third line opens a quoted field (CSV) or a string (JSON) never closed is refused at once,
 * naming the line, without reading the rest of the file into one field: the process's peak
 * resident memory stays far below the file's size. bench/README.md has the figure for 300 MB.
 */
import { execFile } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../support/http.js';

const run = promisify(execFile);
const tsx = join(REPO_ROOT, 'node_modules/.bin/tsx');
const child = join(REPO_ROOT, 'test/ingest/nyc311/bounded-memory-child.ts');
const directory = mkdtempSync(join(tmpdir(), 'broken-export-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

/** A file of `start`, then `line` until it holds `megabytes` MB. */
function writeExport(name: string, start: string, line: string, megabytes: number): string {
  const path = join(directory, name);
  const fd = openSync(path, 'w');
  writeSync(fd, start);
  const block = line.repeat(Math.ceil((1 << 20) / line.length));
  for (let written = 0; written < megabytes * 1e6; written += block.length) writeSync(fd, block);
  closeSync(fd);
  return path;
}

async function refusal(path: string): Promise<{ error: string | null; maxRssMiB: number }> {
  const { stdout } = await run(tsx, [child, 'refuse', path, join(directory, 'never.sqlite')], { cwd: REPO_ROOT });
  return JSON.parse(stdout) as { error: string | null; maxRssMiB: number };
}

describe('an export with a quote or a string never closed', () => {
  it('CSV: refused at its line, in bounded memory', async () => {
    const row = '1234,01/05/2025 10:00:00 AM,,DOT,Street Condition,Pothole,Street,10001,Open,04 MANHATTAN,MANHATTAN,PHONE,40.75,-73.99\n';
    const path = writeExport('open-quote.csv', `Unique Key,Created Date,Closed Date,Agency,Complaint Type,Descriptor,Location Type,Incident Zip,Status,Community Board,Borough,Open Data Channel Type,Latitude,Longitude\n${row}1235,"01/05/2025 10:00:00 AM,,DOT\n`, row, 48);
    const { error, maxRssMiB } = await refusal(path);
    expect(error).toMatch(/^CSV line 3: a record longer than 1 MiB \(1,048,576 characters\) starts here, more than any record of an export holds: a quoted field opened on this line or after it is probably never closed/);
    expect(maxRssMiB).toBeLessThan(250);
  }, 60_000);

  it('JSON: refused at its line, in bounded memory', async () => {
    const record = '{"unique_key":"1","created_date":"2025-01-05T10:00:00.000","agency":"DOT"}\n,';
    const path = writeExport('open-string.json', `[${record}{"unique_key":"2","descriptor":"never closed\n`, record, 48);
    const { error, maxRssMiB } = await refusal(path);
    expect(error).toMatch(/^JSON line 2: a record longer than 1 MiB/);
    expect(maxRssMiB).toBeLessThan(250);
  }, 60_000);
});
