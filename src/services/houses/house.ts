import { Type, type Static } from 'typebox';
import { namedComponent } from '../../platform/openapi-components.js';

/**
 * The one vocabulary of a house (the house vocabulary decision, "Houses: one vocabulary"), used by the HTTP schemas
 * (schemas.ts) and the model file (model/model-file.ts) alike:
 *
 * - HOUSE_FIELD_SCHEMAS: the 16 request fields in the contract's order, each with its rule
 *   (house-prices.md, "Resources and their fields", with the bounds docs/houses.md decides; the same
 *   rules excluded sales from training, training/rules.py) and its description. The TypeBox `House`
 *   schema (validation and OpenAPI), the `House` type, `HouseField`, the field order of the model's
 *   inputs and the readers between a field and the model's numbers all derive from it;
 * - ModelArea: the lat/long box a house must lie in (model file, GET /v1/model, the 422 check);
 * - RareValueGroup: a group of fields judged together for the rare_value warning (model file, warnings).
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

const L = HOUSE_LIMITS;

/**
 * The shipped model's area (models/kc-hgb-drift-2015-02.json, model_area), for the documentation only: the
 * check uses the area of the loaded model file. A test keeps these figures equal to the shipped file.
 */
export const SHIPPED_MODEL_AREA = { lat_min: 47.14, lat_max: 47.79, long_min: -122.53, long_max: -121.3 } as const;

const AREA_RULE =
  'must lie inside the model area stored in the model file, bounds included (model_area in GET /v1/model); outside it the answer is 422 outside_model_area';
const A = SHIPPED_MODEL_AREA;

/** The 16 request fields, in the contract's order (the order of the model's inputs and of an explanation). */
const HOUSE_FIELD_SCHEMAS = {
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
};

/** The request body of an estimate, the OpenAPI component House. */
export const House = namedComponent(
  'House',
  Type.Object(HOUSE_FIELD_SCHEMAS, {
    additionalProperties: false,
    description: 'A house to estimate. All 16 fields are required; other fields are refused; no type is converted.',
  }),
);
export type House = Static<typeof House>;
export type HouseField = keyof House;

/**
 * The sample house: a house inside the shipped model's area that draws no warning. It is the house
 * of the OpenAPI examples (openapi-example.ts), of the tests, the benches and the generated-client
 * program, so that adding a field to House means adding it here, beside its schema, and nowhere else.
 */
export const SAMPLE_HOUSE: House = {
  bedrooms: 3,
  bathrooms: 2.25,
  floors: 2,
  sqft_living: 2170,
  sqft_basement: 400,
  sqft_lot: 7242,
  waterfront: false,
  view: 0,
  condition: 3,
  grade: 7,
  yr_built: 1951,
  yr_renovated: 1991,
  lat: 47.721,
  long: -122.319,
  sqft_living15: 1690,
  sqft_lot15: 7639,
};

/** A second, larger house of the batch examples: two houses show that answers keep the houses' order. */
export const LARGER_SAMPLE_HOUSE: House = {
  ...SAMPLE_HOUSE,
  bedrooms: 4,
  bathrooms: 2.5,
  sqft_living: 2900,
  sqft_basement: 0,
  sqft_lot: 9600,
  grade: 9,
  yr_built: 1998,
  yr_renovated: 0,
  lat: 47.6062,
  long: -122.1417,
  sqft_living15: 2750,
  sqft_lot15: 9100,
};

/** The 16 request fields in the contract's order. */
export const HOUSE_FIELDS = Object.keys(HOUSE_FIELD_SCHEMAS) as HouseField[];

/** Each field's position in HOUSE_FIELDS (the model's field vector). */
export const HOUSE_FIELD_INDEX = Object.fromEntries(HOUSE_FIELDS.map((field, index) => [field, index])) as Record<HouseField, number>;

/** A request field's name (the model file names fields this way too). */
export const HouseFieldName = Type.Unsafe<HouseField>(Type.String({ enum: HOUSE_FIELDS, description: 'A request field of House' }));

/** The fields whose JSON value is true/false; the model reads them as 1/0. */
const BOOLEAN_FIELDS: ReadonlySet<HouseField> = new Set(
  HOUSE_FIELDS.filter((field) => {
    const schema: object = HOUSE_FIELD_SCHEMAS[field];
    return 'type' in schema && schema.type === 'boolean';
  }),
);

/** A field's value as the model's number (true/false: 1/0). */
export function fieldAsNumber(house: House, field: HouseField): number {
  const value = house[field];
  return typeof value === 'boolean' ? (value ? 1 : 0) : value;
}

/** A model number back as the field's JSON value (1/0: true/false for a boolean field). */
export function fieldFromNumber(field: HouseField, value: number): number | boolean {
  return BOOLEAN_FIELDS.has(field) ? value === 1 : value;
}

/** The box (bounds included) that lat and long must lie in; carried by the model file. */
export const ModelArea = Type.Object(
  {
    lat_min: Type.Number(),
    lat_max: Type.Number(),
    long_min: Type.Number(),
    long_max: Type.Number(),
  },
  { additionalProperties: false, description: 'The box (bounds included) that lat and long must lie in; from the model file' },
);
export type ModelArea = Static<typeof ModelArea>;

/** A group of fields judged together: one rare_value warning when any of them is above its max. */
export const RareValueGroup = Type.Object({
  name: Type.String({ minLength: 1 }),
  fields: Type.Array(HouseFieldName, { minItems: 1 }),
  /** The training quantile the maxima were taken at. */
  quantile: Type.Number(),
  /** Each field of the group with its largest usual value (model/model-file.ts checks every field has one). */
  max: Type.Record(Type.String(), Type.Number()),
});
export type RareValueGroup = Static<typeof RareValueGroup>;

/** True when any field of the group is above the group's max for it. */
export function isRareFor(group: RareValueGroup, house: House): boolean {
  return group.fields.some((field) => fieldAsNumber(house, field) > (group.max[field] ?? Infinity));
}
