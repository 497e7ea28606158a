import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PlatformApp } from '../../src/platform/platform-app.js';
import { buildHousesApp } from '../../src/services/houses/app.js';
import { readHouseSettings } from '../../src/services/houses/settings.js';
import { expectError, LogCapture } from '../support/http.js';
import { FIXTURE_MODEL_PATH, house, postJson, sha256OfFile } from './support.js';

/**
 * house-prices.md "States and transitions": the model file is checked once at start; missing,
 * refused (SHA-256 differs) or unparseable all mean 503 model_unavailable on estimate, batch and
 * model card, /health 200, /ready 503, and a log line at start saying why.
 */
const folder = mkdtempSync(join(tmpdir(), 'houses-model-'));
const FIXTURE_SHA256 = sha256OfFile(FIXTURE_MODEL_PATH);

afterAll(() => {
  rmSync(folder, { recursive: true, force: true });
});

async function startWith(modelPath: string, sha256: string): Promise<{ app: PlatformApp; logs: LogCapture }> {
  const logs = new LogCapture();
  const app = await buildHousesApp(readHouseSettings({ MODEL_PATH: modelPath, MODEL_SHA256: sha256 }), { logStream: logs });
  return { app, logs };
}

function tamperedCopy(): string {
  const bytes = readFileSync(FIXTURE_MODEL_PATH);
  // Change one digit of the baseline: same size, still valid JSON, another SHA-256.
  const text = bytes.toString('utf8');
  const changed = Buffer.from(text.replace('"baseline":5.52', '"baseline":5.53'), 'utf8');
  expect(changed.length).toBe(bytes.length);
  expect(changed.equals(bytes)).toBe(false);
  const path = join(folder, 'tampered.json');
  writeFileSync(path, changed);
  return path;
}

function unparseableFile(): { path: string; sha256: string } {
  const path = join(folder, 'unparseable.json');
  writeFileSync(path, '{"format_version": 1, "trees": "not trees"}\n');
  return { path, sha256: sha256OfFile(path) };
}

const UNAVAILABLE_MESSAGE = 'The price model is unavailable';

const CASES: { name: string; start: () => { path: string; sha256: string }; logged: RegExp; status: string }[] = [
  { name: 'missing file', start: () => ({ path: join(folder, 'absent.json'), sha256: FIXTURE_SHA256 }), logged: /is missing/, status: 'missing' },
  {
    name: 'hash mismatch (another configured SHA-256)',
    start: () => {
      const path = join(folder, 'copy.json');
      copyFileSync(FIXTURE_MODEL_PATH, path);
      return { path, sha256: 'ab'.repeat(32) };
    },
    logged: /differs from the configured value/,
    status: 'hash_mismatch',
  },
  {
    name: 'tampered file of the same size with the original configured SHA-256',
    start: () => ({ path: tamperedCopy(), sha256: FIXTURE_SHA256 }),
    logged: /differs from the configured value/,
    status: 'hash_mismatch',
  },
  {
    name: 'unparseable file with the configured SHA-256 (the hash is checked before parsing)',
    start: () => {
      const path = join(folder, 'garbage.json');
      writeFileSync(path, 'not json at all');
      return { path, sha256: FIXTURE_SHA256 };
    },
    logged: /differs from the configured value/,
    status: 'hash_mismatch',
  },
  { name: 'unparseable file with its own SHA-256', start: unparseableFile, logged: /cannot be parsed/, status: 'unparseable' },
];

for (const { name, start, logged, status } of CASES) {
  describe(`model state: ${name}`, () => {
    let app: PlatformApp;
    let logs: LogCapture;
    let source: { path: string; sha256: string };
    beforeAll(async () => {
      source = start();
      ({ app, logs } = await startWith(source.path, source.sha256));
    });
    afterAll(async () => {
      await app.close();
    });

    it('POST /v1/estimates answers 503 model_unavailable without internals', async () => {
      const response = await postJson(app, '/v1/estimates', house());
      expectError(response, 503, 'model_unavailable', [], UNAVAILABLE_MESSAGE);
      expect(response.body).not.toContain(folder);
      expect(response.body).not.toContain(source.sha256);
    });
    it('POST /v1/estimates/batch answers 503 model_unavailable', async () => {
      expectError(await postJson(app, '/v1/estimates/batch', { houses: [house()] }), 503, 'model_unavailable', [], UNAVAILABLE_MESSAGE);
    });
    it('GET /v1/model answers 503 model_unavailable', async () => {
      expectError(await app.inject({ url: '/v1/model' }), 503, 'model_unavailable', [], UNAVAILABLE_MESSAGE);
    });
    it('an invalid house is still 422 invalid_request (validation comes first)', async () => {
      expectError(await postJson(app, '/v1/estimates', house({ grade: 14 })), 422, 'invalid_request', ['grade']);
    });
    it('/health answers 200 and /ready 503 model_unavailable', async () => {
      const health = await app.inject({ url: '/health' });
      expect(health.statusCode).toBe(200);
      expect(health.json()).toEqual({ status: 'ok' });
      expectError(await app.inject({ url: '/ready' }), 503, 'model_unavailable', [], UNAVAILABLE_MESSAGE);
    });
    it('logs one line at start saying why no model was loaded', () => {
      const lines = logs.lines().filter((line) => line.model_status !== undefined);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatchObject({ level: 50, model_status: status, model_path: source.path });
      expect(String(lines[0]?.msg)).toMatch(/^no model loaded: /);
      expect(String(lines[0]?.msg)).toMatch(logged);
    });
  });
}

describe('model state: loaded', () => {
  it('answers, and logs which model was loaded', async () => {
    const { app, logs } = await startWith(FIXTURE_MODEL_PATH, FIXTURE_SHA256.toUpperCase());
    expect((await postJson(app, '/v1/estimates', house())).statusCode).toBe(200);
    expect((await app.inject({ url: '/ready' })).statusCode).toBe(200);
    const lines = logs.lines().filter((line) => line.model_status !== undefined);
    expect(lines).toEqual([
      expect.objectContaining({
        level: 30,
        model_status: 'loaded',
        model_version: 'tiny-fixture-1',
        model_path: FIXTURE_MODEL_PATH,
        model_sha256: FIXTURE_SHA256,
        msg: `model tiny-fixture-1 loaded from ${FIXTURE_MODEL_PATH}`,
      }),
    ]);
    await app.close();
  });
  it('reads the file once, at start: later changes to the file change nothing', async () => {
    const path = join(folder, 'later.json');
    copyFileSync(FIXTURE_MODEL_PATH, path);
    const { app } = await startWith(path, FIXTURE_SHA256);
    const before = (await postJson(app, '/v1/estimates', house())).json<unknown>();
    rmSync(path);
    const after = await postJson(app, '/v1/estimates', house());
    expect(after.statusCode).toBe(200);
    expect(after.json()).toEqual(before);
    await app.close();
  });
});
