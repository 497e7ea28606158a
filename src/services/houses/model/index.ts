/**
 * The house model's public face: what the service (routes, estimates, settings) uses of the model.
 * Everything else under model/ (the model file's format, the evaluator, TreeSHAP, comparable sales)
 * is the model's own and is reached only through these.
 */
export type { HouseModel, PriceExplanation } from './house-model.js';
export { parseHouseModel } from './model-adapter.js';
export { loadModelFile, logModelState, type ModelParser, type ModelSource, type ModelState } from './model-loading.js';
export { REVIEWED_MODEL } from './reviewed-model.js';
export { dollarAnswer, formatUsd } from './dollars.js';
export type { PriceLevel, PriceLevels } from './price-level.js';
