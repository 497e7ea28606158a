import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { PlatformApp } from '../../platform/platform-app.js';
import { ApiError, errorResponses } from '../../platform/error-registry.js';
import { invalidRequestMessage } from '../../platform/errors.js';
import { registerHealthRoutes } from '../../platform/health.js';
import { cutAnswerAfter } from '../../platform/long-answers.js';
import { addVary } from '../../platform/vary.js';
import { componentRef } from '../../platform/openapi-components.js';
import { WorkBudget } from '../../platform/work-budget.js';
import { CURSOR_NO_LONGER_ACCEPTED, CURSOR_NOT_VALID, CURSOR_OTHER_FILTERS, type CursorCodec } from './cursor.js';
import type { FrozenSnapshotCaching } from './frozen-caching.js';
import { exportStream } from './export-stream.js';
import { NO_FILTERS, readListFilters, type ListFilters } from './list-filters.js';
import { bucketNumbers, isoWeekOf, monthOf, statDays } from './period-stats.js';
import { chooseFormat, MEDIA_TYPES } from './row-formats.js';
import {
  ComplaintTypeList,
  ComplaintTypesQuery,
  CountAnswer,
  DailyStatList,
  Dataset,
  EXPORT_FORMATS,
  ExportQuery,
  FacetList,
  FacetQuery,
  FilterQuery,
  GeoJsonPage,
  LIMIT_DEFAULT,
  LIST_FORMATS,
  MonthlyStatList,
  NoQuery,
  REPEATABLE_FILTERS,
  ServiceRequest,
  ServiceRequestIdParams,
  ServiceRequestListQuery,
  ServiceRequestPage,
  WeeklyStatList,
} from './schemas.js';
import type { DailyStatRecord, ServiceRequestStore } from './service-request-store.js';
import { pageText, type ServiceRequestTexts } from './row-texts.js';
import { REQUEST_EXAMPLES } from './openapi-examples.js';

const secured = { config: { requiresApiKey: true } } as const;

const DIGITS = /^-?[0-9]+$/;

/**
 * Query strings and path parameters are coerced by the platform's validator, which reads ` `, `1e3`
 * or `0x10` as numbers. Integers are written in digits only: checked on the raw text, before validation.
 */
function integerTextCheck(part: 'params' | 'query', name: string) {
  return (request: { params: unknown; query: unknown }, _reply: unknown, done: (error?: Error) => void): void => {
    const raw = (request[part] as Record<string, unknown> | undefined)?.[name];
    if (typeof raw === 'string' && !DIGITS.test(raw)) {
      done(new ApiError('invalid_request', { fields: [name], message: invalidRequestMessage(`${name} must be an integer`) }));
      return;
    }
    done();
  };
}

/**
 * preValidation: a repeatable filter given once arrives as text; it is made a list of one, so that
 * the schema validates every value the same way (`borough=queens` and `borough=queens&borough=bronx`).
 */
function repeatableParameters(request: { query: unknown }, _reply: unknown, done: () => void): void {
  listRepeatableParameters(request.query as Record<string, unknown> | null | undefined);
  done();
}

function listRepeatableParameters(query: Record<string, unknown> | null | undefined): void {
  if (query === undefined || query === null) return;
  for (const name of REPEATABLE_FILTERS) {
    const value = query[name];
    if (typeof value === 'string') query[name] = [value];
  }
}

/** The URL of the next page: the request's own path and query with the cursor replaced. */
function nextPageUrl(url: string, cursor: string): string {
  const [path, search = ''] = url.split('?', 2) as [string, string | undefined];
  const parameters = new URLSearchParams(search);
  parameters.set('cursor', cursor);
  return `${path}?${parameters.toString()}`;
}

/** The table of precomputed daily numbers answers a filtering by at most one borough and one complaint type. */
function precomputedScope(filters: ListFilters): { borough: string | null; complaint_type: string | null } | null {
  const single = (values: ListFilters['borough']): string | null | undefined => {
    if (values === null) return null;
    return values.length === 1 && typeof values[0] === 'string' ? values[0] : undefined;
  };
  const borough = single(filters.borough);
  const complaintType = single(filters.complaint_type);
  if (borough === undefined || complaintType === undefined) return null;
  const others = { ...filters, borough: null, complaint_type: null };
  const unfiltered = (Object.keys(NO_FILTERS) as (keyof ListFilters)[]).every((name) => others[name] === null);
  return unfiltered ? { borough, complaint_type: complaintType } : null;
}

