import { Type, type Static, type TSchema, type TUnsafe } from 'typebox';
import type { RouteOptions } from 'fastify';
import { codeOfErrorExample, errorDefinition, errorExample, errorResponses, withErrorCode } from './error-registry.js';
import { platformPlugin } from './platform-app.js';
import { isRateLimitedPath } from './rate-limit.js';

/**
 * What makes the OpenAPI descriptions good input for client generators (docs/decisions.md,
 * "OpenAPI for client generators"):
 * - named component schemas: a schema with a `$id` listed in a service's `components` is added
 *   with addSchema, so it appears once under components.schemas, and routes and other components
 *   point at it with `componentRef` (`$ref`); validation and serialization resolve the same names;
 * - every documented operation has an operationId and a description of each response, checked when
 *   the route is registered, so that a route without them stops the start (and every test);
 * - the security requirement of an operation follows its `requiresApiKey` configuration;
 * - the routes a rate limit counts (/v1/) always describe its 429 `rate_limited` answer and the
 *   `RateLimit-*` headers, each saying it applies only when a rate limit does (RATE_LIMIT, or a key's own);
 * - the routes with a work budget (work-budget.ts) describe its 503 `overloaded` answer (with the
 *   route's other 503 codes) and its `Retry-After` header;
 * - every media type of every answer has its example: an error answer one of each code it lists
 *   (errorResponses), an `invalid_request` naming the route's own first field.
 */

/** A schema that is an OpenAPI component: it has the name it is listed under. */
export type ComponentSchema = TSchema & { $id: string };

/** The schema as the component `name` (its `$id`): list it in the service's `components`. */
export function namedComponent<T extends TSchema>(name: string, schema: T): T & { $id: string } {
  return Object.assign(schema, { $id: name });
}

export interface ReferenceOptions {
  /** The description of the response or field that uses the component (a response needs one). */
  description?: string;
  /** Examples of a request body or answer; the OpenAPI description shows the first one. */
  examples?: unknown[];
}

/** `{ $ref: name }` to a component schema, typed as the component (request bodies stay typed). */
export function componentRef<T extends ComponentSchema>(schema: T, options: ReferenceOptions = {}): TUnsafe<Static<T>> {
  return Type.Unsafe<Static<T>>({ $ref: schema.$id, ...options });
}

/**
 * A component or null: `oneOf` the `$ref` and `{ type: 'null' }`, so that a nullable enum is one
 * named type in generated clients (`Borough | null`) instead of one inline type per field.
 */
export function nullableComponentRef<T extends ComponentSchema>(schema: T, description: string): TUnsafe<Static<T> | null> {
  return Type.Unsafe<Static<T> | null>({ oneOf: [{ $ref: schema.$id }, { type: 'null' }], description });
}

interface DocumentedSchema {
  hide?: boolean;
  operationId?: unknown;
  security?: unknown;
  body?: { examples?: unknown[] };
  querystring?: { properties?: Record<string, ParameterSchema> };
  params?: { properties?: Record<string, ParameterSchema> };
  response?: Record<string, DocumentedResponse | undefined>;
}

/** A response schema, or (several media types) `{ description, content: { [type]: { schema } } }`. */
interface DocumentedResponse {
  description?: unknown;
  examples?: unknown[];
  content?: Record<string, { schema?: { examples?: unknown[] }; example?: unknown }>;
}

/**
 * The examples of each media type of a response: its first example as `example`, or, for an error
 * answer whose status several codes share, one example of each code as `examples` named by the code
 * (Swagger UI and ReDoc offer them in a list). `field` is the route's first field: the one an
 * `invalid_request` example names.
 */
function responseExamples(response: DocumentedResponse, field: string | undefined): Record<string, OpenApiMedia> {
  if (response.content === undefined) {
    const examples = (response.examples ?? []).map((example) => namingRouteField(example, field));
    return examples.length === 0 ? {} : { 'application/json': mediaExamples(examples) };
  }
  const examples: Record<string, OpenApiMedia> = {};
  for (const [mediaType, media] of Object.entries(response.content)) {
    const example = media.example ?? media.schema?.examples?.[0];
    if (example !== undefined) examples[mediaType] = { example };
  }
  return examples;
}

