import { Type } from 'typebox';
import { componentRef, namedComponent, nullableComponentRef, type ComponentSchema } from '../../platform/openapi-components.js';
import { BBOX_PATTERN, EQUALITY_FILTERS, LOCAL_DATE_OR_DATE_TIME_PATTERN, MAX_RADIUS_M, NEAR_PATTERN, NULL_SELECTABLE, NULL_SELECTOR, negationOf, type EqualityFilter, type NegatedFilter } from './list-filters.js';
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

export const GeoJsonFeature = namedComponent(
  'GeoJsonFeature',
  Type.Object(
    {
      type: Type.Literal('Feature'),
      id: Type.Integer({ description: 'The request id' }),
      geometry: Type.Unsafe<unknown>({
        type: ['object', 'null'],
        description: 'A Point with coordinates [longitude, latitude]; null when the request has no location',
      }),
      properties: componentRef(ServiceRequest),
    },
    { additionalProperties: false, description: 'One service request as a GeoJSON Feature' },
  ),
);

export const GeoJsonPage = namedComponent(
  'GeoJsonPage',
  Type.Object(
    {
      type: Type.Literal('FeatureCollection'),
      features: Type.Array(componentRef(GeoJsonFeature), { description: 'One Feature per request, by created_at then id' }),
      next_cursor: Type.Optional(
        nullable<string>({ type: 'string', maxLength: CURSOR_MAX_LENGTH, description: 'Cursor of the next page; null on the last page (absent in an export)' }),
      ),
    },
    { description: 'GeoJSON (RFC 7946) FeatureCollection of the requests' },
  ),
);

const timeBound = (description: string) =>
  Type.String({
    pattern: LOCAL_DATE_OR_DATE_TIME_PATTERN,
    description: `${description}. YYYY-MM-DD (midnight) or YYYY-MM-DDTHH:MM:SS with at most 6 fractional digits, local time, without zone (a Z or an offset is refused)`,
  });

/** At most this many values of one repeated filter. */
export const FILTER_VALUES_MAXIMUM = 50;

/**
 * A filter that may be given several times (`borough=queens&borough=bronx`: any of them). A single
 * value arrives as a list of one (repeatable-parameters.ts), so the list is what is validated.
 */
function repeatable(item: Record<string, unknown>, description: string, several = 'any of them matches') {
  return Type.Optional(
    Type.Unsafe<string[]>({
      type: 'array',
      items: item,
      minItems: 1,
      maxItems: FILTER_VALUES_MAXIMUM,
      description: `${description}. Repeat the parameter for several values (${several}), at most ${FILTER_VALUES_MAXIMUM}`,
    }),
  );
}

const noneText = `; \`${NULL_SELECTOR}\` selects the requests without one`;

/** The accepted values of each equality filter, and what it selects. */
const EQUALITY_ITEMS: Record<EqualityFilter, [item: Record<string, unknown>, description: string]> = {
  borough: [{ type: 'string', enum: [...BOROUGHS, NULL_SELECTOR] }, `Equals; ${boroughDescription}${noneText}`],
  complaint_type: [
    { type: 'string', minLength: 1, maxLength: COMPLAINT_TYPE_MAX_LENGTH },
    `Equals (exact text, as in GET /v1/complaint-types)${noneText} (no complaint type is spelled \`${NULL_SELECTOR}\`)`,
  ],
  status: [{ type: 'string', enum: [...STATUSES] }, `Equals; ${statusDescription}`],
  channel: [{ type: 'string', enum: [...CHANNELS, NULL_SELECTOR] }, `Equals; online, phone, mobile or other${noneText}`],
  council_district: [{ type: 'string', pattern: '^[0-9]{1,4}$' }, 'Equals; a council district number, digits only'],
  incident_zip: [{ type: 'string', pattern: '^[0-9]{5}$' }, 'Equals; a 5-digit postal code'],
  descriptor: [{ type: 'string', minLength: 1, maxLength: COMPLAINT_TYPE_MAX_LENGTH }, 'Equals (exact text, as in GET /v1/facets?field=descriptor)'],
  community_board: [
    { type: 'string', minLength: 1, maxLength: COMPLAINT_TYPE_MAX_LENGTH },
    `Equals (exact text, as in GET /v1/facets?field=community_board, e.g. \`01 BROOKLYN\`)${noneText}`,
  ],
};

