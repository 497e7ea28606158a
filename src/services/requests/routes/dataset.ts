import type { PlatformApp } from '../../../platform/platform-app.js';
import { errorResponses } from '../../../platform/error-registry.js';
import { componentRef } from '../../../platform/openapi-components.js';
import { Dataset, NoQuery } from '../schemas.js';
import { REQUEST_EXAMPLES } from '../openapi-examples.js';
import { common, secured, type RequestRouteDependencies } from './route-parts.js';

/** GET /v1/dataset: the snapshot's source, date, size and cleaning. */
export function registerDatasetRoute(app: PlatformApp, { store, caching }: RequestRouteDependencies): void {
  app.get(
    '/v1/dataset',
    {
      ...secured,
      schema: {
        tags: ['statistics'],
        operationId: 'getDataset',
        summary: 'The snapshot',
        description: 'Source, snapshot date and id, row count, created_at range, and the cleaning rules with what each removed.',
        querystring: NoQuery,
        response: {
          200: componentRef(Dataset, { description: 'The snapshot: source, date, size and cleaning', examples: [REQUEST_EXAMPLES.dataset] }),
          ...common,
          ...errorResponses('invalid_request'),
        },
      },
    },
    async (request, reply) => {
      const snapshotId = await store.snapshotId();
      if (caching.answerNotModified(request, reply, snapshotId)) return reply;
      return store.dataset();
    },
  );
}