/** One `example` (the first); the examples of several error codes as named `examples`, one per code. */
function mediaExamples(examples: readonly unknown[]): OpenApiMedia {
  const coded = examples.flatMap((value) => {
    const code = codeOfErrorExample(value);
    return code === undefined ? [] : [[code, { summary: code, description: errorDefinition(code).when, value }] as const];
  });
  return coded.length > 1 && coded.length === examples.length ? { examples: Object.fromEntries(coded) } : { example: examples[0] };
}

/** An `invalid_request` example names a field of the route (its fields are whatever is wrong); others are kept. */
function namingRouteField(example: unknown, field: string | undefined): unknown {
  return field !== undefined && codeOfErrorExample(example) === 'invalid_request' ? errorExample('invalid_request', [field]) : example;
}

/** The first field a client gives the route: its first path parameter, else the first field of its body example, else its first query parameter. */
function firstField(schema: DocumentedSchema): string | undefined {
  const body = schema.body?.examples?.[0];
  const bodyFields = typeof body === 'object' && body !== null ? Object.keys(body) : [];
  return [...Object.keys(schema.params?.properties ?? {}), ...bodyFields, ...Object.keys(schema.querystring?.properties ?? {})][0];
}

interface ParameterSchema {
  $ref?: string;
  description?: string;
}

/** What the generator drops next to a `$ref`, put back by `complete`. */
interface OperationAdditions {
  body?: unknown;
  /** By status, then by media type: its `example` or its named `examples`. */
  responses: Record<string, Record<string, OpenApiMedia>>;
  /** Descriptions of the parameters whose schema is a `$ref`, by parameter name. */
  parameters: Record<string, string>;
}

type OpenApiDocument = { paths?: Record<string, Record<string, OpenApiOperation>> };
type OpenApiMedia = { example?: unknown; examples?: Record<string, { summary: string; description: string; value: unknown }> };
type OpenApiHeader = { description: string; schema: { type: 'integer'; minimum: number } };
type OpenApiOperation = {
  operationId?: string;
  parameters?: { name: string; description?: string }[];
  requestBody?: { content?: Record<string, OpenApiMedia> };
  responses?: Record<string, { content?: Record<string, OpenApiMedia>; headers?: Record<string, OpenApiHeader> }>;
};

const WHEN_LIMITED = "Only when a rate limit applies (RATE_LIMIT, or the key's own limit in API_KEYS_FILE)";

/** The 429 answer of a route a rate limit counts (rate-limit.ts): the registry's, said to need a limit. */
const rateLimited = errorResponses('rate_limited')[429];
const RATE_LIMITED_RESPONSE = { ...rateLimited, description: `${WHEN_LIMITED}. ${String((rateLimited as { description?: string }).description)}` };

function integerHeader(description: string): OpenApiHeader {
  return { description: `${WHEN_LIMITED}: ${description}`, schema: { type: 'integer', minimum: 0 } };
}

/** The headers of every answer of a rate-limited route (IETF draft names, `enableDraftSpec`). */
const RATE_LIMIT_HEADERS = {
  'RateLimit-Limit': integerHeader('requests allowed in each window'),
  'RateLimit-Remaining': integerHeader('requests left in the current window'),
  'RateLimit-Reset': integerHeader('seconds until the current window ends'),
};

const RETRY_AFTER_HEADER = { 'Retry-After': integerHeader('seconds to wait before the next request counts') };

/** Retry-After on the 503 of a route with a work budget. */
const OVERLOADED_RETRY_AFTER = {
  'Retry-After': { description: 'With code overloaded: seconds to wait before trying again', schema: { type: 'integer', minimum: 0 } } satisfies OpenApiHeader,
};

function isHeadOnly(method: RouteOptions['method']): boolean {
  return Array.isArray(method) ? method.every((one) => one === 'HEAD') : method === 'HEAD';
}

/** The RateLimit-* headers on every answer of the operation, and Retry-After on its 429. */
function addRateLimitHeaders(operation: OpenApiOperation): void {
  for (const [status, response] of Object.entries(operation.responses ?? {})) {
    response.headers = { ...response.headers, ...RATE_LIMIT_HEADERS, ...(status === '429' ? RETRY_AFTER_HEADER : {}) };
  }
}

