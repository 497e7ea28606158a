import { expect } from 'vitest';
import { expectError } from '../support/http.js';
import { json, type TestApp } from '../requests/support/requests-app.js';

/** What the data service answers while its database is unreadable, and after (database-fault*.test.ts). */
export const LIST = '/v1/service-requests?limit=5';
const FILTERED = '/v1/service-requests?borough=queens&limit=5';

export async function expectAnswering(service: TestApp): Promise<unknown> {
  expect((await service.app.inject({ method: 'GET', url: '/ready' })).statusCode).toBe(200);
  const list = await service.get(LIST);
  expect(list.statusCode).toBe(200);
  expect((await service.get(FILTERED)).statusCode).toBe(200);
  return json(list);
}

export const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

export async function expectUnavailable(service: TestApp): Promise<void> {
  expectError(await service.app.inject({ method: 'GET', url: '/ready' }), 503, 'database_unavailable', [], 'The database cannot be read');
  expectError(await service.get(LIST), 503, 'database_unavailable', []);
  expectError(await service.get(FILTERED), 503, 'database_unavailable', []);
  // Liveness does not depend on the database.
  expect((await service.app.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200);
}
