import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { REPO_ROOT } from '../../support/http.js';
export const FIXTURES = join(REPO_ROOT, 'test/fixtures/nyc311');
export const STANDARD_41_FIXTURE = join(FIXTURES, 'dot-2025-standard-41-columns.csv');
export const COUNCIL_DISTRICT_FIXTURE = join(FIXTURES, 'dot-2025-with-council-district.csv');
export const MISSING_COLUMNS_FIXTURE = join(FIXTURES, 'missing-borough-and-status.csv');
export const MALFORMED_FIXTURE = join(FIXTURES, 'malformed-records.csv');

export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** The real NYC 311 sample: $SHARED_DATA_DIR/nyc311/... (default <repo>/../shared/data). */
export const SHARED_DATA_DIR = process.env.SHARED_DATA_DIR ?? resolve(REPO_ROOT, '../shared/data');
export const REAL_SAMPLE = join(SHARED_DATA_DIR, 'nyc311/311_Service_Requests_sample_2022-05-01_fedhere-PyBOOT.csv');
export const realSampleExists = (): boolean => existsSync(REAL_SAMPLE);

/** A schema name of its own for one test run. */
export function isolatedSchemaName(prefix: string): string {
  return `${prefix}_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
}
