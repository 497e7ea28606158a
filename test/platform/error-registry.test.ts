import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Ajv } from 'ajv';
import {
  ApiError,
  ERROR_CODES,
  ERROR_REGISTRY,
  EXAMPLE_REQUEST_ID,
  errorCodeForStatus,
  errorDefinition,
  errorExample,
  errorResponses,
  type ErrorCodeSource,
} from '../../src/platform/error-registry.js';
import { ErrorResponse } from '../../src/platform/errors.js';
import { REPO_ROOT } from '../support/http.js';

/** conventions.md and specs/ are the shared contracts, beside the repository. */
const SHARED_DIR = process.env.SHARED_DIR ?? resolve(REPO_ROOT, '../shared');

function documentText(source: ErrorCodeSource): string {
  const path = source === 'docs/decisions.md' ? resolve(REPO_ROOT, source) : resolve(SHARED_DIR, source);
  return readFileSync(path, 'utf8');
}

describe('the error registry (docs/decisions.md, "One error registry")', () => {
  it.each(ERROR_CODES)('%s has a 4xx or 5xx status, a message and an OpenAPI description', (code) => {
    const { status, message, when } = ERROR_REGISTRY[code];
    expect(Number.isInteger(status) && status >= 400 && status <= 599).toBe(true);
    expect(message.trim()).not.toBe('');
    expect(when.trim()).not.toBe('');
  });

  it('codes are unique snake_case words', () => {
    expect(new Set(ERROR_CODES).size).toBe(ERROR_CODES.length);
    for (const code of ERROR_CODES) expect(code).toMatch(/^[a-z]+(?:_[a-z]+)*$/);
  });

  it.each(ERROR_CODES)('%s is written with its status in the document that defines it', (code) => {
    const { status, definedIn } = ERROR_REGISTRY[code];
    const text = documentText(definedIn);
    expect(text).toContain(`\`${code}\``);
    // "| 401 | `unauthorized`", "answers 422 `invalid_cursor`", "429\n  `rate_limited`": the status
    // comes before the code, with no other number between them.
    expect(new RegExp(`\\b${status}\\b[^0-9]{0,80}?\`${code}\``).test(text), `${definedIn} gives ${code} the status ${status}`).toBe(true);
  });

  it('the status table of conventions.md agrees with the registry', () => {
    const rows = documentText('conventions.md')
      .split('\n')
      .map((line) => /^\| (\d{3}) \| (.+?) \|/.exec(line))
      .filter((match) => match !== null);
    expect(rows.length).toBeGreaterThan(0);
    for (const [, status, codes] of rows) {
      for (const [, code] of (codes ?? '').matchAll(/`([a-z_]+)`/g)) {
        expect((ERROR_REGISTRY as Readonly<Record<string, { status: number } | undefined>>)[code ?? '']?.status, code).toBe(Number(status));
      }
    }
  });

  it('an ApiError takes its status and default message from its code', () => {
    const error = new ApiError('not_found');
    expect([error.statusCode, error.code, error.message, error.fields, error.headers]).toEqual([404, 'not_found', 'Not Found', [], {}]);
    const worded = new ApiError('invalid_request', { fields: ['a'], message: 'The request is not valid: a is required', headers: { X: '1' } });
    expect([worded.statusCode, worded.message, worded.fields, worded.headers]).toEqual([422, 'The request is not valid: a is required', ['a'], { X: '1' }]);
  });

  it('errorResponses gives one entry per status with an example of each code; a status shared by several codes names each', () => {
    const responses = errorResponses('unauthorized', 'invalid_request', 'outside_model_area') as unknown as Record<
      number,
      { $ref: string; description: string; examples: unknown[] }
    >;
    expect(Object.keys(responses)).toEqual(['401', '422']);
    expect(responses[401]).toEqual({
      $ref: 'ErrorResponse',
      description: 'Missing or invalid API key (code unauthorized)',
      examples: [errorExample('unauthorized')],
    });
    expect(responses[422]?.$ref).toBe('ErrorResponse');
    expect(responses[422]?.description).toBe(
      `code invalid_request: ${ERROR_REGISTRY.invalid_request.when}; code outside_model_area: ${ERROR_REGISTRY.outside_model_area.when}`,
    );
    expect(responses[422]?.examples).toEqual([errorExample('invalid_request'), errorExample('outside_model_area')]);
  });

  it.each(ERROR_CODES)('the example of %s is an error object of the code with its message and the fields it names', (code) => {
    const example = errorExample(code);
    expect(example).toEqual({
      error: { code, message: ERROR_REGISTRY[code].message, request_id: EXAMPLE_REQUEST_ID, fields: errorDefinition(code).exampleFields ?? [] },
    });
    const validate = new Ajv().compile(ErrorResponse);
    expect(validate(example), JSON.stringify(validate.errors)).toBe(true);
    expect(EXAMPLE_REQUEST_ID).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('errorCodeForStatus: each 4xx of the registry its own code, the first of a shared status; others bad_request, every 5xx internal_error', () => {
    for (const code of ERROR_CODES) {
      const { status } = ERROR_REGISTRY[code];
      if (status < 500) expect(ERROR_REGISTRY[errorCodeForStatus(status)].status, code).toBe(status);
    }
    expect([403, 412, 416, 417, 422].map(errorCodeForStatus)).toEqual(['forbidden', 'precondition_failed', 'range_not_satisfiable', 'expectation_failed', 'invalid_request']);
    expect([409, 418, 503, 505].map(errorCodeForStatus)).toEqual(['bad_request', 'bad_request', 'internal_error', 'internal_error']);
  });
});
