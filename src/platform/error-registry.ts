import { Type, type TRef } from 'typebox';

/** Where a code is defined: the shared conventions, a service's contract, or this project's decisions. */
export type ErrorCodeSource =
  | 'conventions.md'
  | 'specs/ticket-classifier.md'
  | 'specs/house-prices.md'
  | 'specs/service-requests.md'
  | 'docs/decisions.md';

export interface ErrorDefinition {
  /** The HTTP status the code always answers with. */
  status: number;
  /** The message when the thrower gives none (some throwers word a more precise one). */
  message: string;
  /** When the code is answered, for the OpenAPI description of the routes that list it. */
  when: string;
  /** The document whose table or rules define the code (conventions.md and specs/ are in ../shared). */
  definedIn: ErrorCodeSource;
  /** The `fields` of the code's OpenAPI example (errorExample); none when not given. */
  exampleFields?: readonly string[];
}

/**
 * Every error code the services answer, in one place (docs/decisions.md, "One error registry"): its
 * status, its default message, when it is answered, and where it is defined. No other file of `src/`
 * writes an error code: throwers name a key of this registry (`new ApiError('not_found')`), route
 * schemas list theirs with `errorResponses(...)`.
 */
export const ERROR_REGISTRY = {
  bad_request: {
    status: 400,
    message: 'The request could not be understood',
    when: 'The HTTP request is malformed (request line, header, URL encoding, Content-Length)',
    definedIn: 'docs/decisions.md',
  },
  unauthorized: {
    status: 401,
    message: 'Missing or invalid API key',
    when: 'Missing or invalid API key',
    definedIn: 'conventions.md',
  },
  forbidden: {
    status: 403,
    message: 'Forbidden',
    when: 'A file of the docs pages that may not be read',
    definedIn: 'docs/decisions.md',
  },
  not_found: {
    status: 404,
    message: 'Not Found',
    when: 'Unknown path, or no resource with this id',
    definedIn: 'conventions.md',
  },
  method_not_allowed: {
    status: 405,
    message: 'Method Not Allowed',
    when: 'Known path, other method (the Allow header lists the methods it has)',
    definedIn: 'conventions.md',
  },
  request_timeout: {
    status: 408,
    message: 'The request did not arrive within the time limit',
    when: 'The request (headers and body) did not arrive within 10 s',
    definedIn: 'docs/decisions.md',
  },
  body_too_large: {
    status: 413,
    message: 'Request body is too large',
    when: 'Request body larger than 64 KiB, checked before validation',
    definedIn: 'conventions.md',
  },
  uri_too_long: {
    status: 414,
    message: 'A segment of the path is longer than 200 characters',
    when: 'A segment of the path is longer than 200 characters',
    definedIn: 'docs/decisions.md',
  },
  unsupported_media_type: {
    status: 415,
    message: 'Content-Type must be application/json',
    when: 'Content-Type is not application/json',
    definedIn: 'docs/decisions.md',
  },
  precondition_failed: {
    status: 412,
    message: 'Precondition Failed',
    when: 'An If-Match or If-Unmodified-Since header a docs file does not meet',
    definedIn: 'docs/decisions.md',
  },
  range_not_satisfiable: {
    status: 416,
    message: 'Range Not Satisfiable',
    when: 'A Range header outside a docs file',
    definedIn: 'docs/decisions.md',
  },
  expectation_failed: {
    status: 417,
    message: 'Expectation Failed',
    when: 'An Expect header other than 100-continue',
    definedIn: 'docs/decisions.md',
  },
  invalid_request: {
    status: 422,
    message: 'The request is not valid',
    when: 'A field or parameter is missing, unknown or not valid (fields names every one, or body for a body that is not JSON)',
    definedIn: 'conventions.md',
    // A route's example names the route's first field instead (openapi-components.ts); `page`, a
    // parameter no route has, is the unknown parameter of a route that takes none.
    exampleFields: ['page'],
  },
  outside_model_area: {
    status: 422,
    message: 'The house lies outside the model area',
    when: 'The house is otherwise valid but lat, long or both lie outside the model area (fields names them)',
    definedIn: 'specs/house-prices.md',
    exampleFields: ['lat', 'long'],
  },
  invalid_cursor: {
    status: 422,
    message: 'The cursor is not valid',
    when: 'The cursor is not valid, belongs to other filter values or is no longer accepted (fields: cursor)',
    definedIn: 'specs/service-requests.md',
    exampleFields: ['cursor'],
  },
  invalid_range: {
    status: 422,
    message: 'created_from must be before created_to',
    when: 'created_from is not before created_to (fields: created_from, created_to)',
    definedIn: 'specs/service-requests.md',
    exampleFields: ['created_from', 'created_to'],
  },
  rate_limited: {
    status: 429,
    message: 'Too many requests; retry after the number of seconds in Retry-After',
    when: 'Over the rate limit (Retry-After says when to try again)',
    definedIn: 'docs/decisions.md',
  },
  request_header_too_large: {
    status: 431,
    message: 'The request line and headers are larger than 16 KiB',
    when: 'The request line and headers are larger than 16 KiB',
    definedIn: 'docs/decisions.md',
  },
  internal_error: {
    status: 500,
    message: 'Internal server error',
    when: 'Anything unexpected (no details)',
    definedIn: 'conventions.md',
  },
  classifier_unavailable: {
    status: 503,
    message: 'The classifier is unavailable',
    when: 'The classifier is unavailable',
    definedIn: 'specs/ticket-classifier.md',
  },
  model_unavailable: {
    status: 503,
    message: 'The price model is unavailable',
    when: 'No usable model is loaded',
    definedIn: 'specs/house-prices.md',
  },
  database_unavailable: {
    status: 503,
    message: 'The database cannot be read',
    when: 'The database cannot be read',
    definedIn: 'conventions.md',
  },
  overloaded: {
    status: 503,
    message: 'The service is busy with work of this kind; retry after the number of seconds in Retry-After',
    when: 'Too many requests of this kind are running or waiting (Retry-After says when to try again)',
    definedIn: 'docs/decisions.md',
  },
} as const satisfies Record<string, ErrorDefinition>;

