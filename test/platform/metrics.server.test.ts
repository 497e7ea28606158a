import { describe, expect, it } from 'vitest';
import { FIXTURE_SNAPSHOT_ID, fixtureDuringSuite } from '../requests/support/fixture-database.js';
import { startTestApp } from '../requests/support/requests-app.js';
import { METRICS_KEY, scrape, valueOf } from './metrics-scrape.js';

describe('GET /metrics (METRICS_KEY) of the requests service on PostgreSQL', () => {
  const postgres = fixtureDuringSuite('postgres');

  it('PostgreSQL: the pool use as well', async () => {
    const { app, get } = await startTestApp(postgres.databaseUrl, { METRICS_KEY });
    expect((await get('/v1/dataset')).statusCode).toBe(200);
    const text = await scrape(app);
    expect(valueOf(text, 'requests_snapshot_rows', `snapshot_id="${FIXTURE_SNAPSHOT_ID}"`)).toBe(postgres.rows.length);
    expect(text).toMatch(/^requests_database_pool_connections\{state="idle",service="requests"\} [1-9]/m);
    expect(text).toMatch(/^requests_database_pool_connections\{state="in_use",service="requests"\} 0$/m);
    await app.close();
  });
});
