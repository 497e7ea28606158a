import { Type, type Static } from 'typebox';
import { componentRef, namedComponent, type ComponentSchema } from '../../platform/openapi-components.js';
import { House, HOUSE_FIELDS, HouseFieldName, ModelArea } from './house.js';

export const BATCH_MAX_HOUSES = 100;

/** The query of the estimate and explain routes: optionally the month the prices are to be as of. */
export const AsOfQuery = Type.Object(
  {
    as_of: Type.Optional(
      Type.String({
        pattern: '^\\d{4}-(0[1-9]|1[0-2])$',
        description:
          'YYYY-MM: the month the prices are to be as of (its price level; prices_as_of is then its last day), from the first month ' +
          "of the model's training sales to at most 3 months past its data (2014-05 to 2015-05 for the shipped model); past the data " +
          "the level carries on the last three months' trend and the answer warns extrapolated_price_level. Another month answers 422 " +
          "invalid_request (fields as_of) naming the allowed range. Default: the model's prices_as_of.",
        examples: ['2015-04'],
      }),
    ),
  },
  { additionalProperties: false },
);
export type AsOfQuery = Static<typeof AsOfQuery>;

export const WarningCode = namedComponent(
  'WarningCode',
  Type.Enum(['rare_value', 'high_value', 'extrapolated_price_level'], {
    type: 'string',
    description:
      'rare_value: some values are unusual for the sales the model learned from; high_value: estimate of $1,000,000 or more; ' +
      "extrapolated_price_level: the prices are as of a month after the model's data (as_of), at a price level carried on from the trend",
  }),
);

export const EstimateWarning = namedComponent(
  'EstimateWarning',
  Type.Object(
    {
      code: componentRef(WarningCode),
      fields: Type.Array(Type.String(), { description: 'The fields the warning is about (rare_value), empty for high_value and extrapolated_price_level' }),
      message: Type.String({ description: 'Human-readable explanation' }),
    },
    { additionalProperties: false, description: 'Something to know about an estimate' },
  ),
);
export type EstimateWarning = Static<typeof EstimateWarning>;

export const Estimate = namedComponent(
  'Estimate',
  Type.Object(
    {
      estimate_usd: Type.Integer({ description: 'Point estimate in whole US dollars (the model output rounded to the nearest dollar)' }),
      range_usd: Type.Object(
        {
          low: Type.Integer({ description: 'round(estimate_usd x low_factor), whole dollars' }),
          high: Type.Integer({ description: 'round(estimate_usd x high_factor), whole dollars' }),
        },
        { additionalProperties: false, description: 'Range meant to hold 80 percent of sales; factors from the model card (range)' },
      ),
      model_version: Type.String({ description: 'Version of the model that answered, e.g. kc-hgb-drift-2015-02' }),
      prices_as_of: Type.String({
        format: 'date',
        description: "Date to which the prices refer: the model's, e.g. 2015-02-28, or the last day of the as_of month when one is given",
      }),
      warnings: Type.Array(componentRef(EstimateWarning), { description: 'One object per warning; possibly empty' }),
    },
    { additionalProperties: false, description: 'A first indication of the price; not for lending, underwriting or insurance decisions about a person' },
  ),
);
export type Estimate = Static<typeof Estimate>;

export const BatchRequest = namedComponent(
  'EstimateBatchRequest',
  Type.Object(
    {
      houses: Type.Array(componentRef(House), { minItems: 1, maxItems: BATCH_MAX_HOUSES, description: '1 to 100 houses' }),
    },
    { additionalProperties: false, description: '1 to 100 houses to estimate at once' },
  ),
);
export type BatchRequest = Static<typeof BatchRequest>;

/** A batch answer, the component `name`: `{estimates: [...]}`, one `item` per house in the order of the houses. */
function batchAnswer<T extends ComponentSchema>(name: string, item: T, description: string) {
  return namedComponent(
    name,
    Type.Object({ estimates: Type.Array(componentRef(item), { description }) }, { additionalProperties: false, description }),
  );
}

export const BatchAnswer = batchAnswer('EstimateBatch', Estimate, 'One estimate per house, in the order of the houses');
export type BatchAnswer = Static<typeof BatchAnswer>;

export const ModelCard = namedComponent(
  'ModelCard',
  Type.Object(
    {
      model_version: Type.String({ description: 'As in Estimate' }),
      prices_as_of: Type.String({ format: 'date', description: 'As in Estimate' }),
      test: Type.Object(
        {
          sales: Type.Integer({ description: 'Number of held-out sales' }),
          first_sales: Type.String({ description: 'Date range of the held-out sales' }),
          median_error_pct: Type.Number(),
          mape_pct: Type.Number({ description: 'Mean absolute percentage error' }),
          within_10pct: Type.Number({ description: 'Fraction of sales estimated within 10 percent' }),
          over_by_10pct_or_more: Type.Number({ description: 'Fraction of sales over-estimated by 10 percent or more' }),
          signed_error_by_month: Type.Optional(
            Type.Array(
              Type.Object(
                {
                  month: Type.String({ description: 'YYYY-MM of the sale date' }),
                  sales: Type.Integer(),
                  median_error_pct: Type.Number({ description: 'Median signed error percent: negative when the estimates ran below the prices' }),
                  mean_error_pct: Type.Number({ description: 'Mean signed error percent' }),
                },
                { additionalProperties: false },
              ),
              { description: 'How the model drifted on later sales: the signed error per month of the test period' },
            ),
          ),
        },
        { additionalProperties: true, description: 'Results on sales the model never saw' },
      ),
      range: Type.Object(
        {
          coverage: Type.Number({ description: 'Share of sales the range is meant to hold (0.8)' }),
          low_factor: Type.Number(),
          high_factor: Type.Number(),
        },
        { additionalProperties: true, description: 'range_usd = estimate_usd times these factors, rounded' },
      ),
      model_details: Type.Optional(Type.String({ description: 'What the model is and how an estimate is computed' })),
      intended_use: Type.Optional(Type.String({ description: 'What the model is for' })),
      not_for: Type.Union([Type.String(), Type.Array(Type.String())], {
        description: 'Uses the model must not serve, including lending, underwriting or insurance decisions about a person',
      }),
      model_area: ModelArea,
    },
    {
      additionalProperties: true,
      description:
        'The model card stored in the model file, as stored (further fields such as metrics, training, features, data and caveats describe ' +
        'how the figures were obtained), plus model_area',
    },
  ),
);