/**
 * Repeated filters make long URLs possible (50 values of 200 characters each): a request line and
 * headers over Node's 16 KiB are answered 431 by the platform before the route is found.
 */
const tooLong = errorResponses('request_header_too_large');

const filterErrors = errorResponses('invalid_request', 'invalid_range');

const common = {
  304: Type.Null({ description: 'Not Modified: If-None-Match matches the ETag; no body' }),
  // A store's DatabaseUnavailableError reaches the platform's error handler: 503 database_unavailable.
  ...errorResponses('unauthorized', 'database_unavailable'),
};

/** The answers of a route that takes the filters of the list (count, facets, statistics): `answer` is its 200. */
function filteredAnswers<T>(answer: T) {
  return { 200: answer, ...common, ...tooLong, ...filterErrors };
}

const JSON_TYPE = 'application/json; charset=utf-8';

const csvText = Type.String({
  description:
    'RFC 4180 CSV with a header row. Safe for spreadsheets: a text cell that begins with =, +, -, @, TAB or CR is written with a ' +
    "leading ' (OWASP's rule against CSV injection), so that it is shown as text, never run as a formula; numbers (a negative one " +
    'included), dates and ids are written unchanged.',
});

export interface RequestRouteDependencies {
  store: ServiceRequestStore;
  texts: ServiceRequestTexts;
  cursors: CursorCodec;
  caching: FrozenSnapshotCaching;
  /** EXPORT_MAX_SECONDS in milliseconds: an export still being sent then is cut. */
  exportMaxMs: number;
}

