import type { PlatformApp } from '../../../platform/platform-app.js';
import { registerHealthRoutes } from '../../../platform/health.js';
import { WorkBudget } from '../../../platform/work-budget.js';
import { registerDatasetRoute } from './dataset.js';
import { registerExportRoute } from './export.js';
import { registerFacetRoutes } from './facets.js';
import { registerListRoutes } from './list.js';
import { registerOneRequestRoute } from './one-request.js';
import { budgeted, budgetedBuilds, type RequestRouteDependencies } from './route-parts.js';
import { ROW_WALK_LIMITS } from '../engine/sqlite-row-walks.js';
import { registerStatsRoutes } from './stats.js';
import { registerCellsRoute } from './cells.js';
import { registerGroupStatsRoute } from './group-stats.js';

export type { RequestRouteDependencies } from './route-parts.js';

/**
 * The routes of the service-request data API, one module per resource: list.ts (/v1/service-requests,
 * /count), export.ts (/v1/exports/service-requests), one-request.ts (/v1/service-requests/:id),
 * facets.ts (/v1/complaint-types, /v1/facets), stats.ts (/v1/stats/daily, /weekly, /monthly),
 * group-stats.ts (/v1/stats/groups), cells.ts (/v1/stats/cells), dataset.ts (/v1/dataset); the
 * dashboard's pages are in dashboard-pages.ts. Registered in this order, the order of the OpenAPI paths.
 */
export function registerServiceRequestRoutes(app: PlatformApp, dependencies: RequestRouteDependencies): void {
  // The work budgets (docs/reliability.md, "Work budgets"): pages assemble up to 1000 rows (and may
  // compress them); exports stream for seconds; counts, facets and statistics walk the matching rows.
  const pages = budgeted(new WorkBudget('pages', { concurrency: 4, queue: 64, maxWaitMs: 2_000 }));
  const exports = budgeted(new WorkBudget('exports', { concurrency: 2, queue: 32, maxWaitMs: 10_000 }));
  // Row walks run off the event loop (the walk workers, the database): two builds at once, one per
  // walk worker; a build gives its place back while its scan waits in the walk pool (which runs the
  // cheapest waiting scan first) and takes one again, first in the queue, for the rest of its work.
  // A build waits for a place at most as long as a walk may run. The builds take the places, not the
  // requests: the ones asking for an answer being built join it.
  const rowWalks = budgetedBuilds(new WorkBudget('row walks', { concurrency: ROW_WALK_LIMITS.workers, queue: 32, maxWaitMs: ROW_WALK_LIMITS.deadlineMs }));
  registerHealthRoutes(app, {
    unavailableCode: 'database_unavailable',
    check: () => dependencies.store.ping(),
  });
  registerListRoutes(app, dependencies, pages, rowWalks);
  registerExportRoute(app, dependencies, exports);
  registerOneRequestRoute(app, dependencies);
  registerFacetRoutes(app, dependencies, rowWalks);
  registerStatsRoutes(app, dependencies, rowWalks);
  registerGroupStatsRoute(app, dependencies, rowWalks);
  registerCellsRoute(app, dependencies, rowWalks);
  registerDatasetRoute(app, dependencies);
}