/**
 * A value of a House field: a number, or a boolean for waterfront. Declared without a JSON type on
 * purpose: a union (anyOf) makes the response serializer validate every value to pick a branch, which
 * cost more than the explanation itself in a batch of 100.
 */
const FieldValue = (description: string) => Type.Unsafe<number | boolean>({ description: `${description}: a number, or true/false for waterfront` });

export const FieldContribution = namedComponent(
  'FieldContribution',
  Type.Object(
    {
      field: HouseFieldName,
      value: FieldValue("The house's value of the field, as sent"),
      contribution: Type.Number({
        description:
          'Exact path-dependent TreeSHAP value on the raw scale log(price / sqft_living), the derived features attributed back to the ' +
          `request fields they are computed from; baseline + the sum of the ${HOUSE_FIELDS.length} contributions = raw`,
      }),
      price_factor: Type.Number({
        description:
          'exp(contribution): this field multiplied the estimate by this factor (1.12: 12 percent up; 0.9: 10 percent down); ' +
          `estimate = starting_usd x the product of the ${HOUSE_FIELDS.length} factors`,
      }),
    },
    { additionalProperties: false, description: "One request field's part in the estimate" },
  ),
);

export const Explanation = namedComponent(
  'Explanation',
  Type.Object(
    {
      baseline: Type.Number({
        description:
          "The model's expected raw value, log(price / sqft_living), over the training sales (TreeSHAP's expected value), plus the price level " +
          'of the month the prices are as of (prices_as_of)',
      }),
      raw: Type.Number({ description: "The model's raw value for this house, log(price / sqft_living); estimate = exp(raw) x sqft_living" }),
      baseline_usd_per_sqft: Type.Number({ description: 'exp(baseline): the typical price per square foot the trees start from' }),
      starting_usd: Type.Number({
        description:
          'baseline_usd_per_sqft x sqft_living: the part sqft_living plays outside the trees. The trees predict the price per square foot; ' +
          'the estimate is that times sqft_living, so the living area scales the estimate in proportion before any factor',
      }),
      sqft_living_outside_trees: Type.String({ description: 'The same in words, with the figures of this house' }),
      fields: Type.Array(componentRef(FieldContribution), {
        minItems: HOUSE_FIELDS.length,
        maxItems: HOUSE_FIELDS.length,
        description: `The ${HOUSE_FIELDS.length} request fields, largest effect first (|contribution| descending, then the contract order)`,
      }),
    },
    { additionalProperties: false, description: 'Why the model gave this estimate, field by field' },
  ),
);

export const ComparableSale = namedComponent(
  'ComparableSale',
  Type.Object(
    {
      date: Type.String({ format: 'date', description: 'Sale date' }),
      price_usd: Type.Number({ description: 'Sale price, US dollars, as recorded' }),
      usd_per_sqft: Type.Number({ description: 'price_usd / sqft_living, 2 decimals' }),
      distance_km: Type.Number({ description: 'Great-circle distance from the house, km, 3 decimals' }),
      sqft_living: Type.Number({ description: 'Living area of the sold house' }),
      similar_size: Type.Boolean({
        description: 'true: sqft_living within a factor 1.25 of the house; false: one of the sales nearest in size, when fewer were of similar size',
      }),
      differing_fields: Type.Array(
        Type.Object(
          {
            field: HouseFieldName,
            house_value: FieldValue("The house's value"),
            sale_value: FieldValue("The sold house's value"),
          },
          { additionalProperties: false },
        ),
        { maxItems: 3, description: 'Up to 3 fields that differ most (difference / the field\'s spread over the training sales), lat and long left out' },
      ),
    },
    { additionalProperties: false, description: 'A training sale like the house, and the fields in which it differs most' },
  ),
);

export const ExplainedEstimate = namedComponent(
  'ExplainedEstimate',
  Type.Object(
    {
      ...Estimate.properties,
      explanation: componentRef(Explanation),
      comparable_sales: Type.Array(componentRef(ComparableSale), {
        description:
          'The 5 training sales most like the house: nearest by great-circle distance among those of similar size (sqft_living within a ' +
          'factor 1.25, both ways), nearest first; public records (CC0), no id',
      }),
    },
    { additionalProperties: false, description: 'The same Estimate as POST /v1/estimates, with why and the sales it most resembles' },
  ),
);
export type ExplainedEstimate = Static<typeof ExplainedEstimate>;

export const ExplainedBatchAnswer = batchAnswer(
  'ExplainedEstimateBatch',
  ExplainedEstimate,
  'One explained estimate per house, in the order of the houses',
);

/** The named schemas of the service (OpenAPI components). */
export const HOUSE_COMPONENTS = [
  House,
  WarningCode,
  EstimateWarning,
  Estimate,
  BatchRequest,
  BatchAnswer,
  ModelCard,
  FieldContribution,
  Explanation,
  ComparableSale,
  ExplainedEstimate,
  ExplainedBatchAnswer,
];
