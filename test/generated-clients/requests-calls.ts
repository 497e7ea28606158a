import createClient from 'openapi-fetch';
import type { components, paths } from './requests-schema.js';

type ServiceRequest = components['schemas']['ServiceRequest'];
type Borough = components['schemas']['Borough'];
type GeoJsonPage = components['schemas']['GeoJsonPage'];
type FacetList = components['schemas']['FacetList'];
type WeeklyStat = components['schemas']['WeeklyStat'];
type MonthlyStat = components['schemas']['MonthlyStat'];

/** Calls every operation of the service-request API (each format of the lists); answers by operationId. */
export async function callEveryOperation(baseUrl: string, apiKey: string): Promise<Record<string, { status: number; body: unknown }>> {
  const options = { baseUrl, headers: { 'X-API-Key': apiKey } };
  // One client per media type: the answers of an operation with several are typed by the one asked for.
  const client = createClient<paths, 'application/json'>(options);
  const csv = createClient<paths, 'text/csv'>(options);
  const geojson = createClient<paths, 'application/geo+json'>(options);
  const borough: Borough = 'brooklyn';
  // Repeatable filters are lists (sent as borough=...&borough=...).
  const filters = { borough: [borough, 'queens' as const], status: ['closed' as const] };
  const page = await client.GET('/v1/service-requests', { params: { query: { ...filters, limit: 2 } } });
  const first: ServiceRequest | undefined = page.data?.items[0];
  const next = page.data?.next_cursor ?? null;
  const second = next === null ? page : await client.GET('/v1/service-requests', { params: { query: { ...filters, limit: 2, cursor: next } } });
  const csvPage = await csv.GET('/v1/service-requests', { params: { query: { ...filters, limit: 2, format: 'csv' } }, parseAs: 'text' });
  const csvText: string | undefined = csvPage.data;
  const geojsonPage = await geojson.GET('/v1/service-requests', { params: { query: { ...filters, limit: 2, format: 'geojson' } } });
  const features: GeoJsonPage['features'] | undefined = geojsonPage.data?.features;
  // The {id} answer is the same ServiceRequest type as the page items.
  const one = await client.GET('/v1/service-requests/{id}', { params: { path: { id: first?.id ?? 0 } } });
  const same: ServiceRequest | undefined = one.data;
  const boroughOfOne: Borough | null | undefined = same?.borough;
  // The operators: a negation, closed, its days, a radius and a search.
  const operators = { not_complaint_type: ['Noise'], closed: 'true' as const, days_to_close_max: 14, near: '40.7128,-74.006', radius_m: 5000, q: 'street' };
  const count = await client.GET('/v1/service-requests/count', { params: { query: { ...filters, ...operators } } });
  const oneDay = { ...filters, created_from: '2025-01-01', created_to: '2025-01-02' };
  const csvExport = await csv.GET('/v1/exports/service-requests', { params: { query: { ...oneDay, format: 'csv' } }, parseAs: 'text' });
  const geojsonExport = await geojson.GET('/v1/exports/service-requests', { params: { query: { ...oneDay, format: 'geojson' } } });
  const facets = await client.GET('/v1/facets', { params: { query: { field: 'channel', ...filters } } });
  const values: FacetList['items'] | undefined = facets.data?.items;
  const types = await client.GET('/v1/complaint-types', { params: { query: { borough: [borough] } } });
  const daily = await client.GET('/v1/stats/daily', { params: { query: { borough: [borough] } } });
  const weekly = await client.GET('/v1/stats/weekly', { params: { query: { borough: [borough] } } });
  const weeks: WeeklyStat[] | undefined = weekly.data?.items;
  const monthly = await client.GET('/v1/stats/monthly', { params: { query: { borough: [borough] } } });
  const months: MonthlyStat[] | undefined = monthly.data?.items;
  const dataset = await client.GET('/v1/dataset');
  const health = await client.GET('/health');
  const ready = await client.GET('/ready');
  const statuses = [second, csvPage, geojsonPage].map((answer) => answer.response.status);
  return {
    listServiceRequests: {
      status: statuses.every((status) => status === 200) ? 200 : Math.max(...statuses),
      body: { first: page.data?.items.length, second: second.data?.items.length, csvLines: csvText?.split('\r\n').length, features: features?.length },
    },
    getServiceRequest: { status: one.response.status, body: { same: same?.id === first?.id, borough: boroughOfOne } },
    countServiceRequests: { status: count.response.status, body: count.data?.count },
    exportServiceRequests: {
      status: csvExport.response.status === 200 ? geojsonExport.response.status : csvExport.response.status,
      body: { csvLength: csvExport.data?.length, features: geojsonExport.data?.features.length },
    },
    listFacets: { status: facets.response.status, body: values?.length },
    listComplaintTypes: { status: types.response.status, body: types.data?.items.length },
    getDailyStats: { status: daily.response.status, body: daily.data?.items.length },
    getWeeklyStats: { status: weekly.response.status, body: weeks?.[0]?.week },
    getMonthlyStats: { status: monthly.response.status, body: months?.[0]?.month },
    getDataset: { status: dataset.response.status, body: dataset.data?.row_count },
    getHealth: { status: health.response.status, body: health.data?.status },
    getReadiness: { status: ready.response.status, body: ready.data?.status },
  };
}
