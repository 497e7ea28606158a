import type { PlatformApp } from '../../../platform/platform-app.js';
import { cutAnswerAfter } from '../../../platform/long-answers.js';
import { componentRef } from '../../../platform/openapi-components.js';
import { addVary } from '../../../platform/vary.js';
import { exportStream } from '../answers/export-stream.js';
import { chooseFormat, MEDIA_TYPES } from '../answers/row-formats.js';
import { EXPORT_FORMATS, ExportQuery, GeoJsonPage } from '../schemas.js';
import { REQUEST_EXAMPLES } from '../openapi-examples.js';
import { common, csvText, filterErrors, readFilters, repeatableParameters, tooLong, type RequestRouteDependencies, type RouteBudget } from './route-parts.js';

/** GET /v1/exports/service-requests: every matching request, streamed as CSV or GeoJSON. */
export function registerExportRoute(app: PlatformApp, { store, caching, exportMaxMs }: RequestRouteDependencies, exports: RouteBudget): void {
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
      const filters = await readFilters(request.query, store);
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
}
