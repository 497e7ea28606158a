import type { FastifyRequest } from 'fastify';
import type { ErrorObject } from 'ajv';
import { ApiError } from '../../platform/error-registry.js';
import { FieldProblems, listedFieldNames } from '../../platform/errors.js';
import { addValidationProblems } from '../../platform/validation.js';
import type { House, ModelArea } from './house.js';
import type { PriceLevel, PriceLevels } from './model/index.js';
import { coordinatesOutsideArea, crossFieldProblems } from './house-rules.js';

/**
 * One 422 for every problem of a request body: the routes are registered with attachValidation, so
 * the schema's errors (ajv, allErrors, no coercion) reach the handler, which adds the cross-field
 * problems of the fields that passed and answers them all at once.
 */
export function schemaErrorsOf(request: FastifyRequest): readonly ErrorObject[] {
  const error = request.validationError as (Error & { validation?: ErrorObject[]; validationContext?: string }) | undefined;
  return error?.validationContext === 'body' ? (error.validation ?? []) : [];
}

/**
 * 422 invalid_request naming the query parameters that fail the query's schema (an unknown parameter,
 * an as_of that is not YYYY-MM). Fastify checks the query after the body, so it is reached only with a
 * valid body.
 */
export function refuseInvalidQuery(request: FastifyRequest): void {
  const error = request.validationError as (Error & { validation?: ErrorObject[]; validationContext?: string }) | undefined;
  if (error?.validationContext === 'querystring') throw addValidationProblems(error.validation ?? [], 'querystring').toError();
}

/** The price level of the as_of month asked (the model's prices_as_of without one); 422 invalid_request outside the allowed months. */
export function priceLevelAsked(asOf: string | undefined, levels: PriceLevels): PriceLevel {
  if (asOf === undefined) return levels.asOf;
  const level = levels.at(asOf);
  if (level) return level;
  throw new FieldProblems('parameter')
    .add(
      'as_of',
      `must be a month from ${levels.firstMonth} to ${levels.lastMonth} (the model's data run from ${levels.firstMonth} to ${levels.lastDataMonth})`,
    )
    .toError();
}

/** Throws 422 invalid_request naming every offending field path when the schema or a cross-field rule fails. */
export function refuseInvalidHouses(schemaErrors: readonly ErrorObject[], houses: readonly { house: unknown; prefix: string }[]): void {
  const problems = new FieldProblems();
  if (schemaErrors.length > 0) addValidationProblems(schemaErrors, 'body', problems);
  for (const { house, prefix } of houses) {
    for (const { field, problem } of crossFieldProblems(house, prefix, problems)) problems.add(field, problem);
  }
  if (problems.size > 0) throw problems.toError();
}

/** 422 outside_model_area naming lat, long or both (with the batch prefix); only for valid houses. */
export function refuseOutsideArea(houses: readonly House[], area: ModelArea, prefixOf: (index: number) => string): void {
  const fields: string[] = [];
  houses.forEach((house, index) => {
    for (const coordinate of coordinatesOutsideArea(house, area)) fields.push(prefixOf(index) + coordinate);
  });
  if (fields.length > 0) {
    throw new ApiError('outside_model_area', {
      fields,
      message: `The house lies outside the model area (lat ${area.lat_min} to ${area.lat_max}, long ${area.long_min} to ${area.long_max}): ${listedFieldNames(fields)}`,
    });
  }
}
