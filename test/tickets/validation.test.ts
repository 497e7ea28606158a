import { describe, expect, it } from 'vitest';
import { expectError } from '../support/http.js';
import { startTickets } from './tickets-app.js';
import { appDuringSuite } from '../support/during-suite.js';

/** ticket-classifier.md: the 422 cases of POST /v1/classify, their boundaries, and 413. */
describe('POST /v1/classify validation', () => {
  const app = appDuringSuite(async () => (await startTickets()).app);

  const post = (payload: unknown, headers: Record<string, string> = {}) =>
    app.inject({ method: 'POST', url: '/v1/classify', headers, payload: payload as string });

  it('subject is the empty string: 422 invalid_request, fields subject', async () => {
    expectError(await post({ subject: '' }), 422, 'invalid_request', ['subject']);
  });

  it('subject is missing: 422 invalid_request, fields subject', async () => {
    expectError(await post({ body: 'refund' }), 422, 'invalid_request', ['subject']);
  });

  it('subject longer than 120 characters: 422, fields subject', async () => {
    expectError(await post({ subject: 'a'.repeat(121) }), 422, 'invalid_request', ['subject']);
  });

  it('body longer than 5000 characters: 422, fields body', async () => {
    expectError(await post({ subject: 'ok', body: 'b'.repeat(5001) }), 422, 'invalid_request', ['body']);
  });

  it('a field that Ticket does not define: 422, fields names it', async () => {
    expectError(await post({ subject: 'ok', priority: 1 }), 422, 'invalid_request', ['priority']);
  });

  it('body of the request is not valid JSON: 422, fields body', async () => {
    expectError(await post('{"subject": "x",', { 'content-type': 'application/json' }), 422, 'invalid_request', ['body']);
  });

  it('every offending field is named at once', async () => {
    const response = await post({ subject: '', body: 'b'.repeat(5001), extra: true });
    expectError(response, 422, 'invalid_request', ['extra', 'subject', 'body']);
  });

  describe('boundaries', () => {
    it('subject of 1 character is valid', async () => {
      expect((await post({ subject: 'a' })).statusCode).toBe(200);
    });
    it('subject of 119 characters is valid', async () => {
      expect((await post({ subject: 'a'.repeat(119) })).statusCode).toBe(200);
    });
    it('subject of 120 characters is valid', async () => {
      expect((await post({ subject: 'a'.repeat(120) })).statusCode).toBe(200);
    });
    it('subject of 121 characters is refused', async () => {
      expectError(await post({ subject: 'a'.repeat(121) }), 422, 'invalid_request', ['subject']);
    });
    it('subject of 120 emoji is valid: lengths count characters, not UTF-16 units', async () => {
      expect((await post({ subject: '😀'.repeat(120) })).statusCode).toBe(200);
    });
    it('subject of 121 emoji is refused', async () => {
      expectError(await post({ subject: '😀'.repeat(121) }), 422, 'invalid_request', ['subject']);
    });
    it('body of 0 characters is valid', async () => {
      expect((await post({ subject: 'x', body: '' })).statusCode).toBe(200);
    });
    it('body of 5000 characters is valid', async () => {
      expect((await post({ subject: 'x', body: 'b'.repeat(5000) })).statusCode).toBe(200);
    });
    it('body of 5000 emoji is valid', async () => {
      expect((await post({ subject: 'x', body: '😀'.repeat(5000) })).statusCode).toBe(200);
    });
    it('body of 5001 characters is refused', async () => {
      expectError(await post({ subject: 'x', body: 'b'.repeat(5001) }), 422, 'invalid_request', ['body']);
    });
  });

  describe('types are not coerced', () => {
    it('a number for subject is refused', async () => {
      expectError(await post({ subject: 42 }), 422, 'invalid_request', ['subject']);
    });
    it('null body is refused', async () => {
      expectError(await post({ subject: 'x', body: null }), 422, 'invalid_request', ['body']);
    });
    it('a JSON array instead of an object is refused with fields body', async () => {
      expectError(await post([{ subject: 'x' }]), 422, 'invalid_request', ['body']);
    });
    it('an empty JSON body is refused with fields body', async () => {
      expectError(await post('', { 'content-type': 'application/json' }), 422, 'invalid_request', ['body']);
    });
  });

  describe('body size (conventions: 64 KiB, checked before validation)', () => {
    it('a body over 64 KiB answers 413 body_too_large', async () => {
      expectError(await post({ subject: 'x', body: 'b'.repeat(70_000) }), 413, 'body_too_large', []);
    });
    it('413 comes before validation, even with unknown fields', async () => {
      expectError(await post({ unknown: 'u'.repeat(70_000) }), 413, 'body_too_large', []);
    });
    it('a body of exactly 64 KiB is read and validated (422, not 413)', async () => {
      const padding = 65536 - JSON.stringify({ subject: 'x', body: '' }).length;
      const payload = JSON.stringify({ subject: 'x', body: 'b'.repeat(padding) });
      expect(Buffer.byteLength(payload)).toBe(65536);
      expectError(await post(payload, { 'content-type': 'application/json' }), 422, 'invalid_request', ['body']);
    });
  });

  it('a body that is not JSON by Content-Type answers 415 unsupported_media_type', async () => {
    expectError(await post('subject=x', { 'content-type': 'application/x-www-form-urlencoded' }), 415, 'unsupported_media_type', ['Content-Type']);
    expectError(await post('hello', { 'content-type': 'text/plain' }), 415, 'unsupported_media_type', ['Content-Type']);
  });
});
