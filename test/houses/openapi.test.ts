import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { REVIEWED_MODEL } from '../../src/services/houses/model/index.js';
import { SHIPPED_MODEL_AREA } from '../../src/services/houses/house.js';
import { expectMatchesReviewedCopy, REPO_ROOT } from '../support/http.js';
import { buildFixtureApp } from './support.js';
import { appDuringSuite } from '../support/during-suite.js';

/** house-prices.md rule 7 and "Versioning": the description states the limits and is compared with a reviewed copy. */
const app = appDuringSuite(() => buildFixtureApp());
let spec: any;
beforeAll(() => {
  spec = app.swagger();
});

const houseSchema = () => spec.components.schemas.House;

describe('OpenAPI description', () => {
  it('matches the reviewed copy', () => {
    expectMatchesReviewedCopy(app.swagger(), 'openapi/houses.json');
  });
  it('is OpenAPI 3.1 with title, version and tags', () => {
    expect(spec.openapi).toBe('3.1.0');
    expect(spec.info.title).toBe('House Price Estimator API');
    expect(spec.info.version).toBe('0.1.0');
    expect(spec.tags.map((tag: { name: string }) => tag.name)).toEqual(['estimates', 'model', 'health']);
  });
  it('states the not-for-lending statement', () => {
    expect(spec.info.description).toContain('Not for lending, underwriting or insurance decisions about a person');
    expect(spec.paths['/v1/estimates'].post.description).toContain('Not for lending, underwriting or insurance decisions about a person');
  });
  it('states every field limit', () => {
    const properties = houseSchema().properties;
    expect(houseSchema().additionalProperties).toBe(false);
    expect(houseSchema().required).toHaveLength(16);
    expect(properties.bedrooms).toMatchObject({ type: 'integer', minimum: 0, maximum: 11 });
    expect(properties.bathrooms).toMatchObject({ type: 'number', minimum: 0, maximum: 10, multipleOf: 0.25 });
    expect(properties.floors).toMatchObject({ type: 'number', minimum: 1, maximum: 4, multipleOf: 0.5 });
    expect(properties.sqft_living).toMatchObject({ minimum: 100, maximum: 14000 });
    expect(properties.sqft_basement).toMatchObject({ minimum: 0 });
    expect(properties.sqft_basement.description).toContain('smaller than sqft_living');
    expect(properties.sqft_lot).toMatchObject({ minimum: 100, maximum: 5_000_000 });
    expect(properties.waterfront).toMatchObject({ type: 'boolean' });
    expect(properties.view).toMatchObject({ type: 'integer', minimum: 0, maximum: 4 });
    expect(properties.condition).toMatchObject({ type: 'integer', minimum: 1, maximum: 5 });
    expect(properties.grade).toMatchObject({ type: 'integer', minimum: 1, maximum: 13 });
    expect(properties.yr_built).toMatchObject({ type: 'integer', minimum: 1900, maximum: 2015 });
    expect(properties.yr_renovated.description).toContain('0 when never renovated, otherwise a year from yr_built to 2015');
    expect(properties.sqft_living15).toMatchObject({ minimum: 100, maximum: 14000 });
    expect(properties.sqft_lot15).toMatchObject({ minimum: 100, maximum: 5_000_000 });
    expect(properties.lat).toMatchObject({ type: 'number', minimum: -90, maximum: 90 });
    expect(properties.long).toMatchObject({ type: 'number', minimum: -180, maximum: 180 });
    expect(properties.lat.description).toContain(`${SHIPPED_MODEL_AREA.lat_min} to ${SHIPPED_MODEL_AREA.lat_max}`);
    expect(properties.long.description).toContain(`${SHIPPED_MODEL_AREA.long_min} to ${SHIPPED_MODEL_AREA.long_max}`);
    expect(spec.paths['/v1/estimates'].post.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/House' });
    const batch = spec.components.schemas.EstimateBatchRequest;
    expect(spec.paths['/v1/estimates/batch'].post.requestBody.content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/EstimateBatchRequest',
    });
    expect(batch.properties.houses).toMatchObject({ minItems: 1, maxItems: 100, items: { $ref: '#/components/schemas/House' } });
  });
  it('documents the shipped model area as it is in the shipped model file', () => {
    const file = JSON.parse(readFileSync(resolve(REPO_ROOT, REVIEWED_MODEL.path), 'utf8')) as { model_area: Record<string, number> };
    const { lat_min, lat_max, long_min, long_max } = file.model_area;
    expect({ lat_min, lat_max, long_min, long_max }).toEqual(SHIPPED_MODEL_AREA);
  });
  it('asks for the key on the two POSTs only', () => {
    expect(spec.paths['/v1/estimates'].post.security).toEqual([{ apiKey: [] }]);
    expect(spec.paths['/v1/estimates/batch'].post.security).toEqual([{ apiKey: [] }]);
    expect(spec.paths['/v1/model'].get.security).toEqual([]);
    expect(spec.components.securitySchemes.apiKey).toEqual({ type: 'apiKey', in: 'header', name: 'X-API-Key' });
  });
  it('is served at /openapi.json, and SHOW_DOCS=false removes it', async () => {
    const served = await app.inject({ url: '/openapi.json' });
    expect(served.statusCode).toBe(200);
    expect(served.json()).toEqual(JSON.parse(JSON.stringify(spec)));
    const hidden = await buildFixtureApp({ SHOW_DOCS: 'false' });
    expect((await hidden.inject({ url: '/openapi.json' })).statusCode).toBe(404);
    expect((await hidden.inject({ url: '/docs' })).statusCode).toBe(404);
    await hidden.close();
  });
});
