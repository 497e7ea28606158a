import type { PlatformApp } from '../../../platform/platform-app.js';
import { errorResponses } from '../../../platform/error-registry.js';
import { componentRef } from '../../../platform/openapi-components.js';
import { NO_FILTERS, readListFilters } from '../list-filters.js';
import { ComplaintTypeList, ComplaintTypesQuery, FacetList, FacetQuery } from '../schemas.js';
import { REQUEST_EXAMPLES } from '../openapi-examples.js';
import { common, filteredAnswers, readFilters, repeatableParameters, type RequestRouteDependencies, type RouteBudget } from './route-parts.js';

/** GET /v1/complaint-types and GET /v1/facets: the values of a field with their counts. */
export function registerFacetRoutes(app: PlatformApp, { store, caching }: RequestRouteDependencies, rowWalks: RouteBudget): void {
  app.get(
    '/v1/complaint-types',
    {
      ...rowWalks,
      preValidation: repeatableParameters,
      schema: {
        tags: ['service-requests'],
        operationId: 'listComplaintTypes',
        summary: 'Complaint types with their counts',
        description:
          'Every complaint type of the snapshot (or of the given boroughs, or of all but them: the borough and not_borough filters of GET /v1/service-requests) with its number of requests, largest first, then by name.',
        querystring: ComplaintTypesQuery,
        response: {
          200: componentRef(ComplaintTypeList, { description: 'The complaint types with their counts', examples: [REQUEST_EXAMPLES.complaintTypes] }),
          ...common,
          ...errorResponses('invalid_request'),
        },
      },
    },
    async (request, reply) => {
      const filters = readListFilters(request.query);
      const snapshotId = await store.snapshotId();
      if (caching.answerNotModified(request, reply, snapshotId)) return reply;
      return caching.sendKept(reply, async () => {
        if (filters === NO_FILTERS) return { items: await store.complaintTypeCounts() };
        const counts = await store.facet('complaint_type', filters);
        return { items: counts.flatMap(({ value, count }) => (typeof value === 'string' ? [{ complaint_type: value, count }] : [])) };
      });
    },
  );

  app.get(
    '/v1/facets',
    {
      ...rowWalks,
      preValidation: repeatableParameters,
      schema: {
        tags: ['service-requests'],
        operationId: 'listFacets',
        summary: 'Values of a field with their counts',
        description:
          'Each value of `field` among the requests matching the filters of GET /v1/service-requests, with its count, largest first, then by value; the requests without a value are counted as null (last among equal counts).',
        querystring: FacetQuery,
        response: filteredAnswers(componentRef(FacetList, { description: 'The values of the field with their counts', examples: [REQUEST_EXAMPLES.facets] })),
      },
    },
    async (request, reply) => {
      const filters = await readFilters(request.query, store);
      const snapshotId = await store.snapshotId();
      if (caching.answerNotModified(request, reply, snapshotId)) return reply;
      const field = request.query.field;
      return caching.sendKept(reply, async () => ({ field, items: await store.facet(field, filters) }));
    },
  );
}
