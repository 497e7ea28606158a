import type { PlatformApp } from '../../platform/app.js';
import { ApiError, errorResponses } from '../../platform/error-registry.js';
import { registerHealthRoutes } from '../../platform/health.js';
import { estimateHouse, estimateHouses } from './estimating.js';
import type { HouseModel } from './house-model.js';
import type { ModelState } from './model-loading.js';
import { refuseInvalidHouses, refuseOutsideArea, schemaErrorsOf } from './request-checks.js';
import { BATCH_MAX_HOUSES, BatchAnswer, BatchRequest, Estimate, House, ModelCard } from './schemas.js';
import { ESTIMATE_EXAMPLE } from './openapi-example.js';

/** 503 model_unavailable: the same answer whatever the reason (missing, refused, unparseable); no internals. */
function modelUnavailable(): ApiError {
  return new ApiError('model_unavailable');
}

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
  const { lat, long } = model.area;
  return { ...model.card, model_area: { lat_min: lat.min, lat_max: lat.max, long_min: long.min, long_max: long.max } };
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

  app.post(
    '/v1/estimates',
    {
      config: { requiresApiKey: true },
      attachValidation: true,
      schema: {
        tags: ['estimates'],
        summary: 'Estimate the price of one house',
        description:
          'A first indication of the price in US dollars, with a range meant to hold 80 percent of sales. Not for lending, underwriting or ' +
          'insurance decisions about a person. Order of checks: body size (413), key (401), validation (422 invalid_request), ' +
          'model (503 model_unavailable), model area (422 outside_model_area). Needs X-API-Key when the service has keys.',
        security: [{ apiKey: [] }],
        body: { ...House, examples: [ESTIMATE_EXAMPLE.request] },
        response: { 200: { ...Estimate, examples: [ESTIMATE_EXAMPLE.answer] }, ...ESTIMATE_ERRORS },
      },
    },
    async (request) => {
      refuseInvalidHouses(schemaErrorsOf(request), [{ house: request.body, prefix: '' }]);
      const current = loadedModel();
      refuseOutsideArea([request.body], current.area, () => '');
      return estimateHouse(request.body, current);
    },
  );

  app.post(
    '/v1/estimates/batch',
    {
      config: { requiresApiKey: true },
      attachValidation: true,
      schema: {
        tags: ['estimates'],
        summary: 'Estimate the prices of 1 to 100 houses',
        description:
          'One estimate per house, in the order of the houses. Every house is checked: error.fields names paths houses.<index>.<field> ' +
          '(zero-based index), or houses for a batch of 0 or more than 100 houses. When any house is invalid the answer is 422 ' +
          'invalid_request (even if other houses lie outside the model area); outside_model_area only when every house is otherwise valid. ' +
          'Needs X-API-Key when the service has keys.',
        security: [{ apiKey: [] }],
        body: BatchRequest,
        response: { 200: BatchAnswer, ...ESTIMATE_ERRORS },
      },
    },
    async (request) => {
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
      return { estimates: estimateHouses(valid, current) };
    },
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
        response: { 200: ModelCard, ...errorResponses('model_unavailable') },
      },
    },
    async () => {
      if (!card) throw modelUnavailable();
      return card;
    },
  );
}