/**
 * The documented operations of one service. `check` runs on every route as it is registered (an
 * onRoute hook): a route that appears in the OpenAPI description must have an operationId and a
 * description of every response, or the start fails; its security requirement is set from
 * `config.requiresApiKey` (the key scheme, or explicitly none). `complete` puts back in the generated
 * description what the generator drops next to a `$ref`: each operation's first request example
 * (on its JSON media type), its answer examples (on each media type) and the descriptions of
 * parameters of a named type.
 */
export class DocumentedOperations {
  private readonly additions = new Map<string, OperationAdditions>();
  private readonly rateLimited = new Set<string>();
  private readonly budgeted = new Set<string>();

  constructor(private readonly usesApiKey: boolean) {}

  check(route: RouteOptions): void {
    if (isHeadOnly(route.method)) return;
    const schema = route.schema as DocumentedSchema | undefined;
    if (schema?.hide === true) return;
    const name = `${String(route.method)} ${route.url}`;
    if (schema === undefined) throw new Error(`${name}: a documented route needs a schema (or schema.hide)`);
    const operationId = schema.operationId;
    if (typeof operationId !== 'string' || !/^[a-z][A-Za-z0-9]*$/.test(operationId)) {
      throw new Error(`${name}: schema.operationId must be a lowerCamelCase name such as listServiceRequests`);
    }
    if (this.additions.has(operationId)) throw new Error(`${name}: operationId ${operationId} is used twice`);
    if (schema.response === undefined || Object.keys(schema.response).length === 0) {
      throw new Error(`${name}: schema.response must describe the answers`);
    }
    if (isRateLimitedPath(route.url)) {
      this.rateLimited.add(operationId);
      schema.response[429] ??= RATE_LIMITED_RESPONSE as DocumentedResponse;
    }
    if (route.config?.workBudget !== undefined) {
      this.budgeted.add(operationId);
      schema.response[503] = withErrorCode(schema.response[503], 'overloaded') as DocumentedResponse;
    }
    const responses = Object.entries(schema.response);
    const field = firstField(schema);
    const additions: OperationAdditions = { body: schema.body?.examples?.[0], responses: {}, parameters: {} };
    for (const part of [schema.querystring, schema.params]) {
      for (const [parameter, property] of Object.entries(part?.properties ?? {})) {
        if (property.$ref !== undefined && property.description !== undefined) additions.parameters[parameter] = property.description;
      }
    }
    for (const [status, response] of responses) {
      if (typeof response?.description !== 'string' || response.description.length === 0) {
        throw new Error(`${name}: the ${status} response needs a description`);
      }
      additions.responses[status] = responseExamples(response, field);
    }
    this.additions.set(operationId, additions);
    if (this.usesApiKey && schema.security === undefined) {
      schema.security = route.config?.requiresApiKey ? [{ apiKey: [] }] : [];
    }
  }

  /** The generated description, completed (@fastify/swagger's transformObject). */
  complete<T>(document: T): T {
    for (const methods of Object.values((document as OpenApiDocument).paths ?? {})) {
      for (const operation of Object.values(methods)) {
        const additions = operation.operationId === undefined ? undefined : this.additions.get(operation.operationId);
        if (additions === undefined) continue;
        const body = operation.requestBody?.content?.['application/json'];
        if (body && additions.body !== undefined) body.example = additions.body;
        for (const [status, examples] of Object.entries(additions.responses)) {
          for (const [mediaType, example] of Object.entries(examples)) {
            const media = operation.responses?.[status]?.content?.[mediaType];
            if (media) Object.assign(media, example);
          }
        }
        for (const parameter of operation.parameters ?? []) {
          parameter.description ??= additions.parameters[parameter.name];
        }
        if (operation.operationId !== undefined && this.rateLimited.has(operation.operationId)) addRateLimitHeaders(operation);
        const overloaded = operation.operationId !== undefined && this.budgeted.has(operation.operationId) ? operation.responses?.['503'] : undefined;
        if (overloaded) overloaded.headers = { ...overloaded.headers, ...OVERLOADED_RETRY_AFTER };
      }
    }
    return document;
  }
}

/** onRoute: every documented route is checked as it is added (operationId, answers, key scheme). */
export const documentedOperationsPlugin = platformPlugin<{ operations: DocumentedOperations }>('documented-operations', (app, { operations }) => {
  app.addHook('onRoute', (route) => operations.check(route));
});
