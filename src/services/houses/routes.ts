import type { PlatformApp } from '../../platform/app.js';
import { errorResponse, unavailable, type ApiError } from '../../platform/errors.js';
import { registerHealthRoutes } from '../../platform/health.js';
import type { FastifyRequest } from 'fastify';
import type { TSchema } from 'typebox';
import { estimateHouse, estimateHouses, explainHouse, explainHouses } from './estimating.js';
import type { HouseModel } from './house-model.js';
import type { ModelState } from './model-loading.js';
import { refuseInvalidHouses, refuseOutsideArea, schemaErrorsOf } from './request-checks.js';
import { House } from './house.js';
import { BATCH_MAX_HOUSES, BatchAnswer, BatchRequest, Estimate, ExplainedBatchAnswer, ExplainedEstimate, ModelCard } from './schemas.js';
import { ESTIMATE_EXAMPLE, EXPLAIN_EXAMPLE } from './openapi-example.js';

const MODEL_UNAVAILABLE_DESCRIPTION = 'No usable model is loaded (code model_unavailable)';

/** 503 model_unavailable: the same answer whatever the reason (missing, refused, unparseable); no internals. */
function modelUnavailable(): ApiError {
  return unavailable('model_unavailable', 'The price model is unavailable');
}

const BATCH_CHECKS =
  'Every house is checked: error.fields names paths houses.<index>.<field> (zero-based index), or houses for a batch of 0 or more ' +
  'than 100 houses. When any house is invalid the answer is 422 invalid_request (even if other houses lie outside the model area); ' +
  'outside_model_area only when every house is otherwise valid. Needs X-API-Key when the service has keys.';

const ESTIMATE_ERRORS = {
  401: errorResponse('Missing or invalid API key (code unauthorized)'),
  413: errorResponse('Request body larger than 64 KiB (code body_too_large), checked before validation'),
  415: errorResponse('Content-Type is not application/json (code unsupported_media_type)'),
  422: errorResponse(
    'invalid_request: fields names every offending field (schema and cross-field rules together), or body for invalid JSON; ' +
      'outside_model_area: the house is otherwise valid but lat, long or both lie outside the model area',
  ),
  503: errorResponse(MODEL_UNAVAILABLE_DESCRIPTION),
};

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
    unavailableDescription: MODEL_UNAVAILABLE_DESCRIPTION,
    // "the model is loaded and answers": one estimate of the documented example house.
    check() {
      const price = loadedModel().priceInDollars(ESTIMATE_EXAMPLE.request);
      if (!(Number.isFinite(price) && price > 0)) throw modelUnavailable();
    },
  });

  /** One house: the checks in the documented order, then the answer. */
  const answerOne =
    <T>(answer: (house: House, model: HouseModel) => T) =>
    async (request: FastifyRequest<{ Body: House }>): Promise<T> => {
      refuseInvalidHouses(schemaErrorsOf(request), [{ house: request.body, prefix: '' }]);
      const current = loadedModel();
      refuseOutsideArea([request.body], current.area, () => '');
      return answer(request.body, current);
    };

  /** A batch: every house checked (paths houses.<index>.<field>), then the answers in order. */
  const answerBatch =
    <T>(answer: (houses: readonly House[], model: HouseModel) => T[]) =>
    async (request: FastifyRequest<{ Body: BatchRequest }>): Promise<{ estimates: T[] }> => {
      const body: unknown = request.body;
      // A batch of a size outside 1 to 100 is refused on its size alone: no house of it is looked at.
      const batch = typeof body === 'object' && body !== null ? (body as { houses?: unknown }).houses : undefined;
      const houses: unknown[] = Array.isArray(batch) && batch.length >= 1 && batch.length <= BATCH_MAX_HOUSES ? batch : [];
      refuseInvalidHouses(
        schemaErrorsOf(request),
        houses.map((house, index) => ({ house, prefix: `houses.${index}.` })),
      );
      const current = loadedModel();
      const valid = request.body.houses;
      refuseOutsideArea(valid, current.area, (index) => `houses.${index}.`);
      return { estimates: answer(valid, current) };
    };

  /** A POST of the estimates tag: key required, validation errors reach the handler, the estimate errors. */
  const postHouses = <B>(
    path: string,
    doc: { summary: string; description: string; body: TSchema; ok: TSchema },
    handler: (request: FastifyRequest<{ Body: B }>) => Promise<unknown>,
  ): void => {
    app.post<{ Body: B }>(
      path,
      {
        config: { requiresApiKey: true },
        attachValidation: true,
        schema: {
          tags: ['estimates'],
          summary: doc.summary,
          description: doc.description,
          security: [{ apiKey: [] }],
          body: doc.body,
          response: { 200: doc.ok, ...ESTIMATE_ERRORS },
        },
      },
      handler,
    );
  };

  postHouses(
    '/v1/estimates',
    {
      summary: 'Estimate the price of one house',
      description:
        'A first indication of the price in US dollars, with a range meant to hold 80 percent of sales. Not for lending, underwriting or ' +
        'insurance decisions about a person. Order of checks: body size (413), key (401), validation (422 invalid_request), ' +
        'model (503 model_unavailable), model area (422 outside_model_area). Needs X-API-Key when the service has keys.',
      body: { ...House, examples: [ESTIMATE_EXAMPLE.request] },
      ok: { ...Estimate, examples: [ESTIMATE_EXAMPLE.answer] },
    },
    answerOne(estimateHouse),
  );

  postHouses(
    '/v1/estimates/batch',
    {
      summary: 'Estimate the prices of 1 to 100 houses',
      description: `One estimate per house, in the order of the houses. ${BATCH_CHECKS}`,
      body: BatchRequest,
      ok: BatchAnswer,
    },
    answerBatch(estimateHouses),
  );

  postHouses(
    '/v1/estimates/explain',
    {
      summary: 'Estimate the price of one house, with why and the sales it most resembles',
      description:
        'The same Estimate as POST /v1/estimates (same validation, errors, key and order of checks: 413, 401, 422 invalid_request, ' +
        '503 model_unavailable, 422 outside_model_area), plus explanation: exact path-dependent TreeSHAP over the shipped trees, ' +
        "each of the 16 fields' contribution to log(price / sqft_living) (baseline + contributions = raw) and as a price factor, " +
        'largest effect first; and comparable_sales: the 5 training sales most like the house. Not for lending, underwriting or ' +
        'insurance decisions about a person. Needs X-API-Key when the service has keys.',
      body: { ...House, examples: [EXPLAIN_EXAMPLE.request] },
      ok: { ...ExplainedEstimate, examples: [EXPLAIN_EXAMPLE.answer] },
    },
    answerOne(explainHouse),
  );

  postHouses(
    '/v1/estimates/explain/batch',
    {
      summary: 'Explained estimates of 1 to 100 houses',
      description: `One explained estimate (as POST /v1/estimates/explain) per house, in the order of the houses. ${BATCH_CHECKS}`,
      body: BatchRequest,
      ok: ExplainedBatchAnswer,
    },
    answerBatch(explainHouses),
  );

  app.get(
    '/v1/model',
    {
      schema: {
        tags: ['model'],
        summary: 'The model card',
        description:
          'What the model is for, what it must not be used for (lending, underwriting, insurance decisions about a person), how well it did on ' +
          'held-out sales, the range factors and the model area. Taken from the model file. Needs no key.',
        response: { 200: ModelCard, 503: errorResponse(MODEL_UNAVAILABLE_DESCRIPTION) },
      },
    },
    async () => {
      if (!card) throw modelUnavailable();
      return card;
    },
  );
}
