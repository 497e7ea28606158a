import example from './openapi-example.json' with { type: 'json' };
import explainExample from './openapi-explain-example.json' with { type: 'json' };
import type { House } from './house.js';
import type { Estimate, ExplainedEstimate } from './schemas.js';

/**
 * The one documented example of POST /v1/estimates: a request and the exact answer of the shipped
 * model to it, committed in openapi-example.json (not computed at run time). A test sends the request
 * and compares; a retrained model means a deliberate update of the file.
 */
export const ESTIMATE_EXAMPLE = example as { request: House; answer: Estimate };

/** The same for POST /v1/estimates/explain (openapi-explain-example.json: the same house, explained). */
export const EXPLAIN_EXAMPLE = explainExample as { request: House; answer: ExplainedEstimate };
