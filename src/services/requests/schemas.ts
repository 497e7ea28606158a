import { Type } from 'typebox';
import { componentRef, namedComponent, nullableComponentRef, type ComponentSchema } from '../../platform/openapi-components.js';
import { LOCAL_DATE_OR_DATE_TIME_PATTERN } from './list-filters.js';
import { CURSOR_MAX_LENGTH } from './cursor.js';

/** service-requests.md, "Resources and their fields", and the decisions of docs/requests.md. */
export const BOROUGHS = ['bronx', 'brooklyn', 'manhattan', 'queens', 'staten_island'] as const;
export const STATUSES = ['open', 'assigned', 'in_progress', 'pending', 'closed'] as const;
export const CHANNELS = ['online', 'phone', 'mobile', 'other'] as const;

export const LIMIT_DEFAULT = 50;
export const LIMIT_MAXIMUM = 1000;
export const COMPLAINT_TYPE_MAX_LENGTH = 200;

const TIMESTAMP_PATTERN = '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}$';
const DATE_PATTERN = '^[0-9]{4}-[0-9]{2}-[0-9]{2}$';

/** A value or null, as a JSON-schema type list (OpenAPI 3.1; fast to serialize). */
function nullable<T>(schema: Record<string, unknown> & { type: string }) {
  return Type.Unsafe<T | null>({ ...schema, type: [schema.type, 'null'] });
}

/** A string from a fixed list, as a named component (OpenAPI: `type` and `enum`): one type in generated clients. */
function stringEnum<const T extends readonly string[]>(name: string, values: T, description: string) {
  return namedComponent(name, Type.Unsafe<T[number]>({ type: 'string', enum: [...values], description }));
}

const boroughDescription = 'bronx, brooklyn, manhattan, queens or staten_island (lower case)';
const statusDescription = 'open, assigned, in_progress, pending or closed';

export const Borough = stringEnum('Borough', BOROUGHS, `A borough of New York City: ${boroughDescription}`);
export const Status = stringEnum('Status', STATUSES, `Status of a request: ${statusDescription}`);
export const Channel = stringEnum('Channel', CHANNELS, 'How the request was made: online, phone, mobile or other');

/** A query parameter of a named enum type, with its own description. */
function enumParameter<T extends ComponentSchema>(schema: T, description: string) {
  return Type.Optional(componentRef(schema, { description }));
}

/** The component `name`: an answer `{items: [...]}` of the component `item`. */
function itemList<T extends ComponentSchema>(name: string, item: T, itemsDescription: string, description: string) {
  return namedComponent(
    name,
    Type.Object({ items: Type.Array(componentRef(item), { description: itemsDescription }) }, { additionalProperties: false, description }),
  );
}

export const ServiceRequest = namedComponent(
  'ServiceRequest',
  Type.Object(
    {
      id: Type.Integer({ description: 'Identifier of the request, unique' }),
      created_at: Type.String({ pattern: TIMESTAMP_PATTERN, description: 'When the request was made, local time of New York, YYYY-MM-DDTHH:MM:SS' }),
      closed_at: nullable<string>({ type: 'string', pattern: TIMESTAMP_PATTERN, description: 'When it was closed, same format; null when not closed' }),
      status: componentRef(Status, { description: statusDescription }),
      complaint_type: nullable<string>({ type: 'string', description: 'What the request is about' }),
      descriptor: nullable<string>({ type: 'string', description: 'Detail of the complaint' }),
      location_type: nullable<string>({ type: 'string', description: 'Kind of place' }),
      borough: nullableComponentRef(Borough, `${boroughDescription}; null when not recorded`),
      community_board: nullable<string>({ type: 'string', description: 'Community board text, e.g. 04 BRONX' }),
      council_district: nullable<number>({ type: 'integer', description: 'Council district' }),
      incident_zip: nullable<string>({ type: 'string', description: 'Postal code as text' }),
      channel: nullableComponentRef(Channel, 'online, phone, mobile or other; null when not recorded'),
      latitude: nullable<number>({ type: 'number', description: 'Place, often an intersection' }),
      longitude: nullable<number>({ type: 'number', description: 'Place' }),
      days_to_close: nullable<number>({ type: 'number', description: 'closed_at minus created_at in days, 2 decimals' }),
    },
    {
      additionalProperties: false,
      description: 'One cleaned service request. A value that was not recorded is null; the row is never hidden.',
    },
  ),
);

export const ServiceRequestPage = namedComponent(
  'ServiceRequestPage',
  Type.Object(
    {
      items: Type.Array(componentRef(ServiceRequest), { description: 'At most `limit` requests, by created_at then id' }),
      next_cursor: nullable<string>({ type: 'string', maxLength: CURSOR_MAX_LENGTH, description: 'Cursor of the next page; null on the last page' }),
    },
    { additionalProperties: false, description: 'A page of service requests' },
  ),
);

const timeBound = (description: string) =>
  Type.String({
    pattern: LOCAL_DATE_OR_DATE_TIME_PATTERN,
    description: `${description}. YYYY-MM-DD (midnight) or YYYY-MM-DDTHH:MM:SS with at most 6 fractional digits, local time, without zone (a Z or an offset is refused)`,
  });

export const ServiceRequestListQuery = Type.Object(
  {
    borough: enumParameter(Borough, `Equals; ${boroughDescription}`),
    complaint_type: Type.Optional(
      Type.String({ minLength: 1, maxLength: COMPLAINT_TYPE_MAX_LENGTH, description: 'Equals (exact text, as in GET /v1/complaint-types)' }),
    ),
    status: enumParameter(Status, `Equals; ${statusDescription}`),
    created_from: Type.Optional(timeBound('created_at at or after this value (inclusive)')),
    created_to: Type.Optional(timeBound('created_at before this value (exclusive)')),
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: LIMIT_MAXIMUM, default: LIMIT_DEFAULT, description: 'Page size, 1 to 1000, default 50' }),
    ),
    cursor: Type.Optional(
      Type.String({ maxLength: CURSOR_MAX_LENGTH, description: 'next_cursor of the previous page, unchanged, with the same filter values' }),
    ),
  },
  { additionalProperties: false },
);

