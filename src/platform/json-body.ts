import { isUtf8 } from 'node:buffer';
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import type { ApiError } from './error-registry.js';
import { FieldProblems } from './errors.js';
import { platformPlugin } from './platform-app.js';

/**
 * Request bodies (docs/decisions.md, "Content type"; docs/reliability.md, "Hostile input"). On top of
 * Fastify's JSON parser (size limit), a JSON body is refused with 422
 * `invalid_request` when:
 * - its bytes are not valid UTF-8 (JSON text must be UTF-8; decoding would silently turn them into
 *   U+FFFD), fields `body`;
 * - an object has the same key twice (parsers disagree on which one wins, so a proxy, a log or a
 *   client library could see another value than the service), fields: the path of the key;
 * - an object has a `__proto__` or `constructor` key, fields: the path of the key;
 * - a string holds U+0000 or a lone surrogate (`"\ud800"`): neither is text, PostgreSQL cannot store
 *   U+0000 and a lone surrogate cannot be written as UTF-8, fields: the path of the string.
 * Query strings and path parameters get the same string rule (see `refuseUnusableParameters`).
 */
type Done = (error: Error | null, body?: unknown) => void;
type JsonParser = (request: FastifyRequest, body: string, done: Done) => void;

function invalidBody(field: string, problem: string): ApiError {
  return new FieldProblems().add(field, problem).toError();
}

function joinPath(parent: string, child: string | number): string {
  return parent === '' ? String(child) : `${parent}.${child}`;
}

/** U+0000, or a UTF-16 surrogate without its pair. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export function isUnusableText(value: string): boolean {
  return value.includes('\u0000') || LONE_SURROGATE.test(value);
}

/**
 * The path of the first string (or key) in `value` that holds U+0000 or a lone surrogate.
 * Iterative: a body may nest 30,000 levels deep within the size limit.
 */
export function findUnusableString(value: unknown): string | undefined {
  const pending: [unknown, string][] = [[value, '']];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [item, path] = next;
    if (typeof item === 'string') {
      if (isUnusableText(item)) return path || 'body';
    } else if (Array.isArray(item)) {
      for (let i = item.length - 1; i >= 0; i -= 1) pending.push([item[i], joinPath(path, i)]);
    } else if (item !== null && typeof item === 'object') {
      const entries: [string, unknown][] = Object.entries(item);
      for (const [key, child] of entries.reverse()) {
        if (isUnusableText(key)) return joinPath(path, key);
        pending.push([child, joinPath(path, key)]);
      }
    }
  }
  return undefined;
}

/**
 * Keys a body never has: the names JavaScript gives an object's prototype. An object with such a key
 * can change the prototype of whatever code copies it with assignment; none of the services' fields
 * has that name, so the key is refused as the offending field (422), like any unknown field.
 */
const RESERVED_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor']);

export interface KeyProblem {
  /** Path of the key, e.g. `houses.0.__proto__`. */
  field: string;
  problem: string;
}

/**
 * The first key of `text` (valid JSON) that an object holds twice or that is reserved, or undefined.
 * One pass over the text, with a stack of the open objects' keys and arrays' indexes; iterative, so
 * that 60,000 nested brackets cannot exhaust the call stack, and the path is built only for the key
 * found (building it at every level would cost the square of the depth).
 */