/** Every error code of the services: a key of the registry. */
export type ErrorCode = keyof typeof ERROR_REGISTRY;

/** The status of a code, as a literal type (the keys of errorResponses' answer). */
type StatusOf<C extends ErrorCode> = (typeof ERROR_REGISTRY)[C]['status'];

export const ERROR_CODES = Object.keys(ERROR_REGISTRY) as ErrorCode[];

export function errorDefinition(code: ErrorCode): ErrorDefinition {
  return ERROR_REGISTRY[code];
}

/** Each status's own code: the first code of the registry with that status (422 `invalid_request`). */
const CODE_OF_STATUS: ReadonlyMap<number, ErrorCode> = new Map(
  ERROR_CODES.slice()
    .reverse()
    .map((code) => [ERROR_REGISTRY[code].status, code]),
);

/**
 * The code of an error status the platform has no more specific answer for (a 403, 412 or 416 from
 * the docs' static files, a status set by a library): each status its own code, the registry's first
 * code of that status (docs/decisions.md, "Other 4xx from the HTTP layer"). A 4xx the registry does
 * not list is `bad_request`; every 5xx is `internal_error` (a dependency's 503 is thrown with its own code).
 */
export function errorCodeForStatus(status: number): ErrorCode {
  if (status >= 500) return 'internal_error';
  return CODE_OF_STATUS.get(status) ?? 'bad_request';
}

/** The $id of the shared error object schema (errors.ts), referenced by every error response. */
export const ERROR_RESPONSE_SCHEMA_ID = 'ErrorResponse';

/** The error object of an answer of `code`, as the OpenAPI examples show it (the shape of errors.ts' ErrorResponse). */
export interface ErrorExample {
  error: { code: ErrorCode; message: string; request_id: string; fields: readonly string[] };
}

