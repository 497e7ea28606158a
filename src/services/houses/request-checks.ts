import type { FastifyRequest } from 'fastify';
import type { ErrorObject } from 'ajv';
import { ApiError, invalidRequest } from '../../platform/errors.js';
import { summarizeValidationErrors } from '../../platform/validation.js';
import type { ModelArea } from './house-model.js';
import { coordinatesOutsideArea, crossFieldProblems, type FieldProblem } from './house-rules.js';
import type { House } from './schemas.js';

/**
 * One 422 for every problem of a request body: the routes are registered with attachValidation, so
 * the schema's errors (ajv, allErrors, no coercion) reach the handler, which adds the cross-field
 * problems of the fields that passed and answers them all at once.
 */
export function schemaErrorsOf(request: FastifyRequest): readonly ErrorObject[] {
  const error = request.validationError as (Error & { validation?: ErrorObject[] }) | undefined;
  return error?.validation ?? [];
}

/** Throws 422 invalid_request naming every offending field path when the schema or a cross-field rule fails. */
export function refuseInvalidHouses(schemaErrors: readonly ErrorObject[], houses: readonly { house: unknown; prefix: string }[]): void {
  const summary = schemaErrors.length > 0 ? summarizeValidationErrors(schemaErrors, 'body') : { fields: [], message: '' };
  const invalid = new Set(summary.fields);
  const extra: FieldProblem[] = [];
  for (const { house, prefix } of houses) extra.push(...crossFieldProblems(house, prefix, invalid));
  if (schemaErrors.length === 0 && extra.length === 0) return;
  const fields = [...summary.fields];
  const problems = summary.message === '' ? [] : [summary.message.replace(/^The request is not valid: /, '')];
  for (const { field, problem } of extra) {
    if (!fields.includes(field)) fields.push(field);
    problems.push(`${field} ${problem}`);
  }
  throw invalidRequest(fields, `The request is not valid: ${problems.join('; ')}`);
}

/** 422 outside_model_area naming lat, long or both (with the batch prefix); only for valid houses. */
export function refuseOutsideArea(houses: readonly House[], area: ModelArea, prefixOf: (index: number) => string): void {
  const fields: string[] = [];
  houses.forEach((house, index) => {
    for (const coordinate of coordinatesOutsideArea(house, area)) fields.push(prefixOf(index) + coordinate);
  });
  if (fields.length > 0) {
    throw new ApiError(
      422,
      'outside_model_area',
      `The house lies outside the model area (lat ${area.lat.min} to ${area.lat.max}, long ${area.long.min} to ${area.long.max}): ${fields.join(', ')}`,
      fields,
    );
  }
}
