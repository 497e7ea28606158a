import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  failOnFastTierViolations,
  fastTierGuardInstalled,
  installFastTierGuard,
  removeFastTierGuard,
  takeFastTierViolations,
} from '../support/fast-tier-guard.js';
import { REPO_ROOT } from '../support/http.js';
import { TIER_SUFFIXES, belongsElsewhere } from '../support/test-tiers.js';

/**
 * The test tiers by file name (docs/decisions.md, "Test tiers by file name"), and the fast tier's
 * guard: a test of a plain `*.test.ts` file that reaches the test PostgreSQL or Redis, launches a
 * browser, runs Python or starts a process fails with the suffix its file needs. The guard is
 * installed in every file of the fast tier (TEST_TIER=fast); in the full run this file installs it
 * for its own tests and removes it after them.
 */
const DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

function testFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return testFiles(path);
    return entry.name.endsWith('.test.ts') ? [relative(REPO_ROOT, path)] : [];
  });
}

describe('test tiers by file name', () => {
  it('every test file is of the fast tier (`name.test.ts`) or names one of the other tiers (`name.<tier>.test.ts`)', () => {
    const files = testFiles(join(REPO_ROOT, 'test'));
    expect(files.length).toBeGreaterThan(50);
    const unknown = files.filter((file) => {
      const qualifier = /\.([^./]+)\.test\.ts$/.exec(file)?.[1];
      return qualifier !== undefined && !(qualifier in TIER_SUFFIXES);
    });
    expect(unknown, `tiers: ${Object.keys(TIER_SUFFIXES).join(', ')}`).toEqual([]);
  });

  it('tells a test where it belongs', () => {
    expect(belongsElsewhere('server')).toBe('this test needs a server: name its file *.server.test.ts');
    expect(belongsElsewhere('browser')).toBe('this test needs a browser: name its file *.browser.test.ts');
    expect(belongsElsewhere('process')).toBe('this test starts a process of its own: name its file *.process.test.ts');
  });
});

describe('the fast tier guard', () => {
  let installedHere = false;
  let folder: string;
  beforeAll(() => {
    installedHere = !fastTierGuardInstalled();
    installFastTierGuard();
    folder = mkdtempSync(join(tmpdir(), 'test-tiers-'));
  });
  afterAll(() => {
    if (installedHere) removeFastTierGuard();
    rmSync(folder, { recursive: true, force: true });
  });

  it('a connection to the test PostgreSQL fails with where the test belongs, and fails the test even when its error is swallowed', async () => {
    const client = new pg.Client({ connectionString: DATABASE_URL, connectionTimeoutMillis: 2_000 });
    client.on('error', () => undefined);
    await expect(client.connect()).rejects.toThrow(belongsElsewhere('server'));
    expect(() => {
      failOnFastTierViolations();
    }).toThrow(/^PostgreSQL at \S+: this test needs a server: name its file \*\.server\.test\.ts$/);
    expect(takeFastTierViolations()).toEqual([]);
  });

  it('a connection to the test Redis fails the same way', async () => {
    const redis = new Redis(REDIS_URL, { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
    redis.on('error', () => undefined);
    // The client reports its connection as closed; what closed it is the guard's message.
    await expect(redis.connect()).rejects.toThrow();
    redis.disconnect();
    expect(() => {
      failOnFastTierViolations();
    }).toThrow(/^Redis at \S+: this test needs a server: name its file \*\.server\.test\.ts$/);
  });

  it('a browser launch, a Python and any other process are refused with their tiers', async () => {
    // A file named as the browser is: the guard refuses the start before anything runs it.
    const browser = join(folder, 'chromium');
    writeFileSync(browser, '');
    await expect(chromium.launch({ executablePath: browser })).rejects.toThrow(belongsElsewhere('browser'));
    expect(() => spawn(join(REPO_ROOT, 'training/.venv/bin/python'), ['-c', 'pass'])).toThrow(belongsElsewhere('python'));
    expect(() => execFile(process.execPath, ['--version'])).toThrow(belongsElsewhere('process'));
    expect(takeFastTierViolations()).toHaveLength(3);
  });

  it('a server of the test on another loopback port is reached as ever', async () => {
    const server = createServer((socket) => socket.end('hello'));
    await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
    try {
      const { port } = server.address() as AddressInfo;
      const text = await new Promise<string>((answered, failed) => {
        let received = '';
        connect(port, '127.0.0.1')
          .on('data', (chunk: Buffer) => (received += chunk.toString()))
          .on('end', () => answered(received))
          .on('error', failed);
      });
      expect(text).toBe('hello');
      expect(takeFastTierViolations()).toEqual([]);
    } finally {
      await new Promise((closed) => server.close(closed));
    }
  });
});
