import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import type { DeferredCompilation } from './deferred-compilation.js';
import { FieldProblems } from './errors.js';

/**
 * Request validation. Bodies are JSON and are never coerced: a string for a number, a number for a
 * boolean or a fraction for an integer is refused. Query strings and path parameters are text by
 * nature, so their declared numbers and booleans are converted. Both collect every error at once,
 * so that `error.fields` names every offending field, and neither removes unknown properties
 * (an unknown field is an error, not something to drop silently).
 *
 * Cost (docs/decisions.md, "Cost of a request"): an array whose schema bounds its size (the batch's
 * 1 to 100 houses) is refused on its size alone, before ajv looks at any item; then ajv's errors are
 * at most a few per value of the (64 KiB) body, and they are summarized in one pass into at most
 * MAX_ERROR_FIELDS names. No ajv wording reaches a client: every keyword has its own words below.
 */
const COMMON_OPTIONS: Options = {
  allErrors: true,
  removeAdditional: false,
  useDefaults: true,
  // Lengths count characters (code points), not UTF-16 units: ajv's default.
  strict: false,
  // Each error carries its schema and value: the messages are worded from the limits themselves, and
  // a query parameter given twice (an array) is told apart from one of the wrong type.
  verbose: true,
  // The schemas are the services' own, checked as OpenAPI by the tests: not checked again against
  // JSON Schema's meta-schema, whose compilation was 60 ms of the first request's answer.
  validateSchema: false,
};

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

function makeAjv(coerceTypes: boolean): Ajv {
  const ajv = new Ajv({ ...COMMON_OPTIONS, coerceTypes });
  addFormats(ajv);
  return ajv;
}

type Schema = Record<string, unknown>;

/** An array of the request whose schema bounds its number of items, by its path of keys. */
interface BoundedArray {
  keys: string[];
  schema: Schema & { minItems?: number; maxItems?: number };
}

/**
 * The arrays reachable from the root through `properties` whose schema has minItems or maxItems.
 * A `$ref` to one of the app's named schemas (an OpenAPI component) is followed.
 */
function boundedArraysOf(schema: unknown, named: ReadonlyMap<string, unknown>, keys: string[] = [], depth = 0): BoundedArray[] {
  if (schema === null || typeof schema !== 'object' || depth > 32) return [];
  const node = schema as Schema;
  if (typeof node.$ref === 'string') return boundedArraysOf(named.get(node.$ref), named, keys, depth + 1);
  if (node.type === 'array' && (typeof node.minItems === 'number' || typeof node.maxItems === 'number')) {
    return [{ keys, schema: node }];
  }
  const properties = node.properties;
  if (properties === null || typeof properties !== 'object') return [];
  return Object.entries(properties as Record<string, unknown>).flatMap(([key, child]) => boundedArraysOf(child, named, [...keys, key], depth + 1));
}

/** The size error of the first bounded array of `data` with too few or too many items, if any. */
function arraySizeError(data: unknown, arrays: readonly BoundedArray[]): ErrorObject | undefined {
  for (const { keys, schema } of arrays) {
    let value: unknown = data;
    for (const key of keys) {
      value = value !== null && typeof value === 'object' && !Array.isArray(value) && Object.hasOwn(value, key) ? (value as Schema)[key] : undefined;
    }
    if (!Array.isArray(value)) continue;
    const keyword = schema.maxItems !== undefined && value.length > schema.maxItems ? 'maxItems' : schema.minItems !== undefined && value.length < schema.minItems ? 'minItems' : undefined;
    if (keyword === undefined) continue;
    const pointer = keys.map((key) => `/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
    return {
      keyword,
      instancePath: pointer,
      schemaPath: `#${keys.map((key) => `/properties/${key}`).join('')}/${keyword}`,
      params: { limit: schema[keyword] },
      parentSchema: schema,
    };
  }
  return undefined;
}

/**
 * The validator of a schema: ajv's, behind the size check of the bounded arrays (when the schema
 * has any), which answers alone so that no item of an oversized array is ever looked at.
 */
