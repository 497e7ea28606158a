import { Type } from 'typebox';
import type { PlatformApp } from '../../platform/app.js';
import { ApiError, errorResponses } from '../../platform/error-registry.js';
import { invalidRequestMessage } from '../../platform/errors.js';
import { registerHealthRoutes } from '../../platform/health.js';
import type { CursorCodec } from './cursor.js';
import type { FrozenSnapshotCaching } from './frozen-caching.js';
import { readListFilters } from './list-filters.js';
import {
  ComplaintTypeList,
  DailyStatList,
  DailyStatsQuery,
  Dataset,
  LIMIT_DEFAULT,
  NoQuery,
  ServiceRequest,
  ServiceRequestIdParams,
  ServiceRequestListQuery,
  ServiceRequestPage,
} from './schemas.js';
import type { ServiceRequestStore } from './service-request-store.js';
import { pageText, type ServiceRequestTexts } from './row-texts.js';

const secured = { config: { requiresApiKey: true } } as const;

const DIGITS = /^-?[0-9]+$/;

/**
 * Query strings and path parameters are coerced by the platform's validator, which reads ` `, `1e3`
 * or `0x10` as numbers. Integers are written in digits only: checked on the raw text, before validation.
 */
function integerTextCheck(part: 'params' | 'query', name: string) {
  return async (request: { params: unknown; query: unknown }): Promise<void> => {
    const raw = (request[part] as Record<string, unknown> | undefined)?.[name];
    if (typeof raw === 'string' && !DIGITS.test(raw)) {
      throw new ApiError('invalid_request', { fields: [name], message: invalidRequestMessage(`${name} must be an integer`) });
    }
  };
}

const common = {
  304: Type.Null({ description: 'Not Modified: If-None-Match matches the ETag; no body' }),
  // A store's DatabaseUnavailableError reaches the platform's error handler: 503 database_unavailable.
  ...errorResponses('unauthorized', 'database_unavailable'),
};

const JSON_TYPE = 'application/json; charset=utf-8';

export interface RequestRouteDependencies {
  store: ServiceRequestStore;
  texts: ServiceRequestTexts;
  cursors: CursorCodec;
  caching: FrozenSnapshotCaching;
}

export function registerServiceRequestRoutes(app: PlatformApp, { store, texts, cursors, caching }: RequestRouteDependencies): void {
  registerHealthRoutes(app, {
    unavailableCode: 'database_unavailable',
    check: () => store.ping(),
  });

  app.get(
    '/v1/service-requests',
    {
      ...secured,
      preValidation: integerTextCheck('query', 'limit'),
      schema: {
        tags: ['service-requests'],
        summary: 'List service requests',
        description: [
          'Requests matching every given filter (AND), ordered by created_at then id, in pages of `limit`.',
          'Send `next_cursor` back as `cursor` with the same filter values for the next page; `limit` may change between pages.',
          'next_cursor is null on the last page, and an empty last page is never returned. Other parameters, a repeated parameter,',
          'or a bad value answer 422 invalid_request naming the parameter.',
        ].join(' '),
        security: [{ apiKey: [] }],
        querystring: ServiceRequestListQuery,
        response: {
          200: ServiceRequestPage,
          ...common,
          ...errorResponses('invalid_request', 'invalid_range', 'invalid_cursor'),
        },
      },
    },
    async (request, reply) => {
      const { limit = LIMIT_DEFAULT, cursor } = request.query;
      const filters = readListFilters(request.query);
      const snapshotId = await store.snapshotId();
      const after = cursor === undefined ? null : cursors.decode(cursor, filters, snapshotId);
      if (caching.answerNotModified(request, reply, snapshotId)) return reply;
      const ids = await store.listIds({ filters, after, fetch: limit + 1 });
      const more = ids.length > limit;
      const items = await texts.textsOf(more ? ids.slice(0, limit) : ids);
      const last = items[items.length - 1];
      const nextCursor = more && last ? cursors.encode(last.position, filters, snapshotId) : null;
      // The body is assembled from the rows' JSON texts (the schema above describes it).
      return reply.type(JSON_TYPE).send(pageText(items, nextCursor));
    },
  );

  app.get(
    '/v1/service-requests/:id',
    {
      ...secured,
      preValidation: integerTextCheck('params', 'id'),
      schema: {
        tags: ['service-requests'],
        summary: 'One service request',
        description: 'The request with this id. A non-integer id answers 422 invalid_request (fields id); an unknown id 404 not_found.',
        security: [{ apiKey: [] }],
        params: ServiceRequestIdParams,
        querystring: NoQuery,
        response: {
          200: ServiceRequest,
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

  app.get(
    '/v1/complaint-types',
    {
      ...secured,
      schema: {
        tags: ['service-requests'],
        summary: 'Complaint types with their counts',
        description: 'Every complaint type of the snapshot with its number of requests, largest first, then by name. No parameters.',
        security: [{ apiKey: [] }],
        querystring: NoQuery,
        response: { 200: ComplaintTypeList, ...common, ...errorResponses('invalid_request') },
      },
    },
    async (request, reply) => {
      const snapshotId = await store.snapshotId();
      if (caching.answerNotModified(request, reply, snapshotId)) return reply;
      return { items: await store.complaintTypeCounts() };
    },
  );

  app.get(
    '/v1/stats/daily',
    {
      ...secured,
      schema: {
        tags: ['statistics'],
        summary: 'Daily numbers',
        description:
          'One row per day of the snapshot period: requests opened, closed within 14 days (days_to_close <= 14), their share, and the median days to close of the requests opened that day. Optional filters borough and complaint_type (AND).',
        security: [{ apiKey: [] }],
        querystring: DailyStatsQuery,
        response: {
          200: DailyStatList,
          ...common,
          ...errorResponses('invalid_request'),
        },
      },
    },
    async (request, reply) => {
      const snapshotId = await store.snapshotId();
      if (caching.answerNotModified(request, reply, snapshotId)) return reply;
      const scope = { borough: request.query.borough ?? null, complaint_type: request.query.complaint_type ?? null };
      return { items: await store.dailyStats(scope) };
    },
  );

  app.get(
    '/v1/dataset',
    {
      ...secured,
      schema: {
        tags: ['statistics'],
        summary: 'The snapshot',
        description: 'Source, snapshot date and id, row count, created_at range, and the cleaning rules with what each removed.',
        security: [{ apiKey: [] }],
        querystring: NoQuery,
        response: { 200: Dataset, ...common, ...errorResponses('invalid_request') },
      },
    },
    async (request, reply) => {
      const snapshotId = await store.snapshotId();
      if (caching.answerNotModified(request, reply, snapshotId)) return reply;
      return store.dataset();
    },
  );
}
