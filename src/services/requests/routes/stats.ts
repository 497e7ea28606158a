import { setImmediate as nextTurn } from 'node:timers/promises';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { PlatformApp } from '../../../platform/platform-app.js';
import { componentRef } from '../../../platform/openapi-components.js';
import { NO_FILTERS, type ListFilters } from '../list-filters.js';
import { periodNumbersOf } from '../engine/summary-answers.js';
import { addDays } from '../engine/period-stats.js';
import type { SummaryUnit } from '../../../snapshot/index.js';
import { DailyStatList, FilterQuery, MonthlyStatList, WeeklyStatList } from '../schemas.js';
import { DatabaseUnavailableError, type DailyScope, type DailyStatRecord, type ServiceRequestStore } from '../store/service-request-store.js';
import { TimeSlice } from '../../../platform/work-budget.js';
import { REQUEST_EXAMPLES } from '../openapi-examples.js';
import { filteredAnswers, readFilters, repeatableParameters, type RequestRouteDependencies, type RouteBudget } from './route-parts.js';

/**
 * Days per read of the precomputed daily numbers: a fraction of a millisecond of work, so that a time
 * slice ends close to its TIME_SLICE_MS (bench/README.md, "Figures behind source comments").
 */
const DAYS_PER_READ = 128;

/** The table of precomputed daily numbers answers a filtering by at most one borough and one complaint type. */
function precomputedScope(filters: ListFilters): { borough: string | null; complaint_type: string | null } | null {
  const single = (values: ListFilters['borough']): string | null | undefined => {
    if (values === null) return null;
    return values.length === 1 && typeof values[0] === 'string' ? values[0] : undefined;
  };
  const borough = single(filters.borough);
  const complaintType = single(filters.complaint_type);
  if (borough === undefined || complaintType === undefined) return null;
  const others = { ...filters, borough: null, complaint_type: null };
  const unfiltered = (Object.keys(NO_FILTERS) as (keyof ListFilters)[]).every((name) => others[name] === null);
  return unfiltered ? { borough, complaint_type: complaintType } : null;
}

/** The numbers per day, ISO week or month of the matching requests, over the days the filters leave. */
async function periodNumbers(store: ServiceRequestStore, filters: ListFilters, unit: SummaryUnit) {
  const dataset = await store.dataset();
  const period = { start: dataset.period.start, end: dataset.period.end, snapshotDate: dataset.snapshot_date };
  return periodNumbersOf(store, filters, unit, period);
}

/** The precomputed table's days of the period, read a part at a time: years of days give way to other requests between parts. */
async function precomputedDays(store: ServiceRequestStore, scope: DailyScope): Promise<DailyStatRecord[]> {
  const { period } = await store.dataset();
  // The reads start in a turn of their own: the request's own start ran in this one.
  await nextTurn();
  const slice = new TimeSlice();
  const days: DailyStatRecord[] = [];
  for (let first = period.start; first <= period.end; first = addDays(first, DAYS_PER_READ)) {
    await slice.pause();
    days.push(...(await store.dailyStats(scope, { first, last: addDays(first, DAYS_PER_READ - 1) })));
  }
  return days;
}

/** The daily numbers: the snapshot's precomputed table when it has them; else counted from the matching rows, the same way. */
async function dailyNumbers(store: ServiceRequestStore, filters: ListFilters): Promise<DailyStatRecord[]> {
  const scope = precomputedScope(filters);
  if (scope !== null) return precomputedDays(store, scope);
  // Years of days: the fields named one by one (a copy by rest and spread costs several times more).
  return (await periodNumbers(store, filters, 'day')).map((day) => ({
    date: day.key,
    opened: day.opened,
    closed_within_14_days: day.closed_within_14_days,
    share_closed_within_14_days: day.share_closed_within_14_days,
    median_days_to_close: day.median_days_to_close,
    complete: day.complete,
  }));
}

function statsDescription(unit: string): string {
  return [
    `One row per ${unit} of the snapshot period (narrowed by created_from and created_to to the days they touch): requests opened,`,
    'closed within 14 days (days_to_close <= 14), their share, and the median days to close of the requests opened then.',
    'The filters of GET /v1/service-requests (AND). `complete` is false while the numbers can still change: a request opened on a',
    'day is closed within 14 days if it closes by the end of day + 14, so the last two weeks before the snapshot date are incomplete',
    '(their share closed in time is low only because the snapshot was taken before their window ended).',
  ].join(' ');
}

/** One statistics route: its path, its period's name in the description, its operation and how its rows are built. */
interface StatsRoute {
  path: string;
  unit: string;
  operationId: string;
  summary: string;
  answer: unknown;
  build: (store: ServiceRequestStore, filters: ListFilters) => Promise<unknown[]>;
}

function registerStatsRoute(app: PlatformApp, { store, caching }: RequestRouteDependencies, rowWalks: RouteBudget, route: StatsRoute): void {
  app.get(
    route.path,
    {
      ...rowWalks,
      preValidation: repeatableParameters,
      schema: {
        tags: ['statistics'],
        operationId: route.operationId,
        summary: route.summary,
        description: statsDescription(route.unit),
        querystring: FilterQuery,
        response: filteredAnswers(route.answer as never),
      },
    },
    async (request: FastifyRequest, reply: FastifyReply) => {
      const filters = await readFilters(request.query as never, store);
      const snapshotId = await store.snapshotId();
      if (caching.answerNotModified(request, reply, snapshotId)) return reply;
      return caching.sendKept(reply, async () => {
        const items = await route.build(store, filters);
        // The build reads in several steps: a refresh landing between two of them would mix two
        // snapshots in one answer (tagged with the first one's ETag).
        if ((await store.snapshotId()) !== snapshotId) throw new DatabaseUnavailableError(new Error('the snapshot changed while the numbers were read'));
        return { items };
      });
    },
  );
}

const STATS_ROUTES: readonly StatsRoute[] = [
  {
    path: '/v1/stats/daily',
    unit: 'day',
    operationId: 'getDailyStats',
    summary: 'Daily numbers',
    answer: componentRef(DailyStatList, { description: 'The daily numbers', examples: [REQUEST_EXAMPLES.dailyStats] }),
    build: dailyNumbers,
  },
  {
    path: '/v1/stats/weekly',
    unit: 'ISO week (Monday to Sunday)',
    operationId: 'getWeeklyStats',
    summary: 'Weekly numbers',
    answer: componentRef(WeeklyStatList, { description: 'The numbers per ISO week', examples: [REQUEST_EXAMPLES.weeklyStats] }),
    build: async (store, filters) => (await periodNumbers(store, filters, 'week')).map(({ key, ...numbers }) => ({ week: key, ...numbers })),
  },
  {
    path: '/v1/stats/monthly',
    unit: 'month',
    operationId: 'getMonthlyStats',
    summary: 'Monthly numbers',
    answer: componentRef(MonthlyStatList, { description: 'The numbers per month', examples: [REQUEST_EXAMPLES.monthlyStats] }),
    build: async (store, filters) => (await periodNumbers(store, filters, 'month')).map(({ key, ...numbers }) => ({ month: key, ...numbers })),
  },
];

/** GET /v1/stats/daily, /weekly and /monthly: the numbers per period of the matching requests. */
export function registerStatsRoutes(app: PlatformApp, dependencies: RequestRouteDependencies, rowWalks: RouteBudget): void {
  for (const route of STATS_ROUTES) registerStatsRoute(app, dependencies, rowWalks, route);
}