function withArraySizeCheck(validate: ValidateFunction, schema: unknown, named: ReadonlyMap<string, unknown>): ValidateFunction {
  const arrays = boundedArraysOf(schema, named);
  if (arrays.length === 0) return validate;
  const checked = ((data: unknown, context?: Parameters<ValidateFunction>[1]) => {
    const sizeError = arraySizeError(data, arrays);
    if (sizeError) {
      checked.errors = [sizeError];
      return false;
    }
    const valid = validate(data, context);
    checked.errors = validate.errors;
    return valid;
  }) as ValidateFunction;
  // Fastify passes the parent of the data (for defaults on the root) to a compiled ajv function.
  Object.assign(checked, { schemaEnv: validate.schemaEnv, schema: validate.schema });
  return checked;
}

/**
 * The validator compiler of one app: two ajv instances that know the app's shared schemas (the
 * named OpenAPI components added with addSchema), so that a route may validate `{ $ref: 'House' }`;
 * each validator checks the sizes of bounded arrays first, through those names too. With `deferred`,
 * the instances are made and each route's validator compiled on first use or after the service
 * listens (deferred-compilation.ts), not at start.
 */
export function buildValidatorCompiler(sharedSchemas: readonly object[], deferred?: DeferredCompilation): FastifySchemaCompiler<unknown> {
  let instances: { body: Ajv; text: Ajv } | undefined;
  const ajvFor = (httpPart: string | undefined): Ajv => {
    if (instances === undefined) {
      const made = { body: makeAjv(false), text: makeAjv(true) };
      for (const schema of sharedSchemas) {
        made.body.addSchema(schema);
        made.text.addSchema(schema);
      }
      instances = made;
    }
    return httpPart === 'body' ? instances.body : instances.text;
  };
  const named = new Map<string, unknown>();
  for (const schema of sharedSchemas) {
    const name = (schema as { $id?: unknown }).$id;
    if (typeof name === 'string') named.set(name, schema);
  }
  return ({ schema, httpPart }) => {
    const compile = () => withArraySizeCheck(ajvFor(httpPart).compile(schema as object), schema, named);
    return deferred ? deferred.validator(schema, compile) : compile();
  };
}

/** The part of the request a validation error is about, as Fastify names it. */
export type RequestPart = string;

/** What the whole part is called when an error is about it rather than one of its fields. */
function wholeNameOf(part: RequestPart): string {
  if (part === 'querystring') return 'query';
  return part;
}

/** A JSON pointer such as `/houses/1/grade` as a field path `houses.1.grade`. */
function pointerToPath(pointer: string): string {
  if (pointer === '') return '';
  const path = pointer.slice(1).replaceAll('/', '.');
  return path.includes('~') ? path.replaceAll('~1', '/').replaceAll('~0', '~') : path;
}

function join(parent: string, child: string): string {
  return parent === '' ? child : `${parent}.${child}`;
}

/** The field (or parameter) an ajv error is about; `wholeName` when it is about the whole part. */
export function fieldOfError(error: ErrorObject, wholeName: string): string {
  const parent = pointerToPath(error.instancePath);
  if (error.keyword === 'required') {
    return join(parent, (error.params as { missingProperty: string }).missingProperty);
  }
  if (error.keyword === 'additionalProperties') {
    return join(parent, (error.params as { additionalProperty: string }).additionalProperty);
  }
  if (parent === '') return wholeName;
  // A repeated query parameter is an array: its second value is still the parameter, not `name.1`
  // (the pointer's first step, so that a parameter name holding a dot stays whole).
  return wholeName === 'query' ? pointerToPath(firstPointerStep(error.instancePath)) : parent;
}

/** `/borough/1` as `/borough`. */
function firstPointerStep(pointer: string): string {
  const end = pointer.indexOf('/', 1);
  return end === -1 ? pointer : pointer.slice(0, end);
}

const TYPE_WORDS: Record<string, string> = {
  integer: 'an integer',
  number: 'a number',
  string: 'a string',
  boolean: 'true or false',
  object: 'an object',
  array: 'an array',
  null: 'null',
};

function typeWords(type: unknown): string {
  const types = Array.isArray(type) ? type : String(type).split(',');
  return types.map((name) => TYPE_WORDS[String(name)] ?? String(name)).join(' or ');
}

function limitOf(error: ErrorObject): unknown {
  return (error.params as { limit?: unknown }).limit;
}

function characters(count: unknown): string {
  return count === 1 ? '1 character' : `${String(count)} characters`;
}