/** The negation of each equality filter: the same values, any but them. */
function negations() {
  return Object.fromEntries(
    EQUALITY_FILTERS.map((name) => [
      negationOf(name),
      repeatable(
        EQUALITY_ITEMS[name][0],
        `Not equal: the requests whose ${name} is none of these values (a value no request has excludes nothing); ` +
          (NULL_SELECTABLE.includes(name)
            ? `the requests without one match unless \`${NULL_SELECTOR}\` is among the values`
            : `the requests without one always match (\`${NULL_SELECTOR}\` is not offered for this filter)`),
        'none of them matches',
      ),
    ]),
  ) as Record<NegatedFilter, ReturnType<typeof repeatable>>;
}

const daysBound = (description: string, example: number) => Type.Optional(Type.Number({ minimum: 0, maximum: 100_000, examples: [example], description }));

/** The filters of the list, the count, the export, the facets and the statistics (AND of all given). */
export const FILTER_PROPERTIES = {
  ...(Object.fromEntries(EQUALITY_FILTERS.map((name) => [name, repeatable(...EQUALITY_ITEMS[name])])) as Record<EqualityFilter, ReturnType<typeof repeatable>>),
  created_from: Type.Optional(timeBound('created_at at or after this value (inclusive)')),
  created_to: Type.Optional(timeBound('created_at before this value (exclusive)')),
  bbox: Type.Optional(
    Type.String({
      pattern: BBOX_PATTERN,
      description:
        'Map box min_long,min_lat,max_long,max_lat (decimal degrees, inclusive; each minimum at most its maximum); requests without a location never match',
    }),
  ),
  ...negations(),
  closed: Type.Optional(
    Type.Unsafe<'true' | 'false'>({ type: 'string', enum: ['true', 'false'], examples: ['false'], description: 'true: the requests with a closed_at; false: those without one' }),
  ),
  closed_from: Type.Optional(timeBound('closed_at at or after this value (inclusive); requests without a closed_at never match')),
  closed_to: Type.Optional(timeBound('closed_at before this value (exclusive); requests without a closed_at never match')),
  days_to_close_min: daysBound('days_to_close at least this many days (inclusive, decimals allowed); requests not closed never match', 1.5),
  days_to_close_max: daysBound('days_to_close at most this many days (inclusive, decimals allowed); requests not closed never match', 14),
  near: Type.Optional(
    Type.String({
      pattern: NEAR_PATTERN,
      examples: ['40.7128,-74.006'],
      description: 'A centre lat,long (decimal degrees) with radius_m: the requests within radius_m metres of it (great-circle distance, edge included); requests without a location never match',
    }),
  ),
  radius_m: Type.Optional(
    Type.Number({ exclusiveMinimum: 0, maximum: MAX_RADIUS_M, examples: [500], description: `The radius of near, metres: above 0, at most ${MAX_RADIUS_M}; only with near` }),
  ),
  q: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 100,
      examples: ['pothole'],
      description:
        'Search: the requests whose complaint_type, descriptor or location_type contains this text, ignoring case (matched against the values the snapshot holds, as listed by GET /v1/facets)',
    }),
  ),
};

export const LIST_FORMATS = ['json', 'csv', 'geojson'] as const;
export const EXPORT_FORMATS = ['csv', 'geojson'] as const;

export const ListFormat = stringEnum('ListFormat', LIST_FORMATS, 'A format of a page of requests: json, csv or geojson');
export const ExportFormat = stringEnum('ExportFormat', EXPORT_FORMATS, 'A format of the export: csv or geojson');

