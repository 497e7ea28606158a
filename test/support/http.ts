import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** What light-my-request (app.inject) and our fetch helper both give. */
export interface AnyResponse {
  statusCode: number;
  headers: Record<string, unknown>;
  body: string;
}

/** A fetch Response in the shape expectError reads. */
export async function fromFetch(response: Response): Promise<AnyResponse> {
  return { statusCode: response.status, headers: Object.fromEntries(response.headers.entries()), body: await response.text() };
}

/**
 * Asserts the exact error object of conventions.md: status, code, fields, and request_id equal to
 * the X-Request-ID header of the same response. `message` is checked exactly when given.
 */
export function expectError(response: AnyResponse, status: number, code: string, fields: string[], message?: string): void {
  expect({ status: response.statusCode, body: response.body }).toMatchObject({ status });
  const requestId = response.headers['x-request-id'];
  expect(typeof requestId).toBe('string');
  expect(String(response.headers['content-type'])).toMatch(/^application\/json/);
  const body = JSON.parse(response.body) as unknown;
  expect(body).toEqual({
    error: { code, message: message ?? expect.any(String), request_id: requestId, fields },
  });
}

/** A log destination that keeps every JSON line, for tests of the logs. */
export class LogCapture extends Writable {
  readonly raw: string[] = [];

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: () => void): void {
    this.raw.push(...chunk.toString('utf8').split('\n').filter((line) => line.length > 0));
    callback();
  }

  lines(): Record<string, unknown>[] {
    return this.raw.map((line) => JSON.parse(line) as Record<string, unknown>);
  }

  text(): string {
    return this.raw.join('\n');
  }
}

/**
 * The reviewed copy of an OpenAPI description (conventions.md, "OpenAPI"): the test fails on any
 * difference. `npm run openapi:update` (UPDATE_OPENAPI=1) rewrites the copy: a deliberate step whose
 * diff is reviewed like any contract change.
 */
export function expectMatchesReviewedCopy(spec: unknown, relativePath: string): void {
  const path = resolve(REPO_ROOT, relativePath);
  const current = `${JSON.stringify(spec, null, 2)}\n`;
  if (process.env.UPDATE_OPENAPI === '1') {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, current);
    return;
  }
  expect(existsSync(path), `${relativePath} is missing: run npm run openapi:update and review the file`).toBe(true);
  const reviewed = readFileSync(path, 'utf8');
  expect(current, `the OpenAPI description differs from the reviewed copy ${relativePath}`).toBe(reviewed);
}
