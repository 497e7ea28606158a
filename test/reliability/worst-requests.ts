/**
 * The most expensive requests a client can build within the limits (64 KiB of body, 16 KiB of request
 * line and headers), per class of hostile input (the hostile-input decisions), for each service. Shared by the
 * hostile-client tests (test/reliability/request-cost.machine.test.ts) and the benchmark
 * (bench/reliability/worst-body.ts). Every body is valid JSON: invalid JSON stops at the parser.
 */
import { HOUSE_FIELDS } from '../../src/services/houses/house.js';

export interface WorstRequest {
  /** The class of input, e.g. `empty objects in the batch`. */
  name: string;
  method: 'GET' | 'POST';
  url: string;
  /** The JSON text of the body (POST). */
  payload?: string;
  /** The status it must get: 422 unless said (ignored parameters are 200, a body to /health 405). */
  status?: number;
}

/** Just under the body limit (64 KiB), to leave room for a wrapper of a few bytes. */
const BODY_BUDGET = 64 * 1024 - 64;
/** What Node's 16 KiB header limit leaves for the query string. */
const QUERY_BUDGET = 15 * 1024;

/** `count` copies of `item` joined by `separator`, as many as fit in `budget` characters. */
function fill(item: string, budget: number, separator = ','): string {
  const count = Math.floor((budget + separator.length) / (item.length + separator.length));
  return Array.from({ length: count }, () => item).join(separator);
}

/** Distinct keys `k0`, `k1`, ... (written `prefix0`, ...) each with the value `value`, filling `budget` characters. */
function manyKeys(budget: number, value = '0', prefix = 'k'): string {
  const parts: string[] = [];
  let size = 0;
  for (let i = 0; ; i += 1) {
    const part = `"${prefix}${i}":${value}`;
    if (size + part.length + 1 > budget) break;
    parts.push(part);
    size += part.length + 1;
  }
  return parts.join(',');
}

/** Nested arrays `[[[...]]]` `depth` levels deep. */
function nestedArrays(depth: number): string {
  return '['.repeat(depth) + ']'.repeat(depth);
}

/** Nested objects `{"a":{"a":...}}` filling `budget` characters. */
function nestedObjects(budget: number): string {
  const depth = Math.floor(budget / 6);
  return '{"a":'.repeat(depth) + '{}' + '}'.repeat(depth);
}

/** The classes that apply to any JSON body, wrapped as `wrap(inner)` for the body's shape. */
function genericBodies(wrap: (inner: string, budget: number) => string): { name: string; payload: string }[] {
  const budget = BODY_BUDGET - 32;
  return [
    { name: 'thousands of unknown fields', payload: wrap(`{${manyKeys(budget)}}`, budget) },
    { name: 'thousands of unknown fields written with escapes', payload: wrap(`{${manyKeys(budget, '0', '\\u006b')}}`, budget) },
    { name: 'a number of 60,000 digits', payload: wrap('1'.repeat(budget - 8), budget) },
    { name: 'deeply nested arrays', payload: wrap(nestedArrays(Math.floor(budget / 2)), budget) },
    { name: 'deeply nested objects', payload: wrap(nestedObjects(budget), budget) },
    { name: 'huge array of numbers', payload: wrap(`[${fill('0', budget - 2)}]`, budget) },
    { name: 'huge array of strings', payload: wrap(`[${fill('""', budget - 2)}]`, budget) },
    { name: 'huge array of objects', payload: wrap(`[${fill('{}', budget - 2)}]`, budget) },
    { name: 'long string of 4-byte characters', payload: wrap(`"${'😀'.repeat(Math.floor((budget - 2) / 4))}"`, budget) },
    { name: 'long string of escapes', payload: wrap(`"${'\\u00e9'.repeat(Math.floor((budget - 2) / 6))}"`, budget) },
  ];
}

/** An object of every field of a house (house.ts), each of the wrong type. */
const HOUSE_OF_WRONG_TYPES = `{${HOUSE_FIELDS.map((field) => `"${field}":"x"`).join(',')}}`;

function batch(items: string): string {
  return `{"houses":[${items}]}`;
}

