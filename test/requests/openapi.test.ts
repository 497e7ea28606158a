import { describe, expect, it } from 'vitest';
import { buildRequestsApp } from '../../src/services/requests/app.js';
import { readRequestSettings } from '../../src/services/requests/settings.js';
import { appDuringSuite } from '../support/during-suite.js';
import { expectMatchesReviewedCopy } from '../support/http.js';

interface Operation {
  parameters?: { name: string; in: string; schema: Record<string, unknown> }[];
  responses: Record<string, unknown>;
  security?: unknown;
}

describe('OpenAPI description of the service-request API', () => {
  // No database is read to describe the API.
  const app = appDuringSuite(() =>
    buildRequestsApp(readRequestSettings({ API_KEY: 'openapi-test-key-0123', DATABASE_URL: '/nonexistent/snapshot.sqlite' }), { logger: false }),
  );

  it('matches the reviewed copy', () => {
    expectMatchesReviewedCopy(app.swagger(), 'openapi/requests.json');
  });

  it('gives every parameter its type and limits, and every error response', () => {
    const spec = app.swagger() as {
      openapi: string;
      info: { title: string; version: string };
      paths: Record<string, Record<string, Operation>>;
      components: { schemas: Record<string, Record<string, unknown>> };
    };
    expect(spec.openapi).toBe('3.1.0');
    expect(spec.info).toMatchObject({ title: 'Service Request Data API', version: '0.1.0' });
    expect(Object.keys(spec.paths).sort()).toEqual(
      [
        '/health', '/ready', '/v1/complaint-types', '/v1/dataset', '/v1/service-requests', '/v1/service-requests/{id}', '/v1/stats/daily',
        '/v1/service-requests/count', '/v1/exports/service-requests', '/v1/facets', '/v1/stats/weekly', '/v1/stats/monthly', '/v1/stats/groups',
        '/v1/stats/cells',
      ].sort(),
    );
    const list = spec.paths['/v1/service-requests']!.get!;
    const parameter = (name: string) => list.parameters!.find((p) => p.name === name)!.schema;
    expect(parameter('limit')).toMatchObject({ type: 'integer', minimum: 1, maximum: 1000, default: 50 });
    expect(parameter('cursor')).toMatchObject({ type: 'string', maxLength: 200 });
    expect(parameter('complaint_type')).toMatchObject({ type: 'array', items: { type: 'string', maxLength: 200 } });
    expect(parameter('borough')).toMatchObject({ type: 'array', items: { enum: ['bronx', 'brooklyn', 'manhattan', 'queens', 'staten_island', 'none'] } });
    expect(parameter('bbox')).toMatchObject({ type: 'string', pattern: expect.any(String) });
    expect(parameter('format')).toEqual({ $ref: '#/components/schemas/ListFormat' });
    expect(spec.components.schemas.ListFormat).toMatchObject({ type: 'string', enum: ['json', 'csv', 'geojson'] });
    expect(spec.components.schemas.Borough).toMatchObject({ type: 'string', enum: ['bronx', 'brooklyn', 'manhattan', 'queens', 'staten_island'] });
    expect(parameter('created_from')).toMatchObject({ type: 'string', pattern: expect.any(String) });
    expect(Object.keys(list.responses).sort()).toEqual(['200', '304', '401', '422', '429', '431', '503']);
    expect(Object.keys(spec.paths['/v1/service-requests/{id}']!.get!.responses).sort()).toEqual(['200', '304', '401', '404', '422', '429', '503']);
    const secured = ['/v1/service-requests', '/v1/service-requests/{id}', '/v1/complaint-types', '/v1/stats/daily', '/v1/dataset'];
    secured.push('/v1/service-requests/count', '/v1/exports/service-requests', '/v1/facets', '/v1/stats/weekly', '/v1/stats/monthly', '/v1/stats/groups', '/v1/stats/cells');
    const groups = spec.paths['/v1/stats/groups']!.get!;
    const groupParameter = (name: string) => groups.parameters!.find((p) => p.name === name)!.schema;
    expect(groupParameter('by')).toMatchObject({ type: 'array', minItems: 1, maxItems: 2 });
    expect(groupParameter('limit')).toMatchObject({ type: 'integer', minimum: 1, maximum: 1000, default: 20 });
    expect(groupParameter('order')).toMatchObject({ type: 'string', default: 'opened', enum: expect.arrayContaining(['opened', '-opened', 'p90_days_to_close', '-median_days_to_close']) });
    expect(groupParameter('period')).toEqual({ $ref: '#/components/schemas/GroupPeriod' });
    expect(Object.keys(groups.responses).sort()).toEqual(['200', '304', '401', '422', '429', '431', '503']);
    for (const path of secured) {
      expect(spec.paths[path]!.get!.security, path).toEqual([{ apiKey: [] }]);
    }
    expect(Object.keys(spec.paths['/ready']!.get!.responses).sort()).toEqual(['200', '503']);
    const cells = (name: string) => spec.paths['/v1/stats/cells']!.get!.parameters!.find((p) => p.name === name) as unknown as { required?: boolean; schema: unknown };
    expect(cells('bbox')).toMatchObject({ required: true, schema: { type: 'string', pattern: expect.any(String) } });
    expect(cells('cell')).toMatchObject({ required: true, schema: { $ref: '#/components/schemas/CellSize' } });
    expect(spec.components.schemas.CellSize).toMatchObject({ type: 'string', enum: ['0.01', '0.02', '0.05', '0.1', '0.2', '0.5', '1'] });
  });

  it('describes a service request once: the page items and the {id} answer are the same component, nullable enums one named type', () => {
    const spec = app.swagger() as any;
    const ref = { $ref: '#/components/schemas/ServiceRequest' };
    expect(spec.paths['/v1/service-requests/{id}'].get.responses['200'].content['application/json'].schema).toEqual(ref);
    expect(spec.components.schemas.ServiceRequestPage.properties.items.items).toEqual(ref);
    const request = spec.components.schemas.ServiceRequest.properties;
    expect(request.borough.oneOf).toEqual([{ $ref: '#/components/schemas/Borough' }, { type: 'null' }]);
    expect(request.channel.oneOf).toEqual([{ $ref: '#/components/schemas/Channel' }, { type: 'null' }]);
    expect(request.status).toEqual({ $ref: '#/components/schemas/Status' });
  });
});