export const ServiceRequestListQuery = Type.Object(
  {
    ...FILTER_PROPERTIES,
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: LIMIT_MAXIMUM, default: LIMIT_DEFAULT, description: 'Page size, 1 to 1000, default 50' }),
    ),
    cursor: Type.Optional(
      Type.String({ maxLength: CURSOR_MAX_LENGTH, description: 'next_cursor of the previous page, unchanged, with the same filter values' }),
    ),
    format: enumParameter(
      ListFormat,
      'json (the default), csv (text/csv) or geojson (application/geo+json); overrides the Accept header, which chooses the same way',
    ),
  },
  { additionalProperties: false },
);

export const FilterQuery = Type.Object(FILTER_PROPERTIES, { additionalProperties: false });

export const ExportQuery = Type.Object(
  {
    ...FILTER_PROPERTIES,
    format: enumParameter(ExportFormat, 'csv (the default) or geojson; overrides the Accept header, which chooses the same way'),
  },
  { additionalProperties: false },
);

export const FACET_FIELDS = ['borough', 'complaint_type', 'status', 'channel', 'descriptor', 'council_district', 'location_type', 'community_board'] as const;

export const FacetField = stringEnum(
  'FacetField',
  FACET_FIELDS,
  'A field whose values can be counted: borough, complaint_type, status, channel, descriptor, council_district, location_type or community_board',
);

export const FacetQuery = Type.Object(
  {
    field: componentRef(FacetField, { description: 'The field counted: borough, complaint_type, status, channel, descriptor, council_district, location_type or community_board' }),
    ...FILTER_PROPERTIES,
  },
  { additionalProperties: false },
);

export const FacetCount = namedComponent(
  'FacetCount',
  Type.Object(
    {
      value: Type.Unsafe<string | number | null>({
        type: ['string', 'integer', 'null'],
        description: 'A value of the field (an integer for council_district); null for the requests without one',
      }),
      count: Type.Integer({ minimum: 1, description: 'Matching requests with this value' }),
    },
    { additionalProperties: false, description: 'A value of the field and its number of matching requests' },
  ),
);

export const FacetList = namedComponent(
  'FacetList',
  Type.Object(
    {
      field: Type.String({ description: 'The field counted' }),
      items: Type.Array(componentRef(FacetCount), {
        description: 'Each value among the matching requests, largest count first, then by value (code-point order), null last',
      }),
    },
    { additionalProperties: false, description: 'The values of one field with their counts' },
  ),
);

export const CountAnswer = namedComponent(
  'CountAnswer',
  Type.Object(
    { count: Type.Integer({ minimum: 0, description: 'Requests matching every given filter' }) },
    { additionalProperties: false, description: 'The number of matching requests' },
  ),
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

export const ComplaintTypesQuery = Type.Object({ borough: FILTER_PROPERTIES.borough, not_borough: FILTER_PROPERTIES.not_borough }, { additionalProperties: false });

export const COMPLETE_DESCRIPTION =
  'False while the numbers can still change: "closed within 14 days" of a request opened on a day is only known 14 days after the end of that day, and a day whose 14-day window (to the end of day + 14) reaches past the snapshot date has requests that may still close in time after the snapshot was taken; such days plot as a fake drop. A week or month is complete when its last day is';

/** The numbers of the requests opened in a period (`when`: "that day", "from start to end"). */
function periodNumbers(when: string) {
  return {
    opened: Type.Integer({ minimum: 0, description: `Requests created ${when}` }),
    closed_within_14_days: Type.Integer({ minimum: 0, description: 'Of those, requests with days_to_close <= 14' }),
    share_closed_within_14_days: nullable<number>({
      type: 'number',
      minimum: 0,
      maximum: 1,
      description: 'closed_within_14_days / opened, 4 decimals; null when opened is 0',
    }),
    median_days_to_close: nullable<number>({
      type: 'number',
      description: `Median days_to_close of the requests created ${when} that are closed, 2 decimals; null when none`,
    }),
    complete: Type.Boolean({ description: COMPLETE_DESCRIPTION }),
  };
}

export const DailyStat = namedComponent(
  'DailyStat',
  Type.Object(
    {
      date: Type.String({ pattern: DATE_PATTERN, description: 'Local date of created_at, YYYY-MM-DD' }),
      ...periodNumbers('that day'),
    },
    { additionalProperties: false, description: 'The numbers of one day' },
  ),
);

export const DailyStatList = itemList(
  'DailyStatList',
  DailyStat,
  'One row per day of the snapshot period (181 for January to June 2025), or of its days from created_from to created_to, oldest first, days without requests included',
  'The daily numbers',
);

const DatasetFields = Type.Object(
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
        layout: Type.String({ description: 'Column layout found in the export: standard-41 (exactly the 41 classic columns, in their order) or extended (any other)' }),
        format: nullable<string>({
          type: 'string',
          description:
            "The layout the export was read in: portal_csv (the portal's CSV, of any year), api_csv (the API's CSV), api_json (the API's JSON), json_lines; null for a snapshot built before it was recorded",
        }),
        column_count: nullable<number>({ type: 'integer', minimum: 0, description: "Columns of the export's header (JSON: distinct keys of its records); null as format" }),
        missing_columns: Type.Unsafe<string[] | null>({
          type: ['array', 'null'],
          items: { type: 'string' },
          description: 'The columns the snapshot reads that the export lacked (their fields are null in every request), by their names in the portal; null as format',
        }),
      },
      { additionalProperties: false },
    ),
    notice: Type.String({ description: 'In one plain sentence: whether the snapshot is synthetic (made-up records, the default) or a real export' }),
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
);