export const ServiceRequestIdParams = Type.Object(
  { id: Type.Integer({ description: 'Identifier of the request' }) },
  { additionalProperties: false },
);

export const NoQuery = Type.Object({}, { additionalProperties: false });

export const ComplaintTypeCount = namedComponent(
  'ComplaintTypeCount',
  Type.Object(
    {
      complaint_type: Type.String({ description: 'Complaint type' }),
      count: Type.Integer({ minimum: 1, description: 'Requests of this type in the snapshot' }),
    },
    { additionalProperties: false, description: 'A complaint type and its number of requests' },
  ),
);

export const ComplaintTypeList = itemList(
  'ComplaintTypeList',
  ComplaintTypeCount,
  'Every complaint type, largest count first, then by name; requests without a type are not counted',
  'The complaint types with their counts',
);

export const DailyStatsQuery = Type.Object(
  {
    borough: enumParameter(Borough, `Only requests of this borough; ${boroughDescription}`),
    complaint_type: Type.Optional(
      Type.String({ minLength: 1, maxLength: COMPLAINT_TYPE_MAX_LENGTH, description: 'Only requests of this complaint type (exact text)' }),
    ),
  },
  { additionalProperties: false },
);

export const DailyStat = namedComponent(
  'DailyStat',
  Type.Object(
    {
      date: Type.String({ pattern: DATE_PATTERN, description: 'Local date of created_at, YYYY-MM-DD' }),
      opened: Type.Integer({ minimum: 0, description: 'Requests created that day' }),
      closed_within_14_days: Type.Integer({ minimum: 0, description: 'Of those, requests with days_to_close <= 14' }),
      share_closed_within_14_days: nullable<number>({
        type: 'number',
        minimum: 0,
        maximum: 1,
        description: 'closed_within_14_days / opened, 4 decimals; null when opened is 0',
      }),
      median_days_to_close: nullable<number>({
        type: 'number',
        description: 'Median days_to_close of the requests created that day that are closed, 2 decimals; null when none',
      }),
    },
    { additionalProperties: false, description: 'The numbers of one day' },
  ),
);

export const DailyStatList = itemList(
  'DailyStatList',
  DailyStat,
  'One row per day of the snapshot period (181 for January to June 2025), oldest first, days without requests included',
  'The daily numbers',
);

export const Dataset = namedComponent(
  'Dataset',
  Type.Object(
    {
      snapshot_id: Type.String({ description: 'Identifier of the snapshot content; changes with any row or rule' }),
      snapshot_date: Type.String({ pattern: DATE_PATTERN, description: 'The day the export reflects; statuses are as of that day' }),
      source: Type.Object(
        {
          kind: Type.String({ description: 'synthetic or file' }),
          description: Type.String({ description: 'What the source is, in words' }),
          dataset: Type.String({ description: 'The NYC Open Data dataset whose layout the export has (erm2-nwe9)' }),
          file_name: Type.String({ description: 'File name of the export' }),
          sha256: Type.String({ description: 'SHA-256 of the raw export' }),
          seed: nullable<number>({ type: 'integer', description: 'Seed of the synthetic generator; null for a real export' }),
          generator_version: nullable<string>({ type: 'string', description: 'Version of the synthetic generator; null for a real export' }),
          layout: Type.String({ description: 'Column layout found in the export' }),
        },
        { additionalProperties: false },
      ),
      row_count: Type.Integer({ minimum: 0, description: 'Requests in the snapshot' }),
      raw_rows_read: Type.Integer({ minimum: 0, description: 'Records read from the export before cleaning' }),
      created_at_min: nullable<string>({ type: 'string', pattern: TIMESTAMP_PATTERN, description: 'Earliest created_at' }),
      created_at_max: nullable<string>({ type: 'string', pattern: TIMESTAMP_PATTERN, description: 'Latest created_at' }),
      period: Type.Object(
        {
          start: Type.String({ pattern: DATE_PATTERN, description: 'First day of the period (inclusive)' }),
          end: Type.String({ pattern: DATE_PATTERN, description: 'Last day of the period (inclusive)' }),
        },
        { additionalProperties: false, description: 'The days covered by GET /v1/stats/daily' },
      ),
      cleaning_rules: Type.Array(
        Type.Object(
          {
            id: Type.String({ description: 'Identifier of the rule' }),
            kind: Type.String({ description: 'filter, removal or transformation' }),
            description: Type.String({ description: 'What the rule does' }),
            rows_removed: Type.Integer({ minimum: 0, description: 'Rows this rule removed' }),
            values_changed: Type.Integer({ minimum: 0, description: 'Values this rule changed in the kept rows' }),
            applied: Type.Boolean({ description: 'False when the rule was switched off for this snapshot' }),
          },
          { additionalProperties: false },
        ),
        { description: 'The cleaning rules in the order they were applied' },
      ),
    },
    { additionalProperties: false, description: 'The snapshot: source, date, size and cleaning' },
  ),
);

/** The named schemas of the service (OpenAPI components). */
export const REQUEST_COMPONENTS = [
  Borough,
  Status,
  Channel,
  ServiceRequest,
  ServiceRequestPage,
  ComplaintTypeCount,
  ComplaintTypeList,
  DailyStat,
  DailyStatList,
  Dataset,
];