/** The worst bodies of one house (`single`) and of a batch (`many`), named after `label`. */
function estimateBodies(label: string, single: string, many: string): WorstRequest[] {
  const one = genericBodies((inner) => inner).map((body) => ({ ...body, name: `${label}estimate: ${body.name}`, url: single }));
  const houses = genericBodies((inner) => `{"houses":${inner}}`).map((body) => ({ ...body, name: `${label}batch houses: ${body.name}`, url: many }));
  const items = genericBodies((inner) => batch(inner)).map((body) => ({ ...body, name: `${label}batch item: ${body.name}`, url: many }));
  const batches = [
    { name: 'batch of empty objects', payload: batch(fill('{}', BODY_BUDGET - 14)) },
    { name: 'batch of 100 houses of wrong types', payload: batch(fill(HOUSE_OF_WRONG_TYPES, 100 * (HOUSE_OF_WRONG_TYPES.length + 1))) },
    {
      name: 'batch of 100 houses of unknown fields',
      payload: batch(Array.from({ length: 100 }, () => `{${manyKeys(Math.floor(BODY_BUDGET / 100) - 3)}}`).join(',')),
    },
    { name: 'batch of nested empty batches', payload: batch(fill('{"houses":[]}', BODY_BUDGET - 14)) },
  ].map((body) => ({ ...body, name: `${label}${body.name}`, url: many }));
  return [...one, ...houses, ...items, ...batches].map((body) => ({ method: 'POST' as const, ...body }));
}

/** Paths whose query parameters are ignored (200), and a JSON body sent where none is read (405). */
function otherPaths(paths: readonly string[], body: string): WorstRequest[] {
  const unknown = fill('p=1', QUERY_BUDGET, '&');
  return [
    ...paths.map((path) => ({ method: 'GET' as const, name: `${path}: thousands of ignored parameters`, url: `${path}?${unknown}`, status: 200 })),
    { method: 'POST', name: '/health: a body of 64 KiB', url: '/health', payload: body, status: 405 },
  ];
}

/** Every worst request of a service (the request's own size is always within the limits). */
export function worstRequests(service: 'tickets' | 'houses' | 'requests'): WorstRequest[] {
  const anyBody = `{${manyKeys(BODY_BUDGET)}}`;
  if (service === 'tickets') {
    const bodies = [
      ...genericBodies((inner) => inner).map((body) => ({ ...body, name: `body: ${body.name}` })),
      ...genericBodies((inner) => `{"subject":${inner}}`).map((body) => ({ ...body, name: `subject: ${body.name}` })),
      { name: 'subject and body of 64 KiB of text', payload: `{"subject":"${'a'.repeat(30_000)}","body":"${'é'.repeat(15_000)}"}` },
    ];
    return [
      ...otherPaths(['/health', '/ready', '/v1/categories'], anyBody),
      ...bodies.map((body) => ({ method: 'POST' as const, url: '/v1/classify', ...body })),
    ];
  }
  if (service === 'houses') {
    return [
      ...otherPaths(['/health', '/ready', '/v1/model'], anyBody),
      ...estimateBodies('', '/v1/estimates', '/v1/estimates/batch'),
      ...estimateBodies('explain ', '/v1/estimates/explain', '/v1/estimates/explain/batch'),
    ];
  }
  const unknown = Array.from({ length: 2000 }, (_, i) => `p${i}=1`).join('&').slice(0, QUERY_BUDGET);
  const queries = [
    { name: 'thousands of unknown parameters', query: unknown.slice(0, unknown.lastIndexOf('&')) },
    { name: 'one parameter repeated thousands of times', query: fill('borough=queens', QUERY_BUDGET, '&') },
    { name: 'a date repeated thousands of times', query: fill('created_from=2025-01-01', QUERY_BUDGET, '&') },
    { name: 'a long parameter of 4-byte characters', query: `complaint_type=${'%F0%9F%98%80'.repeat(Math.floor(QUERY_BUDGET / 12) - 2)}` },
    { name: 'a long date', query: `created_to=${'2'.repeat(QUERY_BUDGET - 11)}` },
    { name: 'a long limit', query: `limit=${'9'.repeat(QUERY_BUDGET - 6)}` },
  ];
  return [
    ...otherPaths(['/health', '/ready'], anyBody),
    ...['/v1/service-requests', '/v1/service-requests/1', '/v1/stats/daily', '/v1/complaint-types', '/v1/dataset'].flatMap((path) =>
      queries.map(({ name, query }) => ({ method: 'GET' as const, name: `${path}: ${name}`, url: `${path}?${query}` })),
    ),
  ];
}
