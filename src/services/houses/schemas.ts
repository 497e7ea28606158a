import { Type, type Static } from 'typebox';
import { componentRef, namedComponent } from '../../platform/openapi-components.js';

/**
 * house-prices.md, "Resources and their fields", with the bounds the contract leaves open decided
 * in docs/houses.md (and excluded from training in the same way, training/rules.py). The limits here
 * are the validation; the OpenAPI description is generated from them.
 */
export const HOUSE_LIMITS = {
  bedrooms: { minimum: 0, maximum: 11 },
  bathrooms: { minimum: 0, maximum: 10, multipleOf: 0.25 },
  floors: { minimum: 1, maximum: 4, multipleOf: 0.5 },
  sqft_living: { minimum: 100, maximum: 14000 },
  sqft_basement: { minimum: 0 },
  sqft_lot: { minimum: 100, maximum: 5_000_000 },
  view: { minimum: 0, maximum: 4 },
  condition: { minimum: 1, maximum: 5 },
  grade: { minimum: 1, maximum: 13 },
  yr_built: { minimum: 1900, maximum: 2015 },
  yr_renovated: { never: 0, maximum: 2015 },
  /** Any coordinate on Earth (so never infinite, e.g. 1e400); the model area is checked after. */
  lat: { minimum: -90, maximum: 90 },
  long: { minimum: -180, maximum: 180 },
  sqft_living15: { minimum: 100, maximum: 14000 },
  sqft_lot15: { minimum: 100, maximum: 5_000_000 },
} as const;

export const BATCH_MAX_HOUSES = 100;

const L = HOUSE_LIMITS;

/**
 * The shipped model's area (models/kc-hgb-2015-02.json, model_area), for the documentation only: the
 * check uses the area of the loaded model file. A test keeps these figures equal to the shipped file.
 */
export const SHIPPED_MODEL_AREA = { lat_min: 47.14, lat_max: 47.79, long_min: -122.53, long_max: -121.3 } as const;

const AREA_RULE =
  'must lie inside the model area stored in the model file, bounds included (model_area in GET /v1/model); outside it the answer is 422 outside_model_area';
const A = SHIPPED_MODEL_AREA;

export const House = namedComponent(
  'House',
  Type.Object(
    {
      bedrooms: Type.Integer({ ...L.bedrooms, description: 'Number of bedrooms, integer 0 to 11' }),
      bathrooms: Type.Number({ ...L.bathrooms, description: 'Number of bathrooms, 0 to 10 in steps of 0.25 (0.25 accepted, 0.3 refused)' }),
      floors: Type.Number({ ...L.floors, description: 'Number of floors, 1 to 4 in steps of 0.5 (3.5 accepted, 1.25 refused)' }),
      sqft_living: Type.Number({ ...L.sqft_living, description: 'Living area in square feet, basement included, 100 to 14000' }),
      sqft_basement: Type.Number({ ...L.sqft_basement, description: 'Basement area in square feet, at least 0 and smaller than sqft_living' }),
      sqft_lot: Type.Number({ ...L.sqft_lot, description: 'Land area in square feet, 100 to 5000000 (unusually large values get a rare_value warning)' }),
      waterfront: Type.Boolean({ description: 'Whether the house is on the waterfront: true or false only' }),
      view: Type.Integer({ ...L.view, description: 'Quality of the view, integer 0 (none) to 4' }),
      condition: Type.Integer({ ...L.condition, description: 'Condition, integer 1 to 5' }),
      grade: Type.Integer({ ...L.grade, description: 'King County building grade, integer 1 to 13 (14 is refused)' }),
      yr_built: Type.Integer({ ...L.yr_built, description: 'Year built, integer 1900 to 2015' }),
      yr_renovated: Type.Union(
        [
          Type.Literal(L.yr_renovated.never, { description: 'Never renovated' }),
          Type.Integer({ minimum: L.yr_built.minimum, maximum: L.yr_renovated.maximum, description: 'Year of the last renovation' }),
        ],
        { description: 'Integer: 0 when never renovated, otherwise a year from yr_built to 2015 (a year before yr_built is refused)' },
      ),
      lat: Type.Number({ ...L.lat, description: `Latitude in degrees, -90 to 90; ${AREA_RULE}. Shipped model: ${A.lat_min} to ${A.lat_max}` }),
      long: Type.Number({ ...L.long, description: `Longitude in degrees, -180 to 180; ${AREA_RULE}. Shipped model: ${A.long_min} to ${A.long_max}` }),
      sqft_living15: Type.Number({ ...L.sqft_living15, description: 'Average living area of the 15 nearest houses, square feet, 100 to 14000' }),
      sqft_lot15: Type.Number({ ...L.sqft_lot15, description: 'Average land area of the 15 nearest houses, square feet, 100 to 5000000' }),
    },
    {
      additionalProperties: false,
      description: 'A house to estimate. All 16 fields are required; other fields are refused; no type is converted.',
    },
  ),
);
export type House = Static<typeof House>;
export type HouseField = keyof House;
export const HOUSE_FIELDS = Object.keys(House.properties) as HouseField[];

export const WarningCode = namedComponent(
  'WarningCode',
  Type.Enum(['rare_value', 'high_value'], {
    type: 'string',
    description: 'rare_value: some values are unusual for the sales the model learned from; high_value: estimate of $1,000,000 or more',
  }),
);

export const EstimateWarning = namedComponent(
  'EstimateWarning',
  Type.Object(
    {
      code: componentRef(WarningCode),
      fields: Type.Array(Type.String(), { description: 'The fields the warning is about (rare_value), empty for high_value' }),
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
      model_version: Type.String({ description: 'Version of the model that answered, e.g. kc-hgb-2015-02' }),
      prices_as_of: Type.String({ format: 'date', description: 'Date to which the prices refer, e.g. 2015-02-28' }),
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

export const BatchAnswer = namedComponent(
  'EstimateBatch',
  Type.Object(
    { estimates: Type.Array(componentRef(Estimate), { description: 'One estimate per house, in the order of the houses' }) },
    { additionalProperties: false, description: 'One estimate per house, in the order of the houses' },
  ),
);
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
      model_area: Type.Object(
        {
          lat_min: Type.Number(),
          lat_max: Type.Number(),
          long_min: Type.Number(),
          long_max: Type.Number(),
        },
        { additionalProperties: false, description: 'The box (bounds included) that lat and long must lie in; from the model file' },
      ),
    },
    {
      additionalProperties: true,
      description:
        'The model card stored in the model file, as stored (further fields such as metrics, training, features, data and caveats describe ' +
        'how the figures were obtained), plus model_area',
    },
  ),
);

/** The named schemas of the service (OpenAPI components). */
export const HOUSE_COMPONENTS = [House, WarningCode, EstimateWarning, Estimate, BatchRequest, BatchAnswer, ModelCard];
