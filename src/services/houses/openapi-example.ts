import example from './openapi-example.json' with { type: 'json' };
import type { House } from './house.js';
import type { BatchAnswer, BatchRequest, Estimate, ExplainedEstimate } from './schemas.js';

/**
 * The documented examples of the houses service: a request of POST /v1/estimates and of POST
 * /v1/estimates/batch (houses inside the model area) with the exact answers of the shipped model,
 * the same requests explained (POST /v1/estimates/explain and /explain/batch), and the shipped
 * model's card as GET /v1/model answers it, committed in openapi-example.json (not computed at run
 * time). A test sends the requests and compares; a retrained model means a deliberate update of the
 * file (UPDATE_GOLDEN=1, see test/houses/shipped-model-answers.test.ts).
 */
export const ESTIMATE_EXAMPLE = example.estimate as { request: House; answer: Estimate };
export const BATCH_EXAMPLE = example.batch as { request: BatchRequest; answer: BatchAnswer };
export const MODEL_CARD_EXAMPLE: Record<string, unknown> = example.model_card;
export const EXPLAIN_EXAMPLE = example.explain as { request: House; answer: ExplainedEstimate };
export const EXPLAIN_BATCH_EXAMPLE = example.explain_batch as { request: BatchRequest; answer: { estimates: ExplainedEstimate[] } };
