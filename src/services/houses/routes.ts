import type { FastifyRequest } from 'fastify';
import type { TSchema } from 'typebox';
import type { PlatformApp } from '../../platform/platform-app.js';
import { ApiError, errorResponses } from '../../platform/error-registry.js';
import { registerHealthRoutes } from '../../platform/health.js';
import { componentRef } from '../../platform/openapi-components.js';
import { mapInPieces, WorkBudget } from '../../platform/work-budget.js';
import { estimateHouse, estimateHouses, explainHouse, explainHouses } from './estimating.js';
import { House } from './house.js';
import type { HouseModel, ModelState, PriceLevel } from './model/index.js';
import { priceLevelAsked, refuseInvalidHouses, refuseInvalidQuery, refuseOutsideArea, schemaErrorsOf } from './request-checks.js';
import { AsOfQuery, BATCH_MAX_HOUSES, BatchAnswer, BatchRequest, Estimate, ExplainedBatchAnswer, ExplainedEstimate, ModelCard } from './schemas.js';
import { BATCH_EXAMPLE, ESTIMATE_EXAMPLE, EXPLAIN_BATCH_EXAMPLE, EXPLAIN_EXAMPLE, MODEL_CARD_EXAMPLE } from './openapi-example.js';

/** 503 model_unavailable: the same answer whatever the reason (missing, refused, unparseable); no internals. */
function modelUnavailable(): ApiError {
  return new ApiError('model_unavailable');
}

const BATCH_CHECKS =
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

/** The model card of the file, plus the model area the coordinates must lie in. */
export function modelCardAnswer(model: HouseModel): Record<string, unknown> {
  return { ...model.card, model_area: model.area };
}

export function registerHouseRoutes(app: PlatformApp, state: ModelState): void {
  const model: HouseModel | undefined = state.status === 'loaded' ? state.model : undefined;
  const card = model ? modelCardAnswer(model) : undefined;
  const loadedModel = (): HouseModel => {
    if (!model) throw modelUnavailable();
    return model;
  };

  registerHealthRoutes(app, {
    unavailableCode: 'model_unavailable',
    // "the model is loaded and answers": one estimate of the documented example house.
    check() {
      const price = loadedModel().priceInDollars(ESTIMATE_EXAMPLE.request);
      if (!(Number.isFinite(price) && price > 0)) throw modelUnavailable();
    },
  });

  /** One house: the checks in the documented order, then the answer. */
  const answerOne =
    <T>(answer: (house: House, model: HouseModel, at: PriceLevel) => T) =>
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
  const answerBatch =
    <T>(answer: (houses: readonly House[], model: HouseModel, at: PriceLevel) => T[], piece: number) =>
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
  const postHouses = (
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

  // The work budgets of the expensive estimates (docs/reliability.md, "Work budgets"; one estimate is
  // cheaper than its own admission); a batch is computed in pieces of a few milliseconds (an explained
  // house is about 0.4 ms on two threads, an estimate a few microseconds).
  const budgets = {
    estimateBatches: new WorkBudget('estimate batches', { concurrency: 1, queue: 32, maxWaitMs: 2_000 }),
    explanations: new WorkBudget('explanations', { concurrency: 1, queue: 64, maxWaitMs: 2_000 }),
    explanationBatches: new WorkBudget('explanation batches', { concurrency: 1, queue: 16, maxWaitMs: 2_000 }),
  };

  postHouses(
    '/v1/estimates',
    {
      operationId: 'estimatePrice',
      summary: 'Estimate the price of one house',
      description:
        'A first indication of the price in US dollars, with a range meant to hold 80 percent of sales. Not for lending, underwriting or ' +
        'insurance decisions about a person. Order of checks: body size (413), key (401), validation of the body then of the query ' +
        '(422 invalid_request), model (503 model_unavailable), as_of month allowed (422 invalid_request), model area (422 ' +
        'outside_model_area). Needs X-API-Key when the service has keys.',
      body: componentRef(House, { examples: [ESTIMATE_EXAMPLE.request] }),
      ok: componentRef(Estimate, { description: 'The estimate of the house', examples: [ESTIMATE_EXAMPLE.answer] }),
    },
    null,
    answerOne(estimateHouse),
  );

  postHouses(
    '/v1/estimates/batch',
    {
      operationId: 'estimatePrices',
      summary: 'Estimate the prices of 1 to 100 houses',
      description: `One estimate per house, in the order of the houses. ${BATCH_CHECKS}`,
      body: componentRef(BatchRequest, { examples: [BATCH_EXAMPLE.request] }),
      ok: componentRef(BatchAnswer, { description: 'One estimate per house, in the order of the houses', examples: [BATCH_EXAMPLE.answer] }),
    },
    budgets.estimateBatches,
    answerBatch(estimateHouses, 50),
  );

  postHouses(
    '/v1/estimates/explain',
    {
      operationId: 'explainEstimate',
      summary: 'Estimate the price of one house, with why and the sales it most resembles',
      description:
        'The same Estimate as POST /v1/estimates (same validation, errors, key and order of checks: 413, 401, 422 invalid_request, ' +
        '503 model_unavailable, 422 outside_model_area), plus explanation: exact path-dependent TreeSHAP over the shipped trees, ' +
        "each of the 16 fields' contribution to log(price / sqft_living) (baseline + contributions = raw) and as a price factor, " +
        'largest effect first; and comparable_sales: the 5 training sales most like the house. Not for lending, underwriting or ' +
        'insurance decisions about a person. Needs X-API-Key when the service has keys.',
      body: componentRef(House, { examples: [EXPLAIN_EXAMPLE.request] }),
      ok: componentRef(ExplainedEstimate, { description: 'The estimate of the house, explained', examples: [EXPLAIN_EXAMPLE.answer] }),
    },
    budgets.explanations,
    answerOne(explainHouse),
  );

  postHouses(
    '/v1/estimates/explain/batch',
    {
      operationId: 'explainEstimates',
      summary: 'Explained estimates of 1 to 100 houses',
      description: `One explained estimate (as POST /v1/estimates/explain) per house, in the order of the houses. ${BATCH_CHECKS}`,
      body: componentRef(BatchRequest, { examples: [EXPLAIN_BATCH_EXAMPLE.request] }),
      ok: componentRef(ExplainedBatchAnswer, {
        description: 'One explained estimate per house, in the order of the houses',
        examples: [EXPLAIN_BATCH_EXAMPLE.answer],
      }),
    },
    budgets.explanationBatches,
    answerBatch(explainHouses, 10),
  );

  app.get(
    '/v1/model',
    {
      schema: {
        tags: ['model'],
        operationId: 'getModelCard',
        summary: 'The model card',
        description:
          'What the model is for, what it must not be used for (lending, underwriting, insurance decisions about a person), how well it did on ' +
          'held-out sales, the range factors and the model area. Taken from the model file. Needs no key.',
        response: {
          200: componentRef(ModelCard, { description: 'The model card of the loaded model, with its model area', examples: [MODEL_CARD_EXAMPLE] }),
          ...errorResponses('model_unavailable'),
        },
      },
    },
    () => {
      if (!card) throw modelUnavailable();
      return card;
    },
  );
}
