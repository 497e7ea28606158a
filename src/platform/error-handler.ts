import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, MESSAGES, errorBody, errorCodeForStatus, errorMessageForStatus } from './errors.js';
import { addValidationProblems } from './validation.js';

/** The answer an error gets: status, code, message, fields, extra headers. */
export interface ErrorAnswer {
  statusCode: number;
  code: string;
  message: string;
  fields: readonly string[];
  headers?: Readonly<Record<string, string>>;
}

function isFastifyError(error: unknown): error is FastifyError {
  return error instanceof Error;
}

/**
 * Maps anything thrown while answering a request to the error object. Only errors the platform
 * knows keep their text; anything unexpected becomes 500 `internal_error` with no details.
 */
export function answerFor(error: unknown, bodyLimit: number): ErrorAnswer {
  if (error instanceof ApiError) {
    return { statusCode: error.statusCode, code: error.code, message: error.message, fields: error.fields, headers: error.headers };
  }
  if (!isFastifyError(error)) return internalError();
  if (error.validation) {
    const problems = addValidationProblems(error.validation as never, error.validationContext ?? 'request');
    return { statusCode: 422, code: 'invalid_request', message: problems.message(), fields: problems.fields };
  }
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { statusCode: 413, code: 'body_too_large', message: `Request body is larger than ${bodyLimit} bytes`, fields: [] };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return {
        statusCode: 415,
        code: 'unsupported_media_type',
        message: 'Content-Type must be application/json',
        fields: ['Content-Type'],
      };
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { statusCode: 422, code: 'invalid_request', message: 'The request is not valid: body is empty', fields: ['body'] };
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return { statusCode: 400, code: 'bad_request', message: 'Content-Length does not match the body', fields: [] };
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return invalidJson();
    default:
      break;
  }
  const status = error.statusCode ?? 500;
  // Fastify's JSON parser throws SyntaxError (and prototype-poisoning errors) with status 400.
  if (status === 400 && (error instanceof SyntaxError || String(error.code ?? '').startsWith('FST_ERR_CTP') || /JSON|__proto__|constructor/.test(error.message))) {
    return invalidJson();
  }
  if (status >= 400 && status < 500) {
    return { statusCode: status, code: errorCodeForStatus(status), message: errorMessageForStatus(status), fields: [] };
  }
  return internalError();
}

function invalidJson(): ErrorAnswer {
  return { statusCode: 422, code: 'invalid_request', message: 'The request is not valid: body is not valid JSON', fields: ['body'] };
}

function internalError(): ErrorAnswer {
  return { statusCode: 500, code: 'internal_error', message: MESSAGES.internal, fields: [] };
}

export function makeErrorHandler(bodyLimit: number) {
  return function handleError(error: unknown, request: FastifyRequest, reply: FastifyReply) {
    const answer = answerFor(error, bodyLimit);
    if (answer.statusCode >= 500 && answer.code === 'internal_error') {
      request.log.error({ err: error }, 'unexpected failure');
    }
    for (const [name, value] of Object.entries(answer.headers ?? {})) reply.header(name, value);
    reply.header('X-Request-ID', request.id);
    return reply.code(answer.statusCode).type('application/json; charset=utf-8').send(errorBody(answer.code, answer.message, request.id, answer.fields));
  };
}
