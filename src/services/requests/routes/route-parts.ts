import { EQUALITY_FILTERS, NEGATED_FILTERS, NO_FILTERS, readListFilters, resolveSearch, type FilterQuery, type ListFilters } from '../list-filters.js';
import { Type } from 'typebox';
import { ApiError, errorResponses } from '../../../platform/error-registry.js';
import { invalidRequestMessage } from '../../../platform/errors.js';
import type { WorkBudget } from '../../../platform/work-budget.js';
import type { CursorCodec } from '../cursor.js';
import type { EtagCaching } from '../answers/etag-caching.js';
import type { ServiceRequestStore } from '../store/service-request-store.js';
import type { ServiceRequestTexts } from '../answers/serialized-rows.js';

/**
 * What the routes of the requests service share: their dependencies, the checks of raw parameters
 * and the answers every route documents.
 */
export interface RequestRouteDependencies {
  store: ServiceRequestStore;
  texts: ServiceRequestTexts;
  cursors: CursorCodec;
  caching: EtagCaching;
  /** EXPORT_MAX_SECONDS in milliseconds: an export still being sent then is cut. */
  exportMaxMs: number;
}

/** The config of a route with a work budget. */
export type RouteBudget = ReturnType<typeof budgeted> | ReturnType<typeof budgetedBuilds>;

/** A route's config with the key and its work budget (docs/reliability.md, "Work budgets"). */
export function budgeted(workBudget: WorkBudget) {
  return { config: { requiresApiKey: true, workBudget } } as const;
}

/**
 * A route's config with the key and a work budget taken by its answers' builds (EtagCaching.sendKept),
 * not by each request: every request asking for an answer being built joins that build.
 */
export function budgetedBuilds(workBudget: WorkBudget) {
  return { config: { requiresApiKey: true, workBudget, budgetsSharedBuilds: true } } as const;
}

export const secured = { config: { requiresApiKey: true } } as const;

const DIGITS = /^-?[0-9]+$/;

/**
 * Query strings and path parameters are coerced by the platform's validator, which reads ` `, `1e3`
 * or `0x10` as numbers. Integers are written in digits only: checked on the raw text, before validation.
 */
export function integerTextCheck(part: 'params' | 'query', name: string) {
  return (request: { params: unknown; query: unknown }, _reply: unknown, done: (error?: Error) => void): void => {
    const raw = (request[part] as Record<string, unknown> | undefined)?.[name];
    if (typeof raw === 'string' && !DIGITS.test(raw)) {
      done(new ApiError('invalid_request', { fields: [name], message: invalidRequestMessage(`${name} must be an integer`) }));
      return;
    }
    done();
  };
}

/**
 * preValidation: a repeatable filter given once arrives as text; it is made a list of one, so that
 * the schema validates every value the same way (`borough=queens` and `borough=queens&borough=bronx`).
 */
export function repeatableParameters(request: { query: unknown }, _reply: unknown, done: () => void): void {
  listRepeatableParameters(request.query as Record<string, unknown> | null | undefined);
  done();
}

function listRepeatableParameters(query: Record<string, unknown> | null | undefined): void {
  if (query === undefined || query === null) return;
  for (const name of [...EQUALITY_FILTERS, ...NEGATED_FILTERS]) {
    const value = query[name];
    if (typeof value === 'string') query[name] = [value];
  }
}

/**
 * Repeated filters make long URLs possible (50 values of 200 characters each): a request line and
 * headers over Node's 16 KiB are answered 431 by the platform before the route is found.
 */
export const tooLong = errorResponses('request_header_too_large');

export const filterErrors = errorResponses('invalid_request', 'invalid_range');

export const common = {
  304: Type.Null({ description: 'Not Modified: If-None-Match matches the ETag; no body' }),
  // A store's DatabaseUnavailableError reaches the platform's error handler: 503 database_unavailable.
  ...errorResponses('unauthorized', 'database_unavailable'),
};

/** The answers of a route that takes the filters of the list (count, facets, statistics): `answer` is its 200. */
export function filteredAnswers<T>(answer: T) {
  return { 200: answer, ...common, ...tooLong, ...filterErrors };
}

export const JSON_TYPE = 'application/json; charset=utf-8';

export const csvText = Type.String({
  description:
    'RFC 4180 CSV with a header row. Safe for spreadsheets: a text cell that begins with =, +, -, @, TAB or CR is written with a ' +
    "leading ' (OWASP's rule against CSV injection), so that it is shown as text, never run as a formula; numbers (a negative one " +
    'included), dates and ids are written unchanged.',
});

/**
 * The normalized filters of a validated query, `q` resolved to the values it matches: every value
 * of each searched column, as the snapshot's whole facets list them (its summaries: no row is read).
 */
export function readFilters(query: FilterQuery, store: ServiceRequestStore): Promise<ListFilters> {
  const filters = readListFilters(query);
  return resolveSearch(filters, async (column) => (await store.facet(column, NO_FILTERS)).map(({ value }) => value));
}
