import type { PlatformApp } from '../../../platform/platform-app.js';
import { ApiError, errorResponses } from '../../../platform/error-registry.js';
import { componentRef } from '../../../platform/openapi-components.js';
import { NoQuery, ServiceRequest, ServiceRequestIdParams } from '../schemas.js';
import { REQUEST_EXAMPLES } from '../openapi-examples.js';
import { JSON_TYPE, common, integerTextCheck, secured, type RequestRouteDependencies } from './route-parts.js';

/** GET /v1/service-requests/:id: one request by its id. */
export function registerOneRequestRoute(app: PlatformApp, { store, texts, caching }: RequestRouteDependencies): void {
  app.get(
    '/v1/service-requests/:id',
    {
      ...secured,
      preValidation: integerTextCheck('params', 'id'),
      schema: {
        tags: ['service-requests'],
        operationId: 'getServiceRequest',
        summary: 'One service request',
        description: 'The request with this id. A non-integer id answers 422 invalid_request (fields id); an unknown id 404 not_found.',
        params: ServiceRequestIdParams,
        querystring: NoQuery,
        response: {
          200: componentRef(ServiceRequest, { description: 'The service request', examples: [REQUEST_EXAMPLES.serviceRequest] }),
          ...common,
          ...errorResponses('not_found', 'invalid_request'),
        },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const snapshotId = await store.snapshotId();
      const [found] = Number.isSafeInteger(id) ? await texts.textsOf([id]) : [];
      if (found === undefined) throw new ApiError('not_found', { message: 'No service request with this id' });
      if (caching.answerNotModified(request, reply, snapshotId)) return reply;
      return reply.type(JSON_TYPE).send(found.text);
    },
  );
}
