import { Ajv, type ErrorObject, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

/**
 * Request validation. Bodies are JSON and are never coerced: a string for a number, a number for a
 * boolean or a fraction for an integer is refused. Query strings and path parameters are text by
 * nature, so their declared numbers and booleans are converted. Both collect every error at once,
 * so that `error.fields` names every offending field, and neither removes unknown properties
 * (an unknown field is an error, not something to drop silently).
 */
const COMMON_OPTIONS: Options = {
  allErrors: true,
  removeAdditional: false,
  useDefaults: true,
  // Lengths count characters (code points), not UTF-16 units: ajv's default.
  strict: false,
};

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

function makeAjv(coerceTypes: boolean): Ajv {
  const ajv = new Ajv({ ...COMMON_OPTIONS, coerceTypes });
  addFormats(ajv);
  return ajv;
}

/**
 * The validator compilers of one app: two ajv instances that know the app's shared schemas (the
 * named OpenAPI components added with addSchema), so that a route may validate `{ $ref: 'House' }`.
 */
export function buildValidatorCompiler(sharedSchemas: readonly object[]): FastifySchemaCompiler<unknown> {
  const bodyAjv = makeAjv(false);
  const textAjv = makeAjv(true);
  for (const schema of sharedSchemas) {
    bodyAjv.addSchema(schema as object);
    textAjv.addSchema(schema as object);
  }
  return ({ schema, httpPart }) => (httpPart === 'body' ? bodyAjv : textAjv).compile(schema as object);
}

/** A JSON pointer such as `/houses/1/grade` as a field path `houses.1.grade`. */
function pointerToPath(pointer: string): string {
  return pointer
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .join('.');
}

function join(parent: string, child: string): string {
  return parent === '' ? child : `${parent}.${child}`;
}

/** The field (or parameter) an ajv error is about; `wholeName` when it is about the whole part. */
export function fieldOfError(error: ErrorObject, wholeName: string): string {
  const parent = pointerToPath(error.instancePath);
  if (error.keyword === 'required') {
    return join(parent, String((error.params as { missingProperty: string }).missingProperty));
  }
  if (error.keyword === 'additionalProperties') {
    return join(parent, String((error.params as { additionalProperty: string }).additionalProperty));
  }
  return parent === '' ? wholeName : parent;
}

function describeError(error: ErrorObject): string {
  if (error.keyword === 'required') return 'is required';
  if (error.keyword === 'additionalProperties') return 'is not an allowed field';
  if (error.keyword === 'multipleOf') return `must be a multiple of ${(error.params as { multipleOf: number }).multipleOf}`;
  if (error.keyword === 'enum') return `must be one of ${(error.params as { allowedValues: unknown[] }).allowedValues.join(', ')}`;
  // The pattern itself is no help to a reader; the description in OpenAPI states the format.
  if (error.keyword === 'pattern' || error.keyword === 'format') return 'is not in the expected format';
  return error.message ?? 'is not valid';
}

export interface ValidationSummary {
  fields: string[];
  message: string;
}

/** Every offending field once, in the order ajv found them, and a message naming each problem. */
export function summarizeValidationErrors(errors: readonly ErrorObject[], wholeName: string): ValidationSummary {
  const fields: string[] = [];
  const problems: string[] = [];
  for (const error of errors) {
    // anyOf/oneOf add a summary error after their branches; the branch errors already name the field.
    if (error.keyword === 'anyOf' || error.keyword === 'oneOf' || error.keyword === 'if') continue;
    const field = fieldOfError(error, wholeName);
    if (!fields.includes(field)) {
      fields.push(field);
      problems.push(`${field} ${describeError(error)}`);
    }
  }
  if (fields.length === 0) {
    fields.push(wholeName);
    problems.push(`${wholeName} is not valid`);
  }
  return { fields, message: `The request is not valid: ${problems.join('; ')}` };
}
