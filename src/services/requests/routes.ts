import type { FastifyBaseLogger } from 'fastify';
import { Type } from 'typebox';
import type { PlatformApp } from '../../platform/app.js';
import { ApiError, errorResponse, invalidRequest, notFound, unavailable } from '../../platform/errors.js';
import { registerHealthRoutes } from '../../platform/health.js';
import { componentRef } from '../../platform/openapi-components.js';
import { CURSOR_NO_LONGER_ACCEPTED, CURSOR_NOT_VALID, CURSOR_OTHER_FILTERS, type CursorCodec } from './cursor.js';
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
import { DatabaseUnavailableError, type ServiceRequestStore } from './service-request-store.js';
import { pageText, type ServiceRequestTexts } from './row-texts.js';
import { REQUEST_EXAMPLES } from './openapi-examples.js';

const DATABASE_UNAVAILABLE = 'database_unavailable';
const DATABASE_UNAVAILABLE_MESSAGE = 'The database cannot be read';

function databaseUnavailable(): ApiError {
  return unavailable(DATABASE_UNAVAILABLE, DATABASE_UNAVAILABLE_MESSAGE);
}

/** Runs a read of the store; a database failure becomes 503 database_unavailable (logged, never 500). */
async function fromDatabase<T>(log: FastifyBaseLogger, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof DatabaseUnavailableError) {
      log.warn({ reason: error.message }, 'database unavailable');
      throw databaseUnavailable();
    }
    throw error;
  }
}

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
      throw invalidRequest([name], `The request is not valid: ${name} must be integer`);
    }
  };
}

const common = {
  304: Type.Null({ description: 'Not Modified: If-None-Match matches the ETag; no body' }),
  401: errorResponse('Missing or invalid API key (code unauthorized)'),
  503: errorResponse('The database cannot be read (code database_unavailable)'),
};

const unknownParameter = errorResponse('An unknown query parameter (code invalid_request); fields names it');

const JSON_TYPE = 'application/json; charset=utf-8';

export interface RequestRouteDependencies {
  store: ServiceRequestStore;
  texts: ServiceRequestTexts;
  cursors: CursorCodec;
  caching: FrozenSnapshotCaching;
}

export function registerServiceRequestRoutes(app: PlatformApp, { store, texts, cursors, caching }: RequestRouteDependencies): void {
  registerHealthRoutes(app, {
    unavailableDescription: 'The database cannot be read (code database_unavailable)',
    async check() {
      try {
        await store.ping();
      } catch {
        throw databaseUnavailable();
      }
    },
  });

  app.get(
    '/v1/service-requests',
    {
      ...secured,
      preValidation: integerTextCheck('query', 'limit'),
      schema: {
        tags: ['service-requests'],
        operationId: 'listServiceRequests',
        summary: 'List service requests',
        description: [
          'Requests matching every given filter (AND), ordered by created_at then id, in pages of `limit`.',
          'Send `next_cursor` back as `cursor` with the same filter values for the next page; `limit` may change between pages.',
          'next_cursor is null on the last page, and an empty last page is never returned. Other parameters, a repeated parameter,',
          'or a bad value answer 422 invalid_request naming the parameter.',
        ].join(' '),
        querystring: ServiceRequestListQuery,
        response: {
          200: componentRef(ServiceRequestPage, { description: 'A page of service requests', examples: [REQUEST_EXAMPLES.page] }),
          ...common,
          422: errorResponse(
            `invalid_request: a bad or unknown parameter (fields names it); invalid_range: created_from not before created_to (fields created_from, created_to); invalid_cursor: "${CURSOR_NOT_VALID}", "${CURSOR_OTHER_FILTERS}" or "${CURSOR_NO_LONGER_ACCEPTED}" (fields cursor)`,
          ),
        },
      },
    },
    async (request, reply) => {
      const { limit = LIMIT_DEFAULT, cursor } = request.query;
      const filters = readListFilters(request.query);
      const snapshotId = await fromDatabase(request.log, () => store.snapshotId());
      const after = cursor === undefined ? null : cursors.decode(cursor, filters, snapshotId);
      if (caching.answerNotModified(request, reply, snapshotId)) return reply;
      const ids = await fromDatabase(request.log, () => store.listIds({ filters, after, fetch: limit + 1 }));
      const more = ids.length > limit;
      const items = await fromDatabase(request.log, () => texts.textsOf(more ? ids.slice(0, limit) : ids));
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
        operationId: 'getServiceRequest',
        summary: 'One service request',
        description: 'The request with this id. A non-integer id answers 422 invalid_request (fields id); an unknown id 404 not_found.',
        params: ServiceRequestIdParams,
        querystring: NoQuery,
        response: {
          200: componentRef(ServiceRequest, { description: 'The service request', examples: [REQUEST_EXAMPLES.serviceRequest] }),
          ...common,
          404: errorResponse('No request with this id (code not_found)'),
          422: errorResponse('The id is not an integer, or an unknown query parameter (code invalid_request; fields id or the parameter)'),
        },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const snapshotId = await fromDatabase(request.log, () => store.snapshotId());
      const [found] = Number.isSafeInteger(id) ? await fromDatabase(request.log, () => texts.textsOf([id])) : [];
      if (found === undefined) throw notFound('No service request with this id');
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
        operationId: 'listComplaintTypes',
        summary: 'Complaint types with their counts',
        description: 'Every complaint type of the snapshot with its number of requests, largest first, then by name. No parameters.',
        querystring: NoQuery,
        response: {
          200: componentRef(ComplaintTypeList, { description: 'The complaint types with their counts', examples: [REQUEST_EXAMPLES.complaintTypes] }),
          ...common,
          422: unknownParameter,
        },
      },
    },
    async (request, reply) => {
      const snapshotId = await fromDatabase(request.log, () => store.snapshotId());
      if (caching.answerNotModified(request, reply, snapshotId)) return reply;
      return { items: await fromDatabase(request.log, () => store.complaintTypeCounts()) };
    },
  );

  app.get(
    '/v1/stats/daily',
    {
      ...secured,
      schema: {
        tags: ['statistics'],
        operationId: 'getDailyStats',
        summary: 'Daily numbers',
        description:
          'One row per day of the snapshot period: requests opened, closed within 14 days (days_to_close <= 14), their share, and the median days to close of the requests opened that day. Optional filters borough and complaint_type (AND).',
        querystring: DailyStatsQuery,
        response: {
          200: componentRef(DailyStatList, { description: 'The daily numbers', examples: [REQUEST_EXAMPLES.dailyStats] }),
          ...common,
          422: errorResponse('A bad or unknown parameter (code invalid_request); fields names it'),
        },
      },
    },
    async (request, reply) => {
      const snapshotId = await fromDatabase(request.log, () => store.snapshotId());
      if (caching.answerNotModified(request, reply, snapshotId)) return reply;
      const scope = { borough: request.query.borough ?? null, complaint_type: request.query.complaint_type ?? null };
      return { items: await fromDatabase(request.log, () => store.dailyStats(scope)) };
    },
  );

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
          422: unknownParameter,
        },
      },
    },
    async (request, reply) => {
      const snapshotId = await fromDatabase(request.log, () => store.snapshotId());
      if (caching.answerNotModified(request, reply, snapshotId)) return reply;
      return fromDatabase(request.log, () => store.dataset());
    },
  );
}
