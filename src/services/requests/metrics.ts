import type { Registry } from 'prom-client';
import { gaugeReadOnScrape } from '../../platform/metrics.js';
import type { ServiceRequestStore } from './store/service-request-store.js';

/**
 * The service-request API's own series: the snapshot served (rows, id, synthetic or real) and, on
 * PostgreSQL, the pool's connections. Read from the store when scraped (the metadata is kept after
 * its first read: the snapshot is frozen).
 */
export function registerServiceRequestMetrics(registry: Registry, store: ServiceRequestStore): void {
  gaugeReadOnScrape(
    registry,
    { name: 'requests_snapshot_rows', help: 'Requests in the snapshot served; absent while the database cannot be read', labelNames: ['snapshot_id', 'source_kind'] },
    async (gauge) => {
      const dataset = await store.dataset().catch(() => null);
      if (dataset) gauge.set({ snapshot_id: dataset.snapshot_id, source_kind: dataset.source.kind }, dataset.row_count);
    },
  );
  const poolUse = store.poolUse?.bind(store);
  if (!poolUse) return;
  gaugeReadOnScrape(
    registry,
    { name: 'requests_database_pool_connections', help: 'PostgreSQL pool: connections by state (in_use, idle) and queries waiting for one', labelNames: ['state'] },
    (gauge) => {
      const use = poolUse();
      gauge.set({ state: 'in_use' }, use.total - use.idle);
      gauge.set({ state: 'idle' }, use.idle);
      gauge.set({ state: 'waiting' }, use.waiting);
    },
  );
}
