import createClient from 'openapi-fetch';
import type { components, paths } from './requests-schema.js';

type ServiceRequest = components['schemas']['ServiceRequest'];
type Borough = components['schemas']['Borough'];

/** Calls every operation of the service-request API; answers by operationId. */
export async function callEveryOperation(baseUrl: string, apiKey: string): Promise<Record<string, { status: number; body: unknown }>> {
  const client = createClient<paths>({ baseUrl, headers: { 'X-API-Key': apiKey } });
  const borough: Borough = 'brooklyn';
  const page = await client.GET('/v1/service-requests', { params: { query: { borough, status: 'closed', limit: 2 } } });
  const first: ServiceRequest | undefined = page.data?.items[0];
  const next = page.data?.next_cursor ?? null;
  const second = next === null ? page : await client.GET('/v1/service-requests', { params: { query: { borough, status: 'closed', limit: 2, cursor: next } } });
  // The {id} answer is the same ServiceRequest type as the page items.
  const one = await client.GET('/v1/service-requests/{id}', { params: { path: { id: first?.id ?? 0 } } });
  const same: ServiceRequest | undefined = one.data;
  const boroughOfOne: Borough | null | undefined = same?.borough;
  const types = await client.GET('/v1/complaint-types');
  const daily = await client.GET('/v1/stats/daily', { params: { query: { borough } } });
  const dataset = await client.GET('/v1/dataset');
  const health = await client.GET('/health');
  const ready = await client.GET('/ready');
  return {
    listServiceRequests: { status: second.response.status, body: { first: page.data?.items.length, second: second.data?.items.length } },
    getServiceRequest: { status: one.response.status, body: { same: same?.id === first?.id, borough: boroughOfOne } },
    listComplaintTypes: { status: types.response.status, body: types.data?.items.length },
    getDailyStats: { status: daily.response.status, body: daily.data?.items.length },
    getDataset: { status: dataset.response.status, body: dataset.data?.row_count },
    getHealth: { status: health.response.status, body: health.data?.status },
    getReadiness: { status: ready.response.status, body: ready.data?.status },
  };
}
