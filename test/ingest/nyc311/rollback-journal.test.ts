import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { turnOffRollbackJournal } from '../../../src/ingest/nyc311/rollback-journal.js';

const directory = mkdtempSync(join(tmpdir(), 'rollback-journal-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

describe('the files the snapshot command writes alone', () => {
  it('have no rollback journal: the mode is off (defensive mode refuses it silently), and a write leaves no -journal file beside the file', () => {
    const path = join(directory, 'written.sqlite');
    const db = new Database(path);
    try {
      turnOffRollbackJournal(db);
      expect(db.pragma('journal_mode', { simple: true })).toBe('off');
      db.exec('BEGIN');
      db.exec('CREATE TABLE t (a INTEGER)');
      db.prepare('INSERT INTO t VALUES (?)').run(1);
      expect(readdirSync(directory)).toEqual(['written.sqlite']);
      db.exec('COMMIT');
    } finally {
      db.close();
    }
  });
});
