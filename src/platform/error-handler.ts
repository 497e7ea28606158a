import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, type ErrorCode, errorCodeForStatus, errorDefinition } from './error-registry.js';
import { errorBody, invalidRequestMessage } from './errors.js';
import { addValidationProblems } from './validation.js';

/** The answer an error gets: status, code, message, fields, extra headers. */
export interface ErrorAnswer {
  statusCode: number;
  code: ErrorCode;
  message: string;
  fields: readonly string[];
  headers?: Readonly<Record<string, string>>;
}

/**
 * An error that stands for another one the platform answers: a store's failure to read its database
 * is 503 `database_unavailable` wherever it is thrown (the error is logged as a warning, never as a
 * 500). A service's own error class extends this one instead of each route wrapping its reads.
 */
export class UnavailableDependencyError extends Error {
  constructor(
    readonly answer: ApiError,
    cause: unknown,
  ) {
    super(`${answer.code}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = 'UnavailableDependencyError';
  }
}

/** Fastify's errors carry `code` and `statusCode`, but any Error may arrive here: both are optional. */
function isFastifyError(error: unknown): error is Error & Partial<FastifyError> {
  return error instanceof Error;
}

function answerOf(code: ErrorCode, options: { message?: string; fields?: readonly string[] } = {}): ErrorAnswer {
  const { status, message } = errorDefinition(code);
  return { statusCode: status, code, message: options.message ?? message, fields: options.fields ?? [] };
}

/** Fastify's errors by their code (never by their message text). */
function answerForFastifyCode(fastifyCode: string, bodyLimit: number): ErrorAnswer | undefined {
  switch (fastifyCode) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return answerOf('body_too_large', { message: `Request body is larger than ${bodyLimit} bytes` });
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return answerOf('unsupported_media_type', { fields: ['Content-Type'] });
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return answerOf('invalid_request', { message: invalidRequestMessage('body is empty'), fields: ['body'] });
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return answerOf('bad_request', { message: 'Content-Length does not match the body' });
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return invalidJson();
    default:
      return undefined;
  }
}

/**
 * Maps anything thrown while answering a request to the error object, by class or by code. Only
 * errors the platform knows keep their text; anything unexpected becomes 500 `internal_error` with
 * no details.
 */
export function answerFor(error: unknown, bodyLimit: number): ErrorAnswer {
  if (error instanceof UnavailableDependencyError) return answerFor(error.answer, bodyLimit);
  if (error instanceof ApiError) {
    return { statusCode: error.statusCode, code: error.code, message: error.message, fields: error.fields, headers: error.headers };
  }
  if (!isFastifyError(error)) return answerOf('internal_error');
  if (error.validation) {
    const problems = addValidationProblems(error.validation as never, error.validationContext ?? 'request');
    return answerOf('invalid_request', { message: problems.message(), fields: problems.fields });
  }
  const known = answerForFastifyCode(error.code ?? '', bodyLimit);
  if (known) return known;
  const status = error.statusCode ?? 500;
  // A body parser's other failures (a SyntaxError, another FST_ERR_CTP_ code with status 400).
  if (status === 400 && (error instanceof SyntaxError || (error.code ?? '').startsWith('FST_ERR_CTP'))) {
    return invalidJson();
  }
  if (status >= 400 && status < 500) return { ...answerOf(errorCodeForStatus(status)), statusCode: status };
  return answerOf('internal_error');
}

function invalidJson(): ErrorAnswer {
  return answerOf('invalid_request', { message: invalidRequestMessage('body is not valid JSON'), fields: ['body'] });
}

export function makeErrorHandler(bodyLimit: number) {
  return function handleError(error: unknown, request: FastifyRequest, reply: FastifyReply) {
    const answer = answerFor(error, bodyLimit);
    if (error instanceof UnavailableDependencyError) {
      request.log.warn({ reason: error.message }, 'dependency unavailable');
    } else if (answer.code === 'internal_error') {
      request.log.error({ err: error }, 'unexpected failure');
    }
    for (const [name, value] of Object.entries(answer.headers ?? {})) reply.header(name, value);
    reply.header('X-Request-ID', request.id);
    return reply.code(answer.statusCode).type('application/json; charset=utf-8').send(errorBody(answer.code, answer.message, request.id, answer.fields));
  };
}
