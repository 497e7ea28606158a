import type { PlatformApp } from '../../../platform/platform-app.js';
import { componentRef } from '../../../platform/openapi-components.js';
import { WorkBudget } from '../../../platform/work-budget.js';
import { estimateHouse, estimateHouses } from '../estimating.js';
import { House } from '../house.js';
import type { HouseModel } from '../model/index.js';
import { BATCH_EXAMPLE, ESTIMATE_EXAMPLE } from '../openapi-example.js';
import { BatchAnswer, BatchRequest, Estimate } from '../schemas.js';
import { BATCH_CHECKS, answerBatch, answerOne, postHouses } from './house-requests.js';

/** POST /v1/estimates and POST /v1/estimates/batch. */
export function registerEstimateRoutes(app: PlatformApp, loadedModel: () => HouseModel): void {
  // A batch has a work budget (docs/reliability.md, "Work budgets"); one estimate is cheaper than
  // its own admission. A batch is computed in pieces of a few milliseconds (an estimate is a few
  // microseconds).
  const estimateBatches = new WorkBudget('estimate batches', { concurrency: 1, queue: 32, maxWaitMs: 2_000 });

  postHouses(
    app,
    '/v1/estimates',
    {
      operationId: 'estimatePrice',
      summary: 'Estimate the price of one house',
      description:
        'A first indication of the price in US dollars, with a range meant to hold 80 percent of sales. Not for lending, underwriting or ' +
        'insurance decisions about a person. Order of checks: body size (413), key (401), validation of the body then of the query ' +
        '(422 invalid_request), model (503 model_unavailable), as_of month allowed (422 invalid_request), model area (422 ' +
        'outside_model_area). Needs X-API-Key when the service has keys.',
      body: componentRef(House, { examples: [ESTIMATE_EXAMPLE.request] }),
      ok: componentRef(Estimate, { description: 'The estimate of the house', examples: [ESTIMATE_EXAMPLE.answer] }),
    },
    null,
    answerOne(loadedModel, estimateHouse),
  );

  postHouses(
    app,
    '/v1/estimates/batch',
    {
      operationId: 'estimatePrices',
      summary: 'Estimate the prices of 1 to 100 houses',
      description: `One estimate per house, in the order of the houses. ${BATCH_CHECKS}`,
      body: componentRef(BatchRequest, { examples: [BATCH_EXAMPLE.request] }),
      ok: componentRef(BatchAnswer, { description: 'One estimate per house, in the order of the houses', examples: [BATCH_EXAMPLE.answer] }),
    },
    estimateBatches,
    answerBatch(loadedModel, estimateHouses, 50),
  );
}