/** The request id of the examples: a UUID v4, as a request without its own X-Request-ID gets. */
export const EXAMPLE_REQUEST_ID = '0b9a3c5e-8f1d-4e27-a6b4-2d7c91e5f038';

/**
 * An answer of `code` as the service gives it: the registry's message, a request id, and the fields
 * the code names (its `exampleFields` unless given).
 */
export function errorExample(code: ErrorCode, fields: readonly string[] = errorDefinition(code).exampleFields ?? []): ErrorExample {
  return { error: { code, message: errorDefinition(code).message, request_id: EXAMPLE_REQUEST_ID, fields } };
}

/** The code of an example made by errorExample; undefined for any other value. */
export function codeOfErrorExample(example: unknown): ErrorCode | undefined {
  const code = (example as Partial<ErrorExample> | null | undefined)?.error?.code;
  return typeof code === 'string' && Object.hasOwn(ERROR_REGISTRY, code) ? code : undefined;
}

export interface ApiErrorOptions {
  /** The offending fields or parameters (error.fields); none by default. */
  fields?: readonly string[];
  /** The message; the registry's default message when not given. */
  message?: string;
  /** Extra response headers (Allow, WWW-Authenticate...). */
  headers?: Readonly<Record<string, string>>;
}

/**
 * An error that answers with the error object: its status and default message come from the
 * registry. Thrown (or passed to reply.send, or to a hook's done) by route handlers and platform
 * hooks; the platform's error handler turns it into the response.
 */
export class ApiError extends Error {
  readonly statusCode: number;
  readonly fields: readonly string[];
  readonly headers: Readonly<Record<string, string>>;

  constructor(
    readonly code: ErrorCode,
    { fields = [], message, headers = {} }: ApiErrorOptions = {},
  ) {
    const definition = errorDefinition(code);
    super(message ?? definition.message);
    this.name = 'ApiError';
    this.statusCode = definition.status;
    this.fields = fields;
    this.headers = headers;
  }
}

/**
 * The error entries of a route schema's `response`, from the codes the route can answer:
 * `errorResponses('unauthorized', 'invalid_request', 'outside_model_area')` gives 401 and 422, each a
 * reference to the error object with a description made from the registry and an example of each
 * code it lists (errorExample). A status shared by several codes gets one entry whose description
 * names each code.
 */
export function errorResponses<C extends ErrorCode>(...codes: C[]): { [S in StatusOf<C>]: TRef } {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) {
    const status = errorDefinition(code).status;
    const listed = byStatus.get(status) ?? [];
    if (!listed.includes(code)) listed.push(code);
    byStatus.set(status, listed);
  }
  const responses: Record<number, TRef> = {};
  for (const [status, listed] of [...byStatus].sort(([a], [b]) => a - b)) {
    const response = Type.Ref(ERROR_RESPONSE_SCHEMA_ID, { description: responseDescription(listed), examples: listed.map((code) => errorExample(code)) });
    CODES_OF_RESPONSE.set(response, listed);
    responses[status] = response;
  }
  return responses;
}

/** The codes each response made by errorResponses lists (to add one: withErrorCode). */
const CODES_OF_RESPONSE = new WeakMap<object, readonly ErrorCode[]>();

/**
 * The entry of `code`'s status, with `code` added to the codes `response` (an entry made by
 * errorResponses, or none) lists: how the platform adds an answer of its own to a route's schema.
 */
export function withErrorCode(response: unknown, code: ErrorCode): TRef {
  const listed = typeof response === 'object' && response !== null ? CODES_OF_RESPONSE.get(response) : [];
  if (listed === undefined) throw new Error(`the ${errorDefinition(code).status} answer must be made by errorResponses to add ${code} to it`);
  return errorResponses(...listed, code)[errorDefinition(code).status as StatusOf<ErrorCode>];
}

function responseDescription(codes: readonly ErrorCode[]): string {
  const [only] = codes;
  if (codes.length === 1 && only !== undefined) return `${errorDefinition(only).when} (code ${only})`;
  return codes.map((code) => `code ${code}: ${errorDefinition(code).when}`).join('; ');
}
