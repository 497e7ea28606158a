import type { FastifyRequest } from 'fastify';
import type { TSchema } from 'typebox';
import type { PlatformApp } from '../../../platform/platform-app.js';
import { ApiError, errorResponses } from '../../../platform/error-registry.js';
import { mapInPieces, type WorkBudget } from '../../../platform/work-budget.js';
import type { House } from '../house.js';
import type { HouseModel, ModelState, PriceLevel } from '../model/index.js';
import { priceLevelAsked, refuseInvalidHouses, refuseInvalidQuery, refuseOutsideArea, schemaErrorsOf } from '../request-checks.js';
import { AsOfQuery, BATCH_MAX_HOUSES, type BatchRequest } from '../schemas.js';

/**
 * What the routes that take houses (estimates.ts, explanations.ts) share: the checks of one house and
 * of a batch in the documented order, and the POST of the estimates tag.
 */

/** 503 model_unavailable: the same answer whatever the reason (missing, refused, unparseable); no internals. */
export function modelUnavailable(): ApiError {
  return new ApiError('model_unavailable');
}

/** The loaded model, or the 503 when the model did not load. */
export function loadedModelOf(state: ModelState): () => HouseModel {
  const model = state.status === 'loaded' ? state.model : undefined;
  return () => {
    if (!model) throw modelUnavailable();
    return model;
  };
}

export const BATCH_CHECKS =
  'Every house is checked: `error.fields` names paths `houses.INDEX.FIELD` (zero-based index, e.g. `houses.0.grade`), or `houses` for a ' +
  'batch of 0 or more than 100 houses. When any house is invalid the answer is 422 `invalid_request` (even if other houses lie outside ' +
  'the model area); `outside_model_area` only when every house is otherwise valid. Needs X-API-Key when the service has keys.';

const ESTIMATE_ERRORS = errorResponses(
  'unauthorized',
  'body_too_large',
  'unsupported_media_type',
  'invalid_request',
  'outside_model_area',
  'model_unavailable',
);

/** One house: the checks in the documented order, then the answer. */
export const answerOne =
  <T>(loadedModel: () => HouseModel, answer: (house: House, model: HouseModel, at: PriceLevel) => T) =>
  (request: FastifyRequest<{ Body: House; Querystring: AsOfQuery }>): T => {
    refuseInvalidHouses(schemaErrorsOf(request), [{ house: request.body, prefix: '' }]);
    refuseInvalidQuery(request);
    const current = loadedModel();
    const at = priceLevelAsked(request.query.as_of, current.levels);
    refuseOutsideArea([request.body], current.area, () => '');
    return answer(request.body, current, at);
  };

/**
 * A batch: every house checked (paths houses.<index>.<field>), then the answers in order, computed
 * `piece` houses at a time with a pause for other requests between pieces (work-budget.ts).
 */
export const answerBatch =
  <T>(loadedModel: () => HouseModel, answer: (houses: readonly House[], model: HouseModel, at: PriceLevel) => T[], piece: number) =>
  async (request: FastifyRequest<{ Body: BatchRequest; Querystring: AsOfQuery }>): Promise<{ estimates: T[] }> => {
    const body: unknown = request.body;
    // A batch of a size outside 1 to 100 is refused on its size alone: no house of it is looked at.
    const batch = typeof body === 'object' && body !== null ? (body as { houses?: unknown }).houses : undefined;
    const houses: unknown[] = Array.isArray(batch) && batch.length >= 1 && batch.length <= BATCH_MAX_HOUSES ? batch : [];
    refuseInvalidHouses(
      schemaErrorsOf(request),
      houses.map((house, index) => ({ house, prefix: `houses.${index}.` })),
    );
    refuseInvalidQuery(request);
    const current = loadedModel();
    const at = priceLevelAsked(request.query.as_of, current.levels);
    const valid = request.body.houses;
    refuseOutsideArea(valid, current.area, (index) => `houses.${index}.`);
    return { estimates: await mapInPieces(valid, piece, (houses) => answer(houses, current, at)) };
  };

/**
 * A POST of the estimates tag: key required, validation errors reach the handler, the estimate
 * errors; the body and the 200 answer as named components with their examples.
 */
export const postHouses = (
  app: PlatformApp,
  path: string,
  doc: { operationId: string; summary: string; description: string; body: TSchema; ok: TSchema },
  workBudget: WorkBudget | null,
  handler: (request: FastifyRequest<{ Body: never; Querystring: never }>) => unknown,
): void => {
  app.post<{ Body: never; Querystring: never }>(
    path,
    {
      config: workBudget === null ? { requiresApiKey: true } : { requiresApiKey: true, workBudget },
      attachValidation: true,
      schema: {
        tags: ['estimates'],
        operationId: doc.operationId,
        summary: doc.summary,
        description: doc.description,
        body: doc.body,
        querystring: AsOfQuery,
        response: { 200: doc.ok, ...ESTIMATE_ERRORS },
      },
    },
    handler,
  );
};