/** What a value must be, in words, from its schema (the branches of anyOf/oneOf, e.g. yr_renovated). */
function describeSchema(schema: unknown): string {
  if (schema === null || typeof schema !== 'object') return 'valid';
  const node = schema as Schema;
  if ('const' in node) return JSON.stringify(node.const);
  if (Array.isArray(node.enum)) return `one of ${node.enum.join(', ')}`;
  const type = node.type === undefined ? 'a valid value' : typeWords(node.type);
  const { minimum, maximum } = node;
  if (typeof minimum === 'number' && typeof maximum === 'number') return `${type} from ${minimum} to ${maximum}`;
  if (typeof minimum === 'number') return `${type} of at least ${minimum}`;
  if (typeof maximum === 'number') return `${type} of at most ${maximum}`;
  return type;
}

/** The number of items an array must hold, from its schema: `1 to 100 items`. */
function itemsRange(schema: Schema | undefined, error: ErrorObject): string {
  const min = schema?.minItems;
  const max = schema?.maxItems;
  if (typeof min === 'number' && typeof max === 'number') return `from ${min} to ${max} items`;
  const limit = Number(limitOf(error));
  return error.keyword === 'minItems' ? `at least ${limit} item${limit === 1 ? '' : 's'}` : `at most ${limit} item${limit === 1 ? '' : 's'}`;
}

/**
 * The problem an ajv error describes, in the contracts' words ("subject is required", "grade must be
 * at most 13"), for every keyword the services' request schemas use; anything else is "is not valid",
 * never ajv's own text.
 */
function describeError(error: ErrorObject, noun: 'field' | 'parameter'): string {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return 'is required';
    case 'additionalProperties':
      return `is not an allowed ${noun}`;
    case 'type':
      // A query parameter given more than once arrives as an array of its values.
      if (noun === 'parameter' && Array.isArray(error.data) && params.type !== 'array') return 'is given more than once';
      return `must be ${typeWords(params.type)}`;
    case 'minLength':
      return limitOf(error) === 1 ? 'must not be empty' : `must have at least ${characters(limitOf(error))}`;
    case 'maxLength':
      return `must have at most ${characters(limitOf(error))}`;
    case 'minimum':
      return `must be at least ${String(limitOf(error))}`;
    case 'maximum':
      return `must be at most ${String(limitOf(error))}`;
    case 'exclusiveMinimum':
      return `must be greater than ${String(limitOf(error))}`;
    case 'exclusiveMaximum':
      return `must be less than ${String(limitOf(error))}`;
    case 'multipleOf':
      return `must be a multiple of ${String(params.multipleOf)}`;
    case 'enum':
      return `must be one of ${(params.allowedValues as unknown[]).join(', ')}`;
    case 'const':
      return `must be ${JSON.stringify(params.allowedValue)}`;
    case 'minItems':
    case 'maxItems':
      return `must hold ${itemsRange(error.parentSchema, error)}`;
    case 'anyOf':
    case 'oneOf':
      return Array.isArray(error.schema) ? `must be ${error.schema.map(describeSchema).join(' or ')}` : 'is not valid';
    // The pattern itself is no help to a reader; the description in OpenAPI states the format.
    case 'pattern':
    case 'format':
      return 'is not in the expected format';
    default:
      return 'is not valid';
  }
}

/** An error inside a branch of anyOf/oneOf: the anyOf/oneOf error after it describes the field. */
function isBranchError(error: ErrorObject): boolean {
  return error.schemaPath.includes('/anyOf/') || error.schemaPath.includes('/oneOf/');
}

/**
 * Adds each offending field of ajv's errors once, in the order ajv found them, with its problem:
 * one pass, bounded by `problems` (the first MAX_ERROR_FIELDS names are kept).
 */
export function addValidationProblems(
  errors: readonly ErrorObject[],
  part: RequestPart,
  problems: FieldProblems = new FieldProblems(part === 'body' ? 'field' : 'parameter'),
): FieldProblems {
  const wholeName = wholeNameOf(part);
  const noun = part === 'body' ? 'field' : 'parameter';
  for (const error of errors) {
    // `if` adds a summary after its then/else errors, which already name the field.
    if (error.keyword === 'if' || isBranchError(error)) continue;
    problems.add(fieldOfError(error, wholeName), () => describeError(error, noun));
  }
  if (problems.size === 0) problems.add(wholeName, 'is not valid');
  return problems;
}
