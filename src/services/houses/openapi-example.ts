import example from './openapi-example.json' with { type: 'json' };
import type { Estimate, House } from './schemas.js';

/**
 * The one documented example of POST /v1/estimates: a request and the exact answer of the shipped
 * model to it, committed in openapi-example.json (not computed at run time). A test sends the request
 * and compares; a retrained model means a deliberate update of the file.
 */
export const ESTIMATE_EXAMPLE = example as { request: House; answer: Estimate };
