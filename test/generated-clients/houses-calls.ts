import createClient from 'openapi-fetch';
import type { components, paths } from './houses-schema.js';

type House = components['schemas']['House'];
type Estimate = components['schemas']['Estimate'];
type WarningCode = components['schemas']['WarningCode'];
type ExplainedEstimate = components['schemas']['ExplainedEstimate'];
type FieldContribution = components['schemas']['FieldContribution'];
type ComparableSale = components['schemas']['ComparableSale'];

/**
 * Calls every operation of the house-price service with the given house (the repository's sample
 * house: this program is type-checked alone against the generated types, so it is handed the house
 * rather than importing it); answers by operationId.
 */
export async function callEveryOperation(baseUrl: string, apiKey: string, house: House): Promise<Record<string, { status: number; body: unknown }>> {
  const client = createClient<paths>({ baseUrl, headers: { 'X-API-Key': apiKey } });
  const one = await client.POST('/v1/estimates', { body: house });
  // The batch takes the same House type as the single estimate and answers the same Estimate type.
  const batch = await client.POST('/v1/estimates/batch', { body: { houses: [house, { ...house, grade: 9, sqft_living: 2600 }] } });
  const estimates: Estimate[] = batch.data?.estimates ?? [];
  const codes: WarningCode[] = estimates.flatMap((estimate) => estimate.warnings.map((warning) => warning.code));
  // The explain routes take the same House and batch request types and answer ExplainedEstimate.
  const explained = await client.POST('/v1/estimates/explain', { body: house });
  const explainedBatch = await client.POST('/v1/estimates/explain/batch', { body: { houses: [house] } });
  const explainedEstimates: ExplainedEstimate[] = explainedBatch.data?.estimates ?? [];
  const largest: FieldContribution | undefined = explained.data?.explanation.fields[0];
  const nearest: ComparableSale | undefined = explained.data?.comparable_sales[0];
  const card = await client.GET('/v1/model');
  const health = await client.GET('/health');
  const ready = await client.GET('/ready');
  return {
    estimatePrice: { status: one.response.status, body: one.data },
    estimatePrices: { status: batch.response.status, body: { estimates, codes } },
    explainEstimate: { status: explained.response.status, body: { field: largest?.field, nearest_sale_km: nearest?.distance_km } },
    explainEstimates: { status: explainedBatch.response.status, body: explainedEstimates.map((estimate) => estimate.estimate_usd) },
    getModelCard: { status: card.response.status, body: card.data?.model_area },
    getHealth: { status: health.response.status, body: health.data?.status },
    getReadiness: { status: ready.response.status, body: ready.data?.status },
  };
}
