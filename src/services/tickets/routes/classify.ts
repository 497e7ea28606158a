import type { PlatformApp } from '../../../platform/platform-app.js';
import { errorResponses } from '../../../platform/error-registry.js';
import { componentRef } from '../../../platform/openapi-components.js';
import type { KeywordClassifier } from '../classifier.js';
import { CLASSIFY_EXAMPLE, Classification, Ticket } from '../schemas.js';

/** POST /v1/classify: one ticket's category and priority (503 classifier_unavailable from `workingClassifier`). */
export function registerClassifyRoute(app: PlatformApp, workingClassifier: () => KeywordClassifier): void {
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
          ...errorResponses('unauthorized', 'body_too_large', 'unsupported_media_type', 'invalid_request', 'classifier_unavailable'),
        },
      },
    },
    (request) => workingClassifier().classify(request.body),
  );
}
