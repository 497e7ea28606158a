import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { expectError } from '../support/http.js';
import { buildFixtureApp, FIXTURE_MODEL_PATH, house, postJson } from './support.js';
import { appDuringSuite } from '../support/during-suite.js';

/** house-prices.md rule 3: outside_model_area with lat, long or both, from the area in the model file. */
const AREA = (JSON.parse(readFileSync(FIXTURE_MODEL_PATH, 'utf8')) as { model_area: { lat_min: number; lat_max: number; long_min: number; long_max: number } })
  .model_area;

const app = appDuringSuite(() => buildFixtureApp());

const estimate = (body: unknown) => postJson(app, '/v1/estimates', body);

describe('model area', () => {
  it('the corners of the area are inside (bounds included)', async () => {
    for (const [lat, long] of [
      [AREA.lat_min, AREA.long_min],
      [AREA.lat_max, AREA.long_max],
      [AREA.lat_min, AREA.long_max],
      [AREA.lat_max, AREA.long_min],
    ]) {
      const response = await estimate(house({ lat, long }));
      expect(response.statusCode, response.body).toBe(200);
    }
  });
  it('lat below or above the area names lat', async () => {
    expectError(await estimate(house({ lat: AREA.lat_min - 0.001 })), 422, 'outside_model_area', ['lat']);
    expectError(await estimate(house({ lat: AREA.lat_max + 0.001 })), 422, 'outside_model_area', ['lat']);
  });
  it('long west or east of the area names long', async () => {
    expectError(await estimate(house({ long: AREA.long_min - 0.001 })), 422, 'outside_model_area', ['long']);
    expectError(await estimate(house({ long: AREA.long_max + 0.001 })), 422, 'outside_model_area', ['long']);
  });
  it('both outside names lat and long', async () => {
    expectError(await estimate(house({ lat: 40.7, long: -74 })), 422, 'outside_model_area', ['lat', 'long']);
  });
  it('is checked only for a house that is otherwise valid: invalid_request wins and does not name lat', async () => {
    expectError(await estimate(house({ lat: 0, long: 0, grade: 14 })), 422, 'invalid_request', ['grade']);
    expectError(await estimate(house({ lat: 0, sqft_basement: 9000 })), 422, 'invalid_request', ['sqft_basement']);
  });
});