export function findKeyProblem(text: string): KeyProblem | undefined {
  interface Frame {
    keys?: Set<string>;
    index: number;
    /** key of the value being read (objects) */
    key?: string;
  }
  const stack: Frame[] = [];
  let expectingKey = false;
  const pathTo = (key: string): string => {
    const parts = stack.slice(0, -1).map((frame) => (frame.keys ? (frame.key ?? '') : String(frame.index)));
    parts.push(key);
    return parts.join('.');
  };
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      let j = i + 1;
      let escaped = false;
      while (j < text.length) {
        const d = text.charCodeAt(j);
        if (d === 0x5c /* \ */) {
          escaped = true;
          j += 2;
          continue;
        }
        if (d === 0x22) break;
        j += 1;
      }
      if (expectingKey) {
        const raw = text.slice(i, j + 1);
        const key = escaped ? (JSON.parse(raw) as string) : raw.slice(1, -1);
        // A key is expected only right inside an object (its frame has `keys`).
        const top = stack[stack.length - 1];
        if (top?.keys === undefined) return undefined;
        if (RESERVED_KEYS.has(key)) return { field: pathTo(key), problem: 'is not an allowed field' };
        if (top.keys.has(key)) return { field: pathTo(key), problem: 'is given twice' };
        top.keys.add(key);
        top.key = key;
        expectingKey = false;
      }
      i = j;
    } else if (c === 0x7b /* { */) {
      stack.push({ keys: new Set(), index: 0 });
      expectingKey = true;
    } else if (c === 0x5b /* [ */) {
      stack.push({ index: 0 });
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      stack.pop();
    } else if (c === 0x2c /* , */) {
      const top = stack[stack.length - 1];
      if (top?.keys) expectingKey = true;
      else if (top) top.index += 1;
    }
  }
  return undefined;
}

/** Replaces Fastify's application/json parser with one that adds the checks above. */
export function registerStrictJsonParser(app: FastifyInstance, bodyLimit: number): void {
  // `__proto__` and `constructor` keys are refused by findKeyProblem, naming the field (the default
  // parser would call the body invalid JSON); JSON.parse itself only makes them own properties.
  const parseJson = app.getDefaultJsonParser('ignore', 'ignore') as unknown as JsonParser;
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit }, (request, raw, done) => {
    const bytes = raw as Buffer;
    if (!isUtf8(bytes)) {
      done(invalidBody('body', 'is not valid UTF-8'));
      return;
    }
    const text = bytes.toString('utf8');
    parseJson(request, text, (error, body) => {
      if (error) {
        done(error);
        return;
      }
      const keyProblem = findKeyProblem(text);
      if (keyProblem !== undefined) {
        done(invalidBody(keyProblem.field, keyProblem.problem));
        return;
      }
      // In valid UTF-8 JSON text, U+0000 and lone surrogates can only be written as \u escapes.
      const unusable = text.includes('\\u') ? findUnusableString(body) : undefined;
      if (unusable !== undefined) {
        done(invalidBody(unusable, 'must not contain U+0000 or a lone surrogate'));
        return;
      }
      done(null, body);
    });
  });
}

/**
 * preValidation: query and path parameters holding U+0000 or a lone surrogate answer 422. Such a
 * value can only come from a percent-escape, so a URL without `%` is not inspected further.
 */
export function refuseUnusableParameters(request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void {
  if (!request.url.includes('%')) {
    done();
    return;
  }
  try {
    throwOnUnusableParameters(request);
    done();
  } catch (error) {
    done(error as Error);
  }
}

function throwOnUnusableParameters(request: FastifyRequest): void {
  for (const part of [request.query, request.params]) {
    if (part === null || typeof part !== 'object') continue;
    for (const [name, value] of Object.entries(part as Record<string, unknown>)) {
      const values = Array.isArray(value) ? value : [value];
      if (isUnusableText(name) || values.some((item) => typeof item === 'string' && isUnusableText(item))) {
        throw invalidBody(name, 'must not contain U+0000 or a lone surrogate');
      }
    }
  }
}

/**
 * JSON bodies and parameters as one concern: only JSON bodies (a text/plain body, which browsers may
 * send without a preflight, is 415), parsed strictly; preValidation refuses unusable parameters.
 */
export const jsonBodyPlugin = platformPlugin<{ bodyLimit: number }>('json-body', (app, { bodyLimit }) => {
  app.removeContentTypeParser('text/plain');
  registerStrictJsonParser(app, bodyLimit);
  app.addHook('preValidation', refuseUnusableParameters);
});
