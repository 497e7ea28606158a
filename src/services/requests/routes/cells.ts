import type { FastifyReply, FastifyRequest } from 'fastify';
import type { PlatformApp } from '../../../platform/platform-app.js';
import { componentRef } from '../../../platform/openapi-components.js';
import { ApiError } from '../../../platform/error-registry.js';
import { invalidRequestMessage } from '../../../platform/errors.js';
import { boxCellRange, coarseCellBounds, gridCellsAcross, type CellSize } from '../../../snapshot/index.js';
import type { BoundingBox, FilterQuery } from '../list-filters.js';
import { CELLS_MAXIMUM, CellCountList, CellsQuery } from '../schemas.js';
import { DatabaseUnavailableError } from '../store/service-request-store.js';
import { REQUEST_EXAMPLES } from '../openapi-examples.js';
import { filteredAnswers, readFilters, repeatableParameters, type RequestRouteDependencies, type RouteBudget } from './route-parts.js';

/**
 * GET /v1/stats/cells: the matching requests of a map box per cell of a grid (map-cells.ts), so that
 * a map shows any number of requests without their points. The cells are counted where the rows are
 * (a walk worker, or the database) within the row walks' budget; the answer is bounded by the cells
 * a box may span (CELLS_MAXIMUM), checked before anything is read.
 */

/** 422 invalid_request when the box spans more than CELLS_MAXIMUM cells of the size. */
function checkCellsSpanned(box: BoundingBox, size: CellSize, multiple: number): void {
  const { rows, columns } = boxCellRange(box, multiple);
  if (rows * columns <= CELLS_MAXIMUM) return;
  throw new ApiError('invalid_request', {
    fields: ['bbox', 'cell'],
    message: invalidRequestMessage(
      `the box spans ${(rows * columns).toLocaleString('en-US')} cells of ${size} degree (${columns} by ${rows}), more than ${CELLS_MAXIMUM.toLocaleString('en-US')}: take a larger cell or a smaller box`,
    ),
  });
}

export function registerCellsRoute(app: PlatformApp, { store, caching }: RequestRouteDependencies, rowWalks: RouteBudget): void {
  app.get(
    '/v1/stats/cells',
    {
      ...rowWalks,
      preValidation: repeatableParameters,
      schema: {
        tags: ['statistics'],
        operationId: 'getCellCounts',
        summary: 'Requests per map cell',
        description: [
          'The requests matching the filters of GET /v1/service-requests (AND) inside the box `bbox`, counted per cell of a grid of',
          '`cell` degrees (square in degrees; its lines lie half a thousandth of a degree off the hundredths, so that box edges of three',
          'decimals never lie on one). Only the cells that hold requests are listed, with their bounds; a cell the box cuts counts its',
          `requests inside the box only, so the counts add up to \`total\`, the matching requests of the box. The box may span at most`,
          `${CELLS_MAXIMUM.toLocaleString('en-US')} cells of the size asked (empty ones included); a larger one answers 422 invalid_request`,
          'with fields bbox and cell.',
        ].join(' '),
        querystring: CellsQuery,
        response: filteredAnswers(componentRef(CellCountList, { description: 'The requests per cell', examples: [REQUEST_EXAMPLES.cells] })),
      },
    },
    async (request: FastifyRequest, reply: FastifyReply) => {
      const query = request.query as FilterQuery & { cell: CellSize };
      const filters = await readFilters(query, store);
      const size = query.cell;
      const multiple = gridCellsAcross(size);
      checkCellsSpanned(filters.bbox as BoundingBox, size, multiple);
      const snapshotId = await store.snapshotId();
      if (caching.answerNotModified(request, reply, snapshotId)) return reply;
      return caching.sendKept(reply, async () => {
        const counted = await store.cellCounts(filters, multiple);
        if ((await store.snapshotId()) !== snapshotId) throw new DatabaseUnavailableError(new Error('the snapshot changed while the cells were counted'));
        let total = 0;
        const cells = counted.map(([cell, count]) => {
          total += count;
          return { bounds: coarseCellBounds(cell, multiple), count };
        });
        return { cell: size, cells, total };
      });
    },
  );
}
