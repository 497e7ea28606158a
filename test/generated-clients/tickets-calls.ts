import createClient from 'openapi-fetch';
import type { components, paths } from './tickets-schema.js';

type Category = components['schemas']['Category'];
type Ticket = components['schemas']['Ticket'];

/** Calls every operation of the ticket service; answers by operationId. */
export async function callEveryOperation(baseUrl: string, apiKey: string): Promise<Record<string, { status: number; body: unknown }>> {
  const client = createClient<paths>({ baseUrl, headers: { 'X-API-Key': apiKey } });
  const ticket: Ticket = { subject: 'I cannot log in', body: 'The password reset link does not work.' };
  const classified = await client.POST('/v1/classify', { body: ticket });
  const category: Category | undefined = classified.data?.category;
  const categories = await client.GET('/v1/categories');
  const known: Category[] = categories.data?.categories ?? [];
  if (category !== undefined && !known.includes(category)) throw new Error(`unknown category ${category}`);
  const health = await client.GET('/health');
  const ready = await client.GET('/ready');
  return {
    classifyTicket: { status: classified.response.status, body: classified.data },
    listCategories: { status: categories.response.status, body: categories.data },
    getHealth: { status: health.response.status, body: health.data?.status },
    getReadiness: { status: ready.response.status, body: ready.data?.status },
  };
}
