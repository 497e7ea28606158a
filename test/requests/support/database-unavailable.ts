import { expect } from 'vitest';
import { expectError } from '../../support/http.js';
import type { TestApp } from './requests-app.js';

const V1_PATHS = [
  '/v1/service-requests',
  '/v1/service-requests?borough=queens&limit=5',
  '/v1/service-requests/1001',
  '/v1/complaint-types',
  '/v1/stats/daily',
  '/v1/dataset',
];

/**
 * Every read of the service answers 503 database_unavailable; liveness, the key check and validation
 * do not depend on the database.
 */
export async function expectUnavailable(service: TestApp): Promise<void> {
  const ready = await service.app.inject({ method: 'GET', url: '/ready' });
  expectError(ready, 503, 'database_unavailable', [], 'The database cannot be read');
  for (const path of V1_PATHS) expectError(await service.get(path), 503, 'database_unavailable', [], 'The database cannot be read');
  // liveness needs nothing; the key is checked before the database; validation too
  expect((await service.app.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200);
  expectError(await service.app.inject({ method: 'GET', url: '/v1/dataset' }), 401, 'unauthorized', []);
  expectError(await service.get('/v1/service-requests?limit=0'), 422, 'invalid_request', ['limit']);
}
