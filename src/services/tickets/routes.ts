import type { PlatformApp } from '../../platform/app.js';
import { ApiError, errorResponse, unavailable } from '../../platform/errors.js';
import { registerHealthRoutes } from '../../platform/health.js';
import { KeywordClassifier } from './classifier.js';
import { CATEGORIES } from './rule-sets/keyword-rule-set.js';
import { componentRef } from '../../platform/openapi-components.js';
import { CLASSIFY_EXAMPLE, CategoryList, Classification, Ticket } from './schemas.js';
import type { ClassifierMode } from './settings.js';

const READY_PROBE = { subject: 'readiness probe', body: 'refund' };

function classifierUnavailable(): ApiError {
  return unavailable('classifier_unavailable', 'The classifier is unavailable');
}

export function registerTicketRoutes(app: PlatformApp, classifier: KeywordClassifier, mode: ClassifierMode): void {
  /** The classifier, or the 503 when CLASSIFIER_MODE=unavailable. */
  const workingClassifier = (): KeywordClassifier => {
    if (mode === 'unavailable') throw classifierUnavailable();
    return classifier;
  };

  registerHealthRoutes(app, {
    unavailableDescription: 'The classifier is unavailable (code classifier_unavailable)',
    check() {
      // "asks the classifier for one prediction"
      const result = workingClassifier().classify(READY_PROBE);
      if (result.category !== 'billing') throw classifierUnavailable();
    },
  });

  app.post(
    '/v1/classify',
    {
      config: { requiresApiKey: true },
      schema: {
        tags: ['tickets'],
        operationId: 'classifyTicket',
        summary: 'Classify a support ticket',
        description:
          'Assigns one category and one priority to the text of a ticket, by keyword rules. The same text always gives the same result. Needs X-API-Key when the service has keys.',
        body: componentRef(Ticket, { examples: [CLASSIFY_EXAMPLE.request] }),
        response: {
          200: componentRef(Classification, { description: 'The category and priority assigned to the ticket', examples: [CLASSIFY_EXAMPLE.answer] }),
          401: errorResponse('Missing or invalid API key (code unauthorized)'),
          413: errorResponse('Request body larger than 64 KiB (code body_too_large)'),
          415: errorResponse('Content-Type is not application/json (code unsupported_media_type)'),
          422: errorResponse('The ticket is not valid (code invalid_request); fields names every offending field, or body for invalid JSON'),
          503: errorResponse('The classifier is unavailable (code classifier_unavailable)'),
        },
      },
    },
    async (request) => workingClassifier().classify(request.body),
  );

  app.get(
    '/v1/categories',
    {
      schema: {
        tags: ['tickets'],
        operationId: 'listCategories',
        summary: 'List the categories',
        description: 'The categories the classifier can assign, in their fixed order. Unknown query parameters are ignored. Needs no key.',
        response: {
          200: componentRef(CategoryList, { description: 'The categories the classifier can assign', examples: [{ categories: [...CATEGORIES] }] }),
        },
      },
    },
    async () => ({ categories: [...CATEGORIES] }),
  );
}
