import example from './openapi-example.json' with { type: 'json' };
import { LARGER_SAMPLE_HOUSE, SAMPLE_HOUSE, type House } from './house.js';
import type { BatchAnswer, BatchRequest, Estimate, ExplainedEstimate } from './schemas.js';

/**
 * The documented examples of the houses service: a request of POST /v1/estimates and of POST
 * /v1/estimates/batch (the sample houses of house.ts) with the exact answers of the shipped
 * model, the same requests explained (POST /v1/estimates/explain and /explain/batch), and the shipped
 * model's card as GET /v1/model answers it. The answers are committed in openapi-example.json (not
 * computed at run time). A test sends the requests and compares; a retrained model means a
 * deliberate update of the file (UPDATE_GOLDEN=1, see test/houses/shipped-model-answers.test.ts).
 */
const BATCH_REQUEST: BatchRequest = { houses: [SAMPLE_HOUSE, LARGER_SAMPLE_HOUSE] };

export const ESTIMATE_EXAMPLE = { request: SAMPLE_HOUSE, answer: example.estimate.answer as Estimate } satisfies { request: House; answer: Estimate };
export const BATCH_EXAMPLE = { request: BATCH_REQUEST, answer: example.batch.answer as BatchAnswer };
export const MODEL_CARD_EXAMPLE: Record<string, unknown> = example.model_card;
export const EXPLAIN_EXAMPLE = { request: SAMPLE_HOUSE, answer: example.explain.answer as ExplainedEstimate };
export const EXPLAIN_BATCH_EXAMPLE = { request: BATCH_REQUEST, answer: example.explain_batch.answer as { estimates: ExplainedEstimate[] } };
