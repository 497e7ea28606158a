import type { PlatformApp } from '../../../platform/platform-app.js';
import { componentRef } from '../../../platform/openapi-components.js';
import { WorkBudget } from '../../../platform/work-budget.js';
import { explainHouse, explainHouses } from '../estimating.js';
import { House, HOUSE_FIELDS } from '../house.js';
import type { HouseModel } from '../model/index.js';
import { EXPLAIN_BATCH_EXAMPLE, EXPLAIN_EXAMPLE } from '../openapi-example.js';
import { BatchRequest, ExplainedBatchAnswer, ExplainedEstimate } from '../schemas.js';
import { BATCH_CHECKS, answerBatch, answerOne, postHouses } from './house-requests.js';

/** POST /v1/estimates/explain and POST /v1/estimates/explain/batch. */
export function registerExplanationRoutes(app: PlatformApp, loadedModel: () => HouseModel): void {
  // The work budgets of the explanations (docs/reliability.md, "Work budgets"); a batch is computed
  // in pieces of a few milliseconds (an explained house takes a fraction of a millisecond).
  const explanations = new WorkBudget('explanations', { concurrency: 1, queue: 64, maxWaitMs: 2_000 });
  const explanationBatches = new WorkBudget('explanation batches', { concurrency: 1, queue: 16, maxWaitMs: 2_000 });

  postHouses(
    app,
    '/v1/estimates/explain',
    {
      operationId: 'explainEstimate',
      summary: 'Estimate the price of one house, with why and the sales it most resembles',
      description:
        'The same Estimate as POST /v1/estimates (same validation, errors, key and order of checks: 413, 401, 422 invalid_request, ' +
        '503 model_unavailable, 422 outside_model_area), plus explanation: exact path-dependent TreeSHAP over the shipped trees, ' +
        `each of the ${HOUSE_FIELDS.length} fields' contribution to log(price / sqft_living) (baseline + contributions = raw) and as a price factor, ` +
        'largest effect first; and comparable_sales: the 5 training sales most like the house. Not for lending, underwriting or ' +
        'insurance decisions about a person. Needs X-API-Key when the service has keys.',
      body: componentRef(House, { examples: [EXPLAIN_EXAMPLE.request] }),
      ok: componentRef(ExplainedEstimate, { description: 'The estimate of the house, explained', examples: [EXPLAIN_EXAMPLE.answer] }),
    },
    explanations,
    answerOne(loadedModel, explainHouse),
  );

  postHouses(
    app,
    '/v1/estimates/explain/batch',
    {
      operationId: 'explainEstimates',
      summary: 'Explained estimates of 1 to 100 houses',
      description: `One explained estimate (as POST /v1/estimates/explain) per house, in the order of the houses. ${BATCH_CHECKS}`,
      body: componentRef(BatchRequest, { examples: [EXPLAIN_BATCH_EXAMPLE.request] }),
      ok: componentRef(ExplainedBatchAnswer, {
        description: 'One explained estimate per house, in the order of the houses',
        examples: [EXPLAIN_BATCH_EXAMPLE.answer],
      }),
    },
    explanationBatches,
    answerBatch(loadedModel, explainHouses, 10),
  );
}
