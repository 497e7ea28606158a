import type { FastifyReply, FastifyRequest } from 'fastify';
import type { PlatformApp } from '../../../platform/platform-app.js';
import { errorResponses } from '../../../platform/error-registry.js';
import { componentRef } from '../../../platform/openapi-components.js';
import { addVary } from '../../../platform/vary.js';
import { CURSOR_NO_LONGER_ACCEPTED, CURSOR_NOT_VALID, CURSOR_OTHER_FILTERS, CURSOR_OTHER_SNAPSHOT } from '../cursor.js';
import type { ListFilters } from '../list-filters.js';
import { chooseFormat, MEDIA_TYPES, type RowFormat } from '../answers/row-formats.js';
import { pageText, type RequestText } from '../answers/serialized-rows.js';
import { DatabaseUnavailableError } from '../store/service-request-store.js';
import { CountAnswer, FilterQuery, GeoJsonPage, LIMIT_DEFAULT, LIST_FORMATS, ServiceRequestListQuery, ServiceRequestPage } from '../schemas.js';
import { REQUEST_EXAMPLES } from '../openapi-examples.js';
import { JSON_TYPE, common, csvText, filteredAnswers, integerTextCheck, readFilters, repeatableParameters, tooLong, type RequestRouteDependencies, type RouteBudget } from './route-parts.js';

/** Attempts at a list page while refreshes land during it (each is a whole snapshot switch: far apart in practice). */
const PAGE_ATTEMPTS_ACROSS_REFRESHES = 3;

/** The URL of the next page: the request's own path and query with the cursor replaced. */
function nextPageUrl(url: string, cursor: string): string {
  const [path, search = ''] = url.split('?', 2) as [string, string | undefined];
  const parameters = new URLSearchParams(search);
  parameters.set('cursor', cursor);
  return `${path}?${parameters.toString()}`;
}

const LIST_DESCRIPTION = [
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
  `"${CURSOR_OTHER_FILTERS}", "${CURSOR_OTHER_SNAPSHOT}" (a refresh replaced the snapshot it was made on) or "${CURSOR_NO_LONGER_ACCEPTED}".`,
].join(' ');

/** A list page's rows, read on one snapshot, and whether more rows follow. */
interface ListPage {
  snapshotId: string;
  items: RequestText[];
  more: boolean;
}

/** What a list page asks for: its filters, the cursor's text, the page size and the chosen format. */
interface PageRequest {
  filters: ListFilters;
  cursor: string | undefined;
  limit: number;
  format: RowFormat;
}

/**
 * A page is two reads (its ids, then their rows); a refresh that lands between them would mix two
 * snapshots. The snapshot id is the same before and after only when both read one snapshot;
 * otherwise the page is built again on the new one (where an old cursor is refused). Null: the
 * client's copy is current, answered 304.
 */
async function pageOnOneSnapshot(
  { store, texts, cursors, caching }: RequestRouteDependencies,
  request: FastifyRequest,
  reply: FastifyReply,
  { filters, cursor, limit, format }: PageRequest,
): Promise<ListPage | null> {
  for (let attempt = 0; ; attempt += 1) {
    const snapshotId = await store.snapshotId();
    const after = cursor === undefined ? null : cursors.decode(cursor, filters, snapshotId);
    if (caching.answerNotModified(request, reply, snapshotId, format === 'json' ? '' : format)) return null;
    const ids = await store.listIds({ filters, after, fetch: limit + 1 });
    const more = ids.length > limit;
    const items = await texts.textsOf(more ? ids.slice(0, limit) : ids);
    if ((await store.snapshotId()) === snapshotId) return { snapshotId, items, more };
    if (attempt === PAGE_ATTEMPTS_ACROSS_REFRESHES - 1) throw new DatabaseUnavailableError(new Error('the snapshot changed during every attempt at the page'));
  }
}

/** GET /v1/service-requests: a page, in JSON, CSV or GeoJSON. */
function registerListRoute(app: PlatformApp, dependencies: RequestRouteDependencies, pages: RouteBudget): void {
  const { texts, cursors } = dependencies;
  app.get(
    '/v1/service-requests',
    {
      ...pages,
      preValidation: [repeatableParameters, integerTextCheck('query', 'limit')],
      schema: {
        tags: ['service-requests'],
        operationId: 'listServiceRequests',
        summary: 'List service requests',
        description: LIST_DESCRIPTION,
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
      const filters = await readFilters(request.query, dependencies.store);
      addVary(reply, 'Accept');
      const page = await pageOnOneSnapshot(dependencies, request, reply, { filters, cursor, limit, format });
      if (page === null) return reply;
      const { snapshotId, items, more } = page;
      const last = items[items.length - 1];
      const nextCursor = more && last ? cursors.encode(last.position, filters, snapshotId) : null;
      // The body is assembled from the rows' texts (the schema above describes it).
      if (format === 'json') return reply.type(JSON_TYPE).send(pageText(items, nextCursor));
      if (nextCursor !== null) reply.header('Link', `<${nextPageUrl(request.url, nextCursor)}>; rel="next"`);
      if (format === 'csv') return reply.type(MEDIA_TYPES.csv).send(texts.csvPage(items));
      return reply.type(MEDIA_TYPES.geojson).send(texts.geojsonPage(items, nextCursor));
    },
  );
}

/** GET /v1/service-requests/count: the number of matching requests. */
function registerCountRoute(app: PlatformApp, { store, caching }: RequestRouteDependencies, rowWalks: RouteBudget): void {
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
      const filters = await readFilters(request.query, store);
      const snapshotId = await store.snapshotId();
      if (caching.answerNotModified(request, reply, snapshotId)) return reply;
      return caching.sendKept(reply, async () => ({ count: await store.count(filters) }));
    },
  );
}

/** GET /v1/service-requests (a page, in JSON, CSV or GeoJSON) and GET /v1/service-requests/count. */
export function registerListRoutes(app: PlatformApp, dependencies: RequestRouteDependencies, pages: RouteBudget, rowWalks: RouteBudget): void {
  registerListRoute(app, dependencies, pages);
  registerCountRoute(app, dependencies, rowWalks);
}
