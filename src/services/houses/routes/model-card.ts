import type { PlatformApp } from '../../../platform/platform-app.js';
import { errorResponses } from '../../../platform/error-registry.js';
import { componentRef } from '../../../platform/openapi-components.js';
import type { HouseModel, ModelState } from '../model/index.js';
import { MODEL_CARD_EXAMPLE } from '../openapi-example.js';
import { ModelCard } from '../schemas.js';
import { modelUnavailable } from './house-requests.js';

/** The model card of the file, plus the model area the coordinates must lie in. */
function modelCardAnswer(model: HouseModel): Record<string, unknown> {
  return { ...model.card, model_area: model.area };
}

/** GET /v1/model: the card of the loaded model, 503 model_unavailable without one. */
export function registerModelCardRoute(app: PlatformApp, state: ModelState): void {
  const card = state.status === 'loaded' ? modelCardAnswer(state.model) : undefined;
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