export function registerServiceRequestRoutes(app: PlatformApp, { store, texts, cursors, caching, exportMaxMs }: RequestRouteDependencies): void {
  // The work budgets (docs/reliability.md, "Work budgets"): pages assemble up to 1000 rows (and may
  // compress them); exports stream for seconds; counts, facets and statistics walk the matching rows.
  const budgeted = (workBudget: WorkBudget) => ({ config: { requiresApiKey: true, workBudget } }) as const;
  const pages = budgeted(new WorkBudget('pages', { concurrency: 4, queue: 64, maxWaitMs: 2_000 }));
  const exports = budgeted(new WorkBudget('exports', { concurrency: 2, queue: 8, maxWaitMs: 10_000 }));
  const rowWalks = budgeted(new WorkBudget('row walks', { concurrency: 1, queue: 32, maxWaitMs: 2_000 }));
  registerHealthRoutes(app, {
    unavailableCode: 'database_unavailable',
    check: () => store.ping(),
  });

  app.get(
    '/v1/service-requests',
    {
      ...pages,
      preValidation: [repeatableParameters, integerTextCheck('query', 'limit')],
      schema: {
        tags: ['service-requests'],
        operationId: 'listServiceRequests',
        summary: 'List service requests',
        description: [
          'Requests matching every given filter (AND), ordered by created_at then id, in pages of `limit`.',
          'Send `next_cursor` back as `cursor` with the same filter values for the next page; `limit` may change between pages.',
          'next_cursor is null on the last page, and an empty last page is never returned. A repeatable filter given several times',
          'matches any of its values; the value `none` of borough, complaint_type and channel selects the requests without one.',
          'Unknown parameters or a bad value answer 422 invalid_request naming the parameter.',
          'Formats: JSON (the default), CSV (`text/csv`, RFC 4180, a header row, null as an empty field, CRLF line ends; the next page',
          'in a `Link: <...>; rel="next"` header) or GeoJSON (`application/geo+json`, a FeatureCollection of Points at [longitude, latitude],',
          'a null geometry for a request without a location, every field in properties, next_cursor as a member and in a Link header),',
          'chosen by the `format` parameter or else by the Accept header. The cursor is the same in every format.',
          `A cursor refused answers 422 invalid_cursor (fields cursor) with one of the messages "${CURSOR_NOT_VALID}",`,
          `"${CURSOR_OTHER_FILTERS}" or "${CURSOR_NO_LONGER_ACCEPTED}".`,
        ].join(' '),
        querystring: ServiceRequestListQuery,
        response: {
          200: {
            description: 'A page of service requests',
            content: {
              'application/json': { schema: componentRef(ServiceRequestPage), example: REQUEST_EXAMPLES.page },
              'text/csv': { schema: csvText, example: REQUEST_EXAMPLES.csvPage },
              'application/geo+json': { schema: componentRef(GeoJsonPage), example: REQUEST_EXAMPLES.geojsonPage },
            },
          },
          ...common,
          ...tooLong,
          ...errorResponses('invalid_request', 'invalid_range', 'invalid_cursor'),
        },
      },
    },
    async (request, reply) => {
      const { limit = LIMIT_DEFAULT, cursor } = request.query;
      const format = chooseFormat(request.query.format, request.headers.accept, LIST_FORMATS, 'json');
      const filters = readListFilters(request.query);
      const snapshotId = await store.snapshotId();
      const after = cursor === undefined ? null : cursors.decode(cursor, filters, snapshotId);
      addVary(reply, 'Accept');
      if (caching.answerNotModified(request, reply, snapshotId, format === 'json' ? '' : format)) return reply;
      const ids = await store.listIds({ filters, after, fetch: limit + 1 });
      const more = ids.length > limit;
      const items = await texts.textsOf(more ? ids.slice(0, limit) : ids);
      const last = items[items.length - 1];
      const nextCursor = more && last ? cursors.encode(last.position, filters, snapshotId) : null;
      // The body is assembled from the rows' texts (the schema above describes it).
      if (format === 'json') return reply.type(JSON_TYPE).send(pageText(items, nextCursor));
      if (nextCursor !== null) reply.header('Link', `<${nextPageUrl(request.url, nextCursor)}>; rel="next"`);
      if (format === 'csv') return reply.type(MEDIA_TYPES.csv).send(texts.csvPage(items));
      return reply.type(MEDIA_TYPES.geojson).send(texts.geojsonPage(items, nextCursor));
    },
  );

  app.get(
    '/v1/service-requests/count',
    {
      ...rowWalks,
      preValidation: repeatableParameters,
      schema: {
        tags: ['service-requests'],
        operationId: 'countServiceRequests',
        summary: 'Count service requests',
        description: 'The number of requests matching every given filter; the filters of GET /v1/service-requests.',
        querystring: FilterQuery,
        response: filteredAnswers(componentRef(CountAnswer, { description: 'The number of matching requests', examples: [REQUEST_EXAMPLES.count] })),
      },
    },
    async (request, reply) => {
      const filters = readListFilters(request.query);
      const snapshotId = await store.snapshotId();
      if (caching.answerNotModified(request, reply, snapshotId)) return reply;
      return { count: await store.count(filters) };
    },
  );

  app.get(
    '/v1/exports/service-requests',
    {
      ...exports,
      preValidation: repeatableParameters,
      schema: {
        tags: ['service-requests'],
        operationId: 'exportServiceRequests',
        summary: 'Export every matching service request',
        description: [
          'Every request matching the filters of GET /v1/service-requests, in list order, in one streamed answer: CSV (the default;',
          'RFC 4180, a header row) or GeoJSON (a FeatureCollection), chosen by the `format` parameter or else by the Accept header.',
          'The answer is sent as it is read, with a Content-Disposition file name; a database failure after the first bytes ends',
          'the answer early (the file is then cut short: compare its rows with GET /v1/service-requests/count). An export still being',
          'sent EXPORT_MAX_SECONDS after the request (300 by default) is cut the same way: the chunked answer ends without its last chunk.',
        ].join(' '),
        querystring: ExportQuery,
        response: {
          200: {
            description: 'Every matching request',
            content: {
              'text/csv': { schema: csvText, example: REQUEST_EXAMPLES.csvExport },
              'application/geo+json': { schema: componentRef(GeoJsonPage), example: REQUEST_EXAMPLES.geojsonExport },
            },
          },
          ...common,
          ...tooLong,
          ...filterErrors,
        },
      },
    },
    async (request, reply) => {
      const format = chooseFormat(request.query.format, request.headers.accept, EXPORT_FORMATS, 'csv');
      const filters = readListFilters(request.query);
      const snapshotId = await store.snapshotId();
      addVary(reply, 'Accept');
      if (caching.answerNotModified(request, reply, snapshotId, format)) return reply;
      const extension = format === 'csv' ? 'csv' : 'geojson';
      cutAnswerAfter(reply, exportMaxMs);
      return reply
        .type(MEDIA_TYPES[format])
        .header('Content-Disposition', `attachment; filename="service-requests.${extension}"`)
        .send(exportStream(store, filters, format));
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
      ...rowWalks,
      preValidation: repeatableParameters,
      schema: {
        tags: ['service-requests'],
        operationId: 'listComplaintTypes',
        summary: 'Complaint types with their counts',
        description:
          'Every complaint type of the snapshot (or of the given boroughs: the borough filter of GET /v1/service-requests) with its number of requests, largest first, then by name.',
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
      if (filters.borough === null) return { items: await store.complaintTypeCounts() };
      const counts = await store.facet('complaint_type', filters);
      return { items: counts.flatMap(({ value, count }) => (typeof value === 'string' ? [{ complaint_type: value, count }] : [])) };
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
      const filters = readListFilters(request.query);
      const snapshotId = await store.snapshotId();
      if (caching.answerNotModified(request, reply, snapshotId)) return reply;
      const field = request.query.field;
      return { field, items: await store.facet(field, filters) };
    },
  );

  /** The numbers per day, ISO week or month of the matching requests, over the days the filters leave. */
  const periodNumbers = async (filters: ListFilters, keyOf: (day: string) => string) => {
    const dataset = await store.dataset();
    const period = { start: dataset.period.start, end: dataset.period.end, snapshotDate: dataset.snapshot_date };
    const openings = await store.openingsByDay(filters);
    return bucketNumbers(statDays(period, filters), openings, period.snapshotDate, keyOf);
  };
  const statsDescription = (unit: string): string =>
    [
      `One row per ${unit} of the snapshot period (narrowed by created_from and created_to to the days they touch): requests opened,`,
      'closed within 14 days (days_to_close <= 14), their share, and the median days to close of the requests opened then.',
      'The filters of GET /v1/service-requests (AND). `complete` is false while the numbers can still change: a request opened on a',
      'day is closed within 14 days if it closes by the end of day + 14, so the last two weeks before the snapshot date are incomplete',
      '(their share closed in time is low only because the snapshot was taken before their window ended).',
    ].join(' ');
  const statsRoute = (
    path: string,
    unit: string,
    operation: { operationId: string; summary: string; answer: unknown },
    build: (filters: ListFilters) => Promise<unknown[]>,
  ) =>
    app.get(
      path,
      {
        ...rowWalks,
        preValidation: repeatableParameters,
        schema: {
          tags: ['statistics'],
          operationId: operation.operationId,
          summary: operation.summary,
          description: statsDescription(unit),
          querystring: FilterQuery,
          response: filteredAnswers(operation.answer as never),
        },
      },
      async (request: FastifyRequest, reply: FastifyReply) => {
        const filters = readListFilters(request.query as never);
        const snapshotId = await store.snapshotId();
        if (caching.answerNotModified(request, reply, snapshotId)) return reply;
        return { items: await build(filters) };
      },
    );

  const daily = { operationId: 'getDailyStats', summary: 'Daily numbers', answer: componentRef(DailyStatList, { description: 'The daily numbers', examples: [REQUEST_EXAMPLES.dailyStats] }) };
  statsRoute('/v1/stats/daily', 'day', daily, async (filters): Promise<DailyStatRecord[]> => {
    const scope = precomputedScope(filters);
    // The snapshot's precomputed table when it has the numbers; else counted from the matching rows, the same way.
    if (scope !== null) return store.dailyStats(scope);
    const rows = await periodNumbers(filters, (day) => day);
    return rows.map(({ key, start: _start, end: _end, ...numbers }) => ({ date: key, ...numbers }));
  });
  const weekly = { operationId: 'getWeeklyStats', summary: 'Weekly numbers', answer: componentRef(WeeklyStatList, { description: 'The numbers per ISO week', examples: [REQUEST_EXAMPLES.weeklyStats] }) };
  statsRoute('/v1/stats/weekly', 'ISO week (Monday to Sunday)', weekly, async (filters) =>
    (await periodNumbers(filters, isoWeekOf)).map(({ key, ...numbers }) => ({ week: key, ...numbers })),
  );
  const monthly = { operationId: 'getMonthlyStats', summary: 'Monthly numbers', answer: componentRef(MonthlyStatList, { description: 'The numbers per month', examples: [REQUEST_EXAMPLES.monthlyStats] }) };
  statsRoute('/v1/stats/monthly', 'month', monthly, async (filters) =>
    (await periodNumbers(filters, monthOf)).map(({ key, ...numbers }) => ({ month: key, ...numbers })),
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
