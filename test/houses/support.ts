import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { PlatformApp } from '../../src/platform/platform-app.js';
import { buildHousesApp, type HousesAppOptions } from '../../src/services/houses/app.js';
import { SAMPLE_HOUSE } from '../../src/services/houses/house.js';
import { readHouseSettings } from '../../src/services/houses/settings.js';
import { REPO_ROOT } from '../support/http.js';

/** The small hand-made model of the tests (same file format as the shipped model). */
export const FIXTURE_MODEL_PATH = resolve(REPO_ROOT, 'test/fixtures/houses/tiny-model.json');

export function sha256OfFile(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

/** A valid house inside the model area, with no warning: the sample house. */
export const VALID_HOUSE = SAMPLE_HOUSE;

export type HouseBody = Record<string, unknown>;

export function house(changes: HouseBody = {}): HouseBody {
  return { ...VALID_HOUSE, ...changes };
}

export function houseWithout(...fields: string[]): HouseBody {
  return Object.fromEntries(Object.entries(VALID_HOUSE).filter(([field]) => !fields.includes(field)));
}

/** The service on the fixture model (env adds or overrides settings), logger off unless given. */
export async function buildFixtureApp(env: Record<string, string> = {}, options: HousesAppOptions = { logger: false }): Promise<PlatformApp> {
  const settings = readHouseSettings({ MODEL_PATH: FIXTURE_MODEL_PATH, MODEL_SHA256: sha256OfFile(FIXTURE_MODEL_PATH), ...env });
  return buildHousesApp(settings, options);
}

export function postJson(app: PlatformApp, url: string, payload: unknown, headers: Record<string, string> = {}) {
  return app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json', ...headers }, payload: JSON.stringify(payload) });
}