export const Dataset = namedComponent('Dataset', DatasetFields);

const bucketNumbers = {
  start: Type.String({ pattern: DATE_PATTERN, description: 'First day counted: the first day of the bucket, or of the period when later' }),
  end: Type.String({ pattern: DATE_PATTERN, description: 'Last day counted: the last day of the bucket, or of the period when earlier' }),
  ...periodNumbers('from start to end'),
};

/**
 * The components `rowName` (one bucket, ISO week or month, named by `key`, with the numbers of its
 * days) and `listName` (`{items: [...]}` of those rows).
 */
function bucketList<K extends string>(rowName: string, listName: string, key: K, keySchema: ReturnType<typeof Type.String>, unit: string) {
  const row = namedComponent(
    rowName,
    Type.Object({ [key]: keySchema, ...bucketNumbers } as { [k in K]: typeof keySchema } & typeof bucketNumbers, {
      additionalProperties: false,
      description: `The numbers of one ${unit}`,
    }),
  );
  const list = itemList(
    listName,
    row,
    `One row per ${unit} touching the days of GET /v1/stats/daily with the same filters, oldest first; the sums equal the daily ones`,
    `The numbers per ${unit}`,
  );
  return { row, list };
}

const weekly = bucketList(
  'WeeklyStat',
  'WeeklyStatList',
  'week',
  Type.String({ pattern: '^[0-9]{4}-W[0-9]{2}$', description: 'ISO 8601 week, YYYY-Www (weeks start on Monday)' }),
  'ISO week',
);
export const WeeklyStat = weekly.row;
export const WeeklyStatList = weekly.list;

const monthly = bucketList('MonthlyStat', 'MonthlyStatList', 'month', Type.String({ pattern: '^[0-9]{4}-[0-9]{2}$', description: 'Month, YYYY-MM' }), 'month');
export const MonthlyStat = monthly.row;
export const MonthlyStatList = monthly.list;

/** The named schemas of the service (OpenAPI components). */
export const REQUEST_COMPONENTS = [
  Borough,
  Status,
  Channel,
  ListFormat,
  ExportFormat,
  FacetField,
  ServiceRequest,
  ServiceRequestPage,
  GeoJsonFeature,
  GeoJsonPage,
  CountAnswer,
  FacetCount,
  FacetList,
  ComplaintTypeCount,
  ComplaintTypeList,
  DailyStat,
  DailyStatList,
  WeeklyStat,
  WeeklyStatList,
  MonthlyStat,
  MonthlyStatList,
  Dataset,
];

