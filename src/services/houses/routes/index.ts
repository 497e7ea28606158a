import type { PlatformApp } from '../../../platform/platform-app.js';
import { registerHealthRoutes } from '../../../platform/health.js';
import type { ModelState } from '../model/index.js';
import { ESTIMATE_EXAMPLE } from '../openapi-example.js';
import { registerEstimateRoutes } from './estimates.js';
import { registerExplanationRoutes } from './explanations.js';
import { loadedModelOf, modelUnavailable } from './house-requests.js';
import { registerModelCardRoute } from './model-card.js';

/**
 * The routes of the house-price service, one module per resource: estimates.ts (/v1/estimates,
 * /v1/estimates/batch), explanations.ts (/v1/estimates/explain, /v1/estimates/explain/batch),
 * model-card.ts (/v1/model). Registered in this order, which is the order of the OpenAPI paths.
 */
export function registerHouseRoutes(app: PlatformApp, state: ModelState): void {
  const loadedModel = loadedModelOf(state);
  registerHealthRoutes(app, {
    unavailableCode: 'model_unavailable',
    // "the model is loaded and answers": one estimate of the documented example house.
    check() {
      const price = loadedModel().priceInDollars(ESTIMATE_EXAMPLE.request);
      if (!(Number.isFinite(price) && price > 0)) throw modelUnavailable();
    },
  });
  registerEstimateRoutes(app, loadedModel);
  registerExplanationRoutes(app, loadedModel);
  registerModelCardRoute(app, state);
}
