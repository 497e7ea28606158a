import { STATUS_CODES } from 'node:http';
import { Type, type Static } from 'typebox';

/** The error object of every error response (conventions.md, "Every response"). */
export const ErrorResponse = Type.Object(
  {
    error: Type.Object(
      {
        code: Type.String({ description: 'Machine-readable code' }),
        message: Type.String({ description: 'Human-readable text' }),
        request_id: Type.String({ description: 'Equals the X-Request-ID header of the same response' }),
        fields: Type.Array(Type.String(), {
          description: 'Names of the offending request fields or parameters; empty when none applies',
        }),
      },
      { additionalProperties: false, required: ['code', 'message', 'request_id', 'fields'] },
    ),
  },
  { $id: 'ErrorResponse', additionalProperties: false, description: 'The error object' },
);
export type ErrorResponse = Static<typeof ErrorResponse>;

/** Reference to the shared error schema, for the `response` part of a route schema. */
export function errorResponse(description: string) {
  return Type.Ref('ErrorResponse', { description });
}

export const MESSAGES = {
  unauthorized: 'Missing or invalid API key',
  notFound: 'Not Found',
  methodNotAllowed: 'Method Not Allowed',
  internal: 'Internal server error',
  invalidRequest: 'The request is not valid',
} as const;

/**
 * An error that answers with the error object. Thrown (or passed to reply.send) by route handlers
 * and platform hooks; the platform's error handler turns it into the response.
 */
export class ApiError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: string,
    message: string,
    readonly fields: readonly string[] = [],
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export function errorBody(code: string, message: string, requestId: string, fields: readonly string[] = []): ErrorResponse {
  return { error: { code, message, request_id: requestId, fields: [...fields] } };
}

export const unauthorized = () => new ApiError(401, 'unauthorized', MESSAGES.unauthorized);
export const notFound = (message: string = MESSAGES.notFound) => new ApiError(404, 'not_found', message);
export const invalidRequest = (fields: readonly string[], message: string = MESSAGES.invalidRequest) =>
  new ApiError(422, 'invalid_request', message, fields);
export const unavailable = (code: string, message: string) => new ApiError(503, code, message);

/**
 * The code of an error status the platform has no more specific answer for (a 403 or 416 from the
 * docs' static files, a status set by a library): each status its own code (issue 11, item 6). The
 * contracts' codes where they name one; otherwise the status's reason phrase in snake case
 * (403 `forbidden`, 416 `range_not_satisfiable`, 417 `expectation_failed`, 415
 * `unsupported_media_type`, 408 `request_timeout`...).
 */
const CONTRACT_CODES: Readonly<Record<number, string>> = {
  413: 'body_too_large',
  422: 'invalid_request',
  431: 'request_header_too_large',
  500: 'internal_error',
};

export function errorCodeForStatus(status: number): string {
  const phrase = STATUS_CODES[status];
  return CONTRACT_CODES[status] ?? (phrase ? phrase.toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_|_$/g, '') : 'bad_request');
}

/** The message of such an error: the status's reason phrase (`Forbidden`, `Range Not Satisfiable`). */
export function errorMessageForStatus(status: number): string {
  return STATUS_CODES[status] ?? 'The request could not be understood';
}
