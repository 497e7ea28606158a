import { setImmediate as nextTurn } from 'node:timers/promises';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { PlatformApp } from '../../../platform/platform-app.js';
import { componentRef } from '../../../platform/openapi-components.js';
import { NO_FILTERS, readListFilters, type ListFilters } from '../list-filters.js';
import { periodNumbersOf } from '../engine/summary-answers.js';
import { addDays } from '../engine/period-stats.js';
import type { SummaryUnit } from '../../../snapshot/index.js';
import { DailyStatList, FilterQuery, MonthlyStatList, WeeklyStatList } from '../schemas.js';
import { DatabaseUnavailableError, type DailyScope, type DailyStatRecord } from '../store/service-request-store.js';
import { TimeSlice } from '../../../platform/work-budget.js';
import { REQUEST_EXAMPLES } from '../openapi-examples.js';
import { filteredAnswers, repeatableParameters, type RequestRouteDependencies, type RouteBudget } from './route-parts.js';

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

/** GET /v1/stats/daily, /weekly and /monthly: the numbers per period of the matching requests. */
export function registerStatsRoutes(app: PlatformApp, { store, caching }: RequestRouteDependencies, rowWalks: RouteBudget): void {
  /** The numbers per day, ISO week or month of the matching requests, over the days the filters leave. */
  const periodNumbers = async (filters: ListFilters, unit: SummaryUnit) => {
    const dataset = await store.dataset();
    const period = { start: dataset.period.start, end: dataset.period.end, snapshotDate: dataset.snapshot_date };
    return periodNumbersOf(store, filters, unit, period);
  };
  /** The precomputed table's days of the period, read a part at a time: years of days give way to other requests between parts. */
  const precomputedDays = async (scope: DailyScope): Promise<DailyStatRecord[]> => {
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
  };
  const statsDescription = (unit: string): string =>
    [
      `One row per ${unit} of the snapshot period (narrowed by created_from and created_to to the days they touch): requests opened,`,
      'closed within 14 days (days_to_close <= 14), their share, and the median days to close of the requests opened then.',
      'The filters of GET /v1/service-requests (AND). `complete` is false while the numbers can still change: a request opened on a',
      'day is closed within 14 days if it closes by the end of day + 14, so the last two weeks before the snapshot date are incomplete',
      '(their share closed in time is low only because the snapshot was taken before their window ended).',
    ].join(' ');
  const statsRoute = (
    path: string,
    unit: string,
    operation: { operationId: string; summary: string; answer: unknown },
    build: (filters: ListFilters) => Promise<unknown[]>,
  ) =>
    app.get(
      path,
      {
        ...rowWalks,
        preValidation: repeatableParameters,
        schema: {
          tags: ['statistics'],
          operationId: operation.operationId,
          summary: operation.summary,
          description: statsDescription(unit),
          querystring: FilterQuery,
          response: filteredAnswers(operation.answer as never),
        },
      },
      async (request: FastifyRequest, reply: FastifyReply) => {
        const filters = readListFilters(request.query as never);
        const snapshotId = await store.snapshotId();
        if (caching.answerNotModified(request, reply, snapshotId)) return reply;
        return caching.sendKept(reply, async () => {
          const items = await build(filters);
          // The build reads in several steps: a refresh landing between two of them would mix two
          // snapshots in one answer (tagged with the first one's ETag).
          if ((await store.snapshotId()) !== snapshotId) throw new DatabaseUnavailableError(new Error('the snapshot changed while the numbers were read'));
          return { items };
        });
      },
    );

  const daily = { operationId: 'getDailyStats', summary: 'Daily numbers', answer: componentRef(DailyStatList, { description: 'The daily numbers', examples: [REQUEST_EXAMPLES.dailyStats] }) };
  statsRoute('/v1/stats/daily', 'day', daily, async (filters): Promise<DailyStatRecord[]> => {
    const scope = precomputedScope(filters);
    // The snapshot's precomputed table when it has the numbers; else counted from the matching rows, the same way.
    if (scope !== null) return precomputedDays(scope);
    // Years of days: the fields named one by one (a copy by rest and spread costs several times more).
    return (await periodNumbers(filters, 'day')).map((day) => ({
      date: day.key,
      opened: day.opened,
      closed_within_14_days: day.closed_within_14_days,
      share_closed_within_14_days: day.share_closed_within_14_days,
      median_days_to_close: day.median_days_to_close,
      complete: day.complete,
    }));
  });
  const weekly = { operationId: 'getWeeklyStats', summary: 'Weekly numbers', answer: componentRef(WeeklyStatList, { description: 'The numbers per ISO week', examples: [REQUEST_EXAMPLES.weeklyStats] }) };
  statsRoute('/v1/stats/weekly', 'ISO week (Monday to Sunday)', weekly, async (filters) =>
    (await periodNumbers(filters, 'week')).map(({ key, ...numbers }) => ({ week: key, ...numbers })),
  );
  const monthly = { operationId: 'getMonthlyStats', summary: 'Monthly numbers', answer: componentRef(MonthlyStatList, { description: 'The numbers per month', examples: [REQUEST_EXAMPLES.monthlyStats] }) };
  statsRoute('/v1/stats/monthly', 'month', monthly, async (filters) =>
    (await periodNumbers(filters, 'month')).map(({ key, ...numbers }) => ({ month: key, ...numbers })),
  );
}
