import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ExportFormatError } from '../../../src/ingest/nyc311/export-format-error.js';
import { MissingColumnError } from '../../../src/ingest/nyc311/export-columns.js';
import { stageExportText } from '../../../src/ingest/nyc311/parallel-staging.js';
import { MALFORMED_FIXTURE, STANDARD_41_FIXTURE } from './fixture-paths.js';
import { chunksOf, historiesOnThreads, historyText, stagedBoth } from './parallel-staging-checks.js';

/**
 * The staging on worker threads against the staging on one thread: the same export, cut into small
 * chunks so that its records are dealt to the workers in many pieces, must give the same cleaned
 * requests in the same order, and every rule the same count. Synthetic histories of some thousands
 * of requests: parallel-staging.machine.test.ts (here, of about a thousand).
 */
const stageRoot = mkdtempSync(join(tmpdir(), 'parallel-staging-test-'));
afterAll(() => rmSync(stageRoot, { recursive: true, force: true }));

/** A record of the 14 needed columns; `id` first. */
const HEADER = 'Unique Key,Created Date,Closed Date,Agency,Complaint Type,Descriptor,Location Type,Incident Zip,Status,Community Board,Borough,Open Data Channel Type,Latitude,Longitude\r\n';
function record(id: number, created: string, closed: string, descriptor: string): string {
  return `${id},${created},${closed},DOT,Street Condition,${descriptor},Street,10001,Closed,04 MANHATTAN,MANHATTAN,PHONE,40.75,-73.99\r\n`;
}

describe('staging on worker threads gives the staging on one thread', () => {
  const history = historiesOnThreads(stageRoot, { pieces: 1_000, layouts: 800 });
  it(history.pieces.name, history.pieces.check, 60_000);
  it(history.layouts.name, history.layouts.check, 60_000);

  it('a Unique Key read again in a later piece is a duplicate, wherever each piece was cleaned', async () => {
    // The first record of key 7 is created last: file order decides, not the order of creation.
    const records = [record(7, '06/30/2025 11:00:00 PM', '', 'Pothole')];
    for (let i = 0; i < 300; i++) records.push(record(1000 + i, '01/05/2025 10:00:00 AM', '01/06/2025 10:00:00 AM', `"Cave-in, ""big"" ${i}"`));
    records.push(record(7, '01/01/2025 12:00:00 AM', '', 'Pothole'), record(1000, '01/02/2025 12:00:00 AM', '', 'Pothole'));
    const text = `\uFEFF${HEADER}${records.join('')}`;
    const [onWorkers, oneThread] = await stagedBoth(stageRoot, text, 97, 2, true);
    expect(onWorkers).toEqual(oneThread);
    const rules = (onWorkers as { rules: { id: string; rows_removed: number }[] }).rules;
    expect(rules.find((rule) => rule.id === 'duplicate_unique_key')?.rows_removed).toBe(2);
  });

  it('the 41-column fixture, with the filters, in chunks of every size from 50 to 2000 characters', async () => {
    const text = readFileSync(STANDARD_41_FIXTURE, 'utf8');
    for (const size of [50, 333, 2000]) {
      const [onWorkers, oneThread] = await stagedBoth(stageRoot, text, size, 2, true);
      expect(onWorkers, `chunks of ${size}`).toEqual(oneThread);
    }
  });

  it('the malformed records: the same counts by column and the same first examples, by line', async () => {
    const text = readFileSync(MALFORMED_FIXTURE, 'utf8');
    for (const size of [60, 500]) {
      const [onWorkers, oneThread] = await stagedBoth(stageRoot, text, size, 3, false);
      expect(onWorkers, `chunks of ${size}`).toEqual(oneThread);
    }
  });

});

describe('staging on worker threads fails as the staging on one thread', () => {
  it('a CSV error names the line of its record in the file', async () => {
    const records = Array.from({ length: 200 }, (_, i) => record(2000 + i, '02/01/2025 09:00:00 AM', '', 'Pothole'));
    records[150] = '2150,02/01/2025 09:00:00 AM,,DOT,"Street"x,Pothole,Street,10001,Open,04 MANHATTAN,MANHATTAN,PHONE,40.75,-73.99\r\n';
    const text = HEADER + records.join('');
    const oneThread = stageExportText(chunksOf(text, 500), { stageDirectory: stageRoot });
    await expect(oneThread).rejects.toThrow('CSV line 152: unexpected character after a closing quote');
    const onWorkers = stageExportText(chunksOf(text, 500), { stageDirectory: stageRoot, threads: 2 });
    await expect(onWorkers).rejects.toThrow(new ExportFormatError('CSV', 152, 'unexpected character after a closing quote'));
  });

  it('a quoted field never closed, an empty export and a missing Unique Key', async () => {
    const open = `${HEADER}${record(1, '02/01/2025 09:00:00 AM', '', 'Pothole')}3,"02/01/2025`;
    await expect(stageExportText([open], { threads: 2, stageDirectory: stageRoot })).rejects.toThrow(
      'CSV line 3: a quoted field of the record starting here is not closed before the end of the file',
    );
    await expect(stageExportText([''], { threads: 2, stageDirectory: stageRoot })).rejects.toThrow(/empty: no header row/);
    await expect(stageExportText([HEADER.replace('Unique Key', 'Key')], { threads: 2, stageDirectory: stageRoot })).rejects.toBeInstanceOf(
      MissingColumnError,
    );
  });

  it('leaves no stage behind after a failure, nor once the requests are read', async () => {
    const before = readdirSync(stageRoot).length;
    const bad = `${HEADER}${record(1, '02/01/2025 09:00:00 AM', '', 'Pothole')}2,"x"y\r\n`;
    await expect(stageExportText(chunksOf(bad, 40), { threads: 2, stageDirectory: stageRoot })).rejects.toBeInstanceOf(ExportFormatError);
    const staged = await stageExportText(chunksOf(historyText(500), 1000), { threads: 2, applyFilters: false, stageDirectory: stageRoot });
    expect(readdirSync(stageRoot).length).toBe(before + 2);
    expect([...staged.rows()].length).toBeGreaterThan(400);
    expect(readdirSync(stageRoot).length).toBe(before);
  }, 30_000);
});
