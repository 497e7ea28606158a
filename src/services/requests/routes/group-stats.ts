import type { FastifyReply, FastifyRequest } from 'fastify';
import type { PlatformApp } from '../../../platform/platform-app.js';
import { ApiError } from '../../../platform/error-registry.js';
import { invalidRequestMessage } from '../../../platform/errors.js';
import { componentRef } from '../../../platform/openapi-components.js';
import type { ListFilters } from '../list-filters.js';
import { BUCKET_KEY_OF, statDays } from '../engine/period-stats.js';
import { GROUP_LIMIT_DEFAULT, GroupQuery as GroupQuerySchema, GroupStatList } from '../schemas.js';
import { GROUP_COLUMNS, GROUP_COLUMNS_MAXIMUM, type GroupColumn, type GroupMeasure, type GroupPeriod, type GroupQuery } from '../engine/group-query.js';
import { DatabaseUnavailableError, type ServiceRequestStore } from '../store/service-request-store.js';
import { REQUEST_EXAMPLES } from '../openapi-examples.js';
import { filteredAnswers, integerTextCheck, readFilters, repeatableParameters, type RequestRouteDependencies, type RouteBudget } from './route-parts.js';

/** The query of the documented example (openapi-examples.json's groupStats). */
export const GROUP_EXAMPLE_QUERY = '/v1/stats/groups?by=borough,complaint_type&period=month&order=-opened&limit=1&created_from=2025-01-01&created_to=2025-03-01';

/** The grouping parameters of a validated query. */
interface GroupParameters {
  by: readonly string[];
  period?: GroupPeriod;
  order?: string;
  limit?: number;
}

const isGroupColumn = (name: string): name is GroupColumn => (GROUP_COLUMNS as readonly string[]).includes(name);

/** The grouping asked for; 422 invalid_request (fields `by`) for a column not known, named twice, or more than two. */
export function readGroupQuery(query: GroupParameters): GroupQuery {
  const names = query.by.flatMap((text) => text.split(','));
  const unknown = names.filter((name) => !isGroupColumn(name));
  const problem =
    unknown.length > 0
      ? `by names no column ${unknown.map((name) => JSON.stringify(name)).join(', ')}: it takes ${GROUP_COLUMNS.join(', ')}`
      : names.length > GROUP_COLUMNS_MAXIMUM
        ? `by names at most ${GROUP_COLUMNS_MAXIMUM} columns`
        : new Set(names).size < names.length
          ? 'by names a column twice'
          : null;
  if (problem !== null) throw new ApiError('invalid_request', { fields: ['by'], message: invalidRequestMessage(problem) });
  const order = query.order ?? 'opened';
  const descending = order.startsWith('-');
  return {
    by: names as GroupColumn[],
    period: query.period ?? null,
    order: (descending ? order.slice(1) : order) as GroupMeasure,
    descending,
    limit: query.limit ?? GROUP_LIMIT_DEFAULT,
  };
}

/**
 * The most rows one answer may hold: `limit` keys times the periods the filtered days span (a key per
 * day over fifteen years would be millions of rows). Counted before any row is read.
 */
export const GROUP_ROWS_MAXIMUM = 200_000;

/** 422 invalid_request (fields limit and period) when `limit` keys of every period of the days asked could pass GROUP_ROWS_MAXIMUM. */
export async function checkRowsBound(store: Pick<ServiceRequestStore, 'dataset'>, filters: ListFilters, query: GroupQuery): Promise<void> {
  if (query.period === null) return;
  const dataset = await store.dataset();
  const days = statDays({ start: dataset.period.start, end: dataset.period.end, snapshotDate: dataset.snapshot_date }, filters);
  const keyOf = query.period === 'year' ? (day: string) => day.slice(0, 4) : BUCKET_KEY_OF[query.period];
  const periods = new Set(days.map(keyOf)).size;
  if (query.limit * periods <= GROUP_ROWS_MAXIMUM) return;
  const problem = `limit ${query.limit} times the ${periods} periods of ${query.period} asked could be more than ${GROUP_ROWS_MAXIMUM.toLocaleString('en-US')} rows: ask fewer keys, a longer period or a shorter created_from/created_to range`;
  throw new ApiError('invalid_request', { fields: ['limit', 'period'], message: invalidRequestMessage(problem) });
}

/** preValidation: `by` given once is made a list of one, as the repeatable filters are. */
function repeatableBy(request: { query: unknown }, _reply: unknown, done: () => void): void {
  const query = request.query as Record<string, unknown> | null | undefined;
  if (query !== null && query !== undefined && typeof query.by === 'string') query.by = [query.by];
  done();
}

/** GET /v1/stats/groups: the matching requests grouped by one or two columns, optionally per period. */
export function registerGroupStatsRoute(app: PlatformApp, { store, caching }: RequestRouteDependencies, rowWalks: RouteBudget): void {
  app.get(
    '/v1/stats/groups',
    {
      ...rowWalks,
      preValidation: [repeatableParameters, repeatableBy, integerTextCheck('query', 'limit')],
      schema: {
        tags: ['statistics'],
        operationId: 'getGroupStats',
        summary: 'Numbers per group',
        description: [
          'The requests matching the filters of GET /v1/service-requests (AND), grouped by the values of one or two columns (`by`), and per',
          'day, ISO week, month or year when `period` is given: for each group the requests opened, closed, closed within 14 days',
          '(days_to_close <= 14) and their share, and the median and 90th percentile (nearest rank) of days_to_close of the closed ones.',
          'Requests without a value form a group of their own (null in `key`). The keys are ordered by `order` and the first `limit` kept;',
          '`others` sums the requests of every key left out, so that items and others always add up to the matching requests.',
          `An answer holds at most ${GROUP_ROWS_MAXIMUM.toLocaleString('en-US')} rows: with a period, \`limit\` times the periods the created range spans must stay within it (else 422 with fields limit and period).`,
          'One column per period with no filter or one on that column (per month or year, also one value of another column), and two columns per month or year with no filter or one on either of them,',
          'ordered by a count or the share and keeping every key, are read from the aggregate summaries;',
          'every other grouping is counted from the row columns: while they load (at start or after a refresh), 503 overloaded with Retry-After.',
          `The example answers ${GROUP_EXAMPLE_QUERY} on the synthetic snapshot.`,
        ].join(' '),
        querystring: GroupQuerySchema,
        response: filteredAnswers(componentRef(GroupStatList, { description: 'The groups', examples: [REQUEST_EXAMPLES.groupStats] })),
      },
    },
    async (request: FastifyRequest, reply: FastifyReply) => {
      const query = readGroupQuery(request.query as GroupParameters);
      const filters = await readFilters(request.query as never, store);
      await checkRowsBound(store, filters, query);
      const snapshotId = await store.snapshotId();
      if (caching.answerNotModified(request, reply, snapshotId)) return reply;
      return caching.sendKept(reply, async () => {
        const groups = await store.groups(filters, query);
        if ((await store.snapshotId()) !== snapshotId) throw new DatabaseUnavailableError(new Error('the snapshot changed while the groups were read'));
        return groups;
      });
    },
  );
}
