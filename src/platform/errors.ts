import { Type, type Static } from 'typebox';
import { ApiError, ERROR_RESPONSE_SCHEMA_ID, type ErrorCode, errorDefinition } from './error-registry.js';

/**
 * An error answer stays small whatever the request (docs/decisions.md, "Size of an error answer"):
 * `error.fields` holds the first 100 offending names, and a name (a client's own key can be 60 KB
 * long) is cut to its first 40 characters followed by `…`.
 */
export const MAX_ERROR_FIELDS = 100;
export const MAX_FIELD_NAME_LENGTH = 40;

/** The error object of every error response (conventions.md, "Every response"). */
export const ErrorResponse = Type.Object(
  {
    error: Type.Object(
      {
        code: Type.String({ description: 'Machine-readable code' }),
        message: Type.String({ description: 'Human-readable text' }),
        request_id: Type.String({ description: 'Equals the X-Request-ID header of the same response' }),
        fields: Type.Array(Type.String(), {
          maxItems: MAX_ERROR_FIELDS,
          description:
            `Names of the offending request fields or parameters; empty when none applies. At most the first ${MAX_ERROR_FIELDS} ` +
            `(the message then says how many more), a name longer than ${MAX_FIELD_NAME_LENGTH} characters cut to its first ` +
            `${MAX_FIELD_NAME_LENGTH} followed by …`,
        }),
      },
      { additionalProperties: false, required: ['code', 'message', 'request_id', 'fields'] },
    ),
  },
  { $id: ERROR_RESPONSE_SCHEMA_ID, additionalProperties: false, description: 'The error object' },
);
export type ErrorResponse = Static<typeof ErrorResponse>;

/** The error object; whoever made `fields`, at most MAX_ERROR_FIELDS names, each as shownFieldName shows it. */
export function errorBody(code: ErrorCode, message: string, requestId: string, fields: readonly string[] = []): ErrorResponse {
  return { error: { code, message, request_id: requestId, fields: fields.slice(0, MAX_ERROR_FIELDS).map(shownFieldName) } };
}

/** `a, b, c` for the first MAX_ERROR_FIELDS names, then `(and N more fields)`: for messages that list fields. */
export function listedFieldNames(fields: readonly string[]): string {
  const listed = fields.slice(0, MAX_ERROR_FIELDS).map(shownFieldName).join(', ');
  const unlisted = fields.length - MAX_ERROR_FIELDS;
  return unlisted > 0 ? `${listed} (and ${unlisted} more field${unlisted === 1 ? '' : 's'})` : listed;
}

/** A field name as an error answer shows it: cut to MAX_FIELD_NAME_LENGTH characters (never inside a surrogate pair). */
export function shownFieldName(name: string): string {
  if (name.length <= MAX_FIELD_NAME_LENGTH) return name;
  let end = MAX_FIELD_NAME_LENGTH;
  const last = name.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return `${name.slice(0, end)}…`;
}

/** `The request is not valid: <details>`: the message of a 422 invalid_request that says what is wrong. */
export function invalidRequestMessage(details: string): string {
  return `${errorDefinition('invalid_request').message}: ${details}`;
}

/**
 * The offending fields (or parameters) of one 422 `invalid_request` and what is wrong with each, in
 * the order found: each name once (a Set, so linear in the number of problems), the first
 * MAX_ERROR_FIELDS kept, the others only counted. The message reads
 * `The request is not valid: a is required; b must be at most 11 (and 3 more fields)`.
 */
export class FieldProblems {
  readonly fields: string[] = [];
  private readonly problems: string[] = [];
  private readonly seen = new Set<string>();
  private unlisted = 0;

  constructor(private readonly noun: 'field' | 'parameter' = 'field') {}

  /**
   * Records `field` (its full name) with its problem; a field already recorded is ignored. The problem
   * may be given as a function, worded only for the names that are listed.
   */
  add(field: string, problem: string | (() => string)): this {
    if (this.seen.has(field)) return this;
    this.seen.add(field);
    if (this.fields.length < MAX_ERROR_FIELDS) {
      const shown = shownFieldName(field);
      this.fields.push(shown);
      this.problems.push(`${shown} ${typeof problem === 'string' ? problem : problem()}`);
    } else {
      this.unlisted += 1;
    }
    return this;
  }

  has(field: string): boolean {
    return this.seen.has(field);
  }

  get size(): number {
    return this.seen.size;
  }

  message(): string {
    const more = this.unlisted === 0 ? '' : ` (and ${this.unlisted} more ${this.noun}${this.unlisted === 1 ? '' : 's'})`;
    return invalidRequestMessage(`${this.problems.join('; ')}${more}`);
  }

  toError(): ApiError {
    return new ApiError('invalid_request', { fields: this.fields, message: this.message() });
  }
}
