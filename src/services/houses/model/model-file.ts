/**
 * The house-price model file (models/kc-hgb-*.json), written by `python -m training.train`
 * (see training/README.md): its TypeBox schema (the types derive from it), the tree checks a schema
 * cannot express, and the parser that refuses a malformed file with a clear Error before anything is
 * evaluated. The request fields, the model area and the rare-value groups are those of ../house.ts.
 */
import { Type, type Static } from 'typebox';
import { Compile } from 'typebox/compile';
import { HOUSE_FIELDS, HouseFieldName, ModelArea, RareValueGroup, type HouseField } from '../house.js';

/**
 * 2: the trees carry each node's training sample count, and the file holds the comparable sales.
 * 3: price_index, the monthly levels of the market's drift (model/price-level.ts).
 */
export const SUPPORTED_FORMAT_VERSION = 3;

const Text = Type.String({ minLength: 1 });
const DateText = Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'YYYY-MM-DD' });
const PositiveInteger = Type.Integer({ minimum: 1 });
const Numbers = Type.Array(Type.Number());
const Bits = Type.Array(Type.Integer({ minimum: 0, maximum: 1 }));

/**
 * One model input. `input`: a request field as a number (waterfront: 1 or 0).
 * `add_scaled`: x + c * y. `max`: max(x, y). All in float64, exactly as in training.
 */
const FeatureSpec = Type.Union(
  [
    Type.Object({ name: HouseFieldName, kind: Type.Literal('input'), description: Type.Optional(Text) }),
    Type.Object({ name: Text, kind: Type.Literal('add_scaled'), x: HouseFieldName, y: HouseFieldName, c: Type.Number(), description: Type.Optional(Text) }),
    Type.Object({ name: Text, kind: Type.Literal('max'), x: HouseFieldName, y: HouseFieldName, description: Type.Optional(Text) }),
  ],
  { description: '{kind: "input", name: a request field}, {kind: "add_scaled", name, x, y, c} or {kind: "max", name, x, y}' },
);
export type FeatureSpec = Static<typeof FeatureSpec>;

/** raw = log(price / sqft_living); estimate = exp(raw) * sqft_living. */
const TargetTransform = Type.Object({
  name: Type.Literal('log_price_per_sqft_living'),
  raw: Text,
  estimate: Text,
  denominator: Type.Literal('sqft_living'),
});

/**
 * One tree as parallel arrays indexed by node; node 0 is the root. feature: the feature index of a
 * split node, -1 on leaves; threshold: go left when value <= threshold (scikit-learn's num_threshold,
 * float64); missing_go_to_left: 1 when a missing (NaN) value goes left; value: the leaf value (0 on
 * split nodes); count: the training samples that reached the node (scikit-learn's node count).
 */
const TreeArrays = Type.Object({
  feature: Type.Array(Type.Integer({ minimum: -1 }), { minItems: 1 }),
  threshold: Numbers,
  missing_go_to_left: Bits,
  left: Type.Array(Type.Integer({ minimum: 0 })),
  right: Type.Array(Type.Integer({ minimum: 0 })),
  is_leaf: Bits,
  value: Numbers,
  count: Type.Array(PositiveInteger),
});
export type TreeArrays = Static<typeof TreeArrays>;

const RangeSpec = Type.Object({
  coverage: Type.Number(),
  low_factor: Type.Number({ exclusiveMinimum: 0, maximum: 1 }),
  high_factor: Type.Number({ minimum: 1 }),
  measured_test_coverage: Type.Number(),
});

/**
 * The training sales the service searches for comparable sales (training/comparables.py): the sale
 * date, price and 16 request fields of each training sale (no id), as columns in one order.
 */
const ComparableSalesTable = Type.Object({
  /** How many sales the service lists. */
  count: PositiveInteger,
  /** A sale is of similar size when its sqft_living is within this factor of the house's, both ways. */
  similar_size_ratio: Type.Number({ minimum: 1 }),
  earth_radius_km: Type.Number({ exclusiveMinimum: 0 }),
  /** How many differing fields are named per sale. */
  differing_fields: PositiveInteger,
  /** Per request field other than lat/long: the spread a difference is divided by. */
  scale: Type.Object(
    Object.fromEntries(HOUSE_FIELDS.filter((f) => f !== 'lat' && f !== 'long').map((f) => [f, Type.Number({ exclusiveMinimum: 0 })])) as Record<
      Exclude<HouseField, 'lat' | 'long'>,
      ReturnType<typeof Type.Number>
    >,
  ),
  sales: PositiveInteger,
  /** The sale dates, in table order: [date, number of consecutive sales on that date]. */
  date_runs: Type.Array(Type.Tuple([DateText, PositiveInteger])),
  /** price and the 16 request fields (waterfront 1/0), each an array of `sales` numbers. */
  columns: Type.Object(
    Object.fromEntries(['price', ...HOUSE_FIELDS].map((f) => [f, Numbers])) as Record<'price' | HouseField, typeof Numbers>,
  ),
});
export type ComparableSalesTable = Static<typeof ComparableSalesTable>;

/** The model card, exactly as GET /v1/model returns it (further fields are kept as stored). */
const ModelCard = Type.Object({
  model_version: Text,
  prices_as_of: DateText,
  test: Type.Object({
    sales: PositiveInteger,
    first_sales: Text,
    median_error_pct: Type.Number(),
    mape_pct: Type.Number(),
    within_10pct: Type.Number(),
    over_by_10pct_or_more: Type.Number(),
  }),
  range: RangeSpec,
  not_for: Type.Array(Text),
  intended_use: Text,
  training: Type.Record(Type.String(), Type.Unknown()),
  features: Type.Array(Type.Unknown()),
});

const MonthText = Type.String({ pattern: '^\\d{4}-(0[1-9]|1[0-2])$', description: 'YYYY-MM' });

/**
 * The market's drift (training/drift.py): per month of the data, in order and without a gap, the level
 * added to the baseline for prices as of that month; the month of prices_as_of; the rule past the data.
 */
const PriceIndex = Type.Object({
  months: Type.Array(Type.Object({ month: MonthText, level: Type.Number(), sales: PositiveInteger }), { minItems: 1 }),
  as_of_month: MonthText,
  extrapolation: Type.Object({ rule: Text, trend_months: PositiveInteger, max_months_past_data: Type.Integer({ minimum: 0 }) }),
});

const ModelFileSchema = Type.Object({
  format_version: Type.Literal(SUPPORTED_FORMAT_VERSION),
  model_version: Text,
  prices_as_of: DateText,
  features: Type.Array(FeatureSpec, { minItems: 1 }),
  target_transform: TargetTransform,
  baseline: Type.Number(),
  trees: Type.Array(TreeArrays, { minItems: 1 }),
  range: RangeSpec,
  price_index: PriceIndex,
  model_area: Type.Object({ ...ModelArea.properties, margin_deg: Type.Number() }),
  rare_value_thresholds: Type.Array(RareValueGroup),
  /** Estimates at or above this many dollars get the high_value warning. */
  high_value_usd: Type.Number({ exclusiveMinimum: 0 }),
  card: ModelCard,
  comparable_sales: ComparableSalesTable,
  trained_with: Type.Optional(Type.Record(Type.String(), Type.String())),
});
export type ModelFile = Static<typeof ModelFileSchema>;

const modelFileValidator = Compile(ModelFileSchema);

/** A refusal, with where in the file: `trees[3].left[0]: ...`. */
class MalformedModelFile extends Error {
  constructor(path: string, message: string) {
    super(`malformed model file: ${path ? `${path}: ` : ''}${message}`);
  }
}

/** `/trees/3/left/0` as `trees[3].left[0]`. */
function readablePath(pointer: string): string {
  return pointer
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((path, part) => (/^\d+$/.test(part) ? `${path}[${part}]` : path ? `${path}.${part}` : part), '');
}

/** The schema at a `#/properties/...` path, for the description of a union no branch of which matched. */
function schemaAt(schemaPath: string): { description?: string } | undefined {
  let at: unknown = ModelFileSchema;
  for (const part of schemaPath.split('/').slice(1)) at = (at as Record<string, unknown> | undefined)?.[part];
  return at as { description?: string } | undefined;
}

type SchemaError = ReturnType<typeof modelFileValidator.Errors>[number];

/** A schema of the model file's, in the two shapes that can be narrowed into. */
interface SchemaNode {
  type?: unknown;
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
}

const subschemaValidators = new Map<SchemaNode, ReturnType<typeof Compile>>();
function checks(schema: SchemaNode, value: unknown): boolean {
  let validator = subschemaValidators.get(schema);
  if (validator === undefined) {
    validator = Compile(schema as Parameters<typeof Compile>[0]);
    subschemaValidators.set(schema, validator);
  }
  return validator.Check(value);
}

/**
 * The schema errors of the smallest part of the file that fails, with paths from the file's root.
 * Listing every error of the whole file walks its hundreds of thousands of numbers (seconds); the
 * compiled checks find the failing key of an object, then the first failing item of an array, down to
 * the object, array or union that fails by itself, and only that part's errors are listed.
 */
function errorsOfNarrowestFailure(value: unknown): SchemaError[] {
  let schema = ModelFileSchema as SchemaNode;
  let at: unknown = value;
  let instancePath = '';
  let schemaPath = '#';
  for (;;) {
    let inner: [SchemaNode, unknown, string, string] | undefined;
    if (schema.type === 'object' && schema.properties !== undefined && typeof at === 'object' && at !== null && !Array.isArray(at)) {
      const object = at as Record<string, unknown>;
      const failing = Object.entries(schema.properties).find(([name, property]) => name in object && !checks(property, object[name]));
      if (failing !== undefined) inner = [failing[1], object[failing[0]], `/${failing[0]}`, `/properties/${failing[0]}`];
    } else if (schema.type === 'array' && schema.items !== undefined && Array.isArray(at)) {
      const items = schema.items;
      const index = at.findIndex((item) => !checks(items, item));
      if (index >= 0) inner = [items, at[index], `/${index}`, '/items'];
    }
    if (inner === undefined) break;
    [schema, at] = inner;
    instancePath += inner[2];
    schemaPath += inner[3];
  }
  const validator = subschemaValidators.get(schema);
  if (validator === undefined) return [...modelFileValidator.Errors(value)];
  return [...validator.Errors(at)].map((error) => ({ ...error, instancePath: instancePath + error.instancePath, schemaPath: schemaPath + error.schemaPath.slice(1) }));
}

/** One schema error in words, with where: the missing keys named, a constant or enum with its values. */
function describeSchemaError(error: SchemaError): MalformedModelFile {
  const path = readablePath(error.instancePath);
  const params = error.params as { requiredProperties?: string[]; allowedValue?: unknown; allowedValues?: unknown[] };
  switch (error.keyword) {
    case 'required':
      return new MalformedModelFile((params.requiredProperties ?? []).map((key) => (path ? `${path}.${key}` : key)).join(', '), 'missing');
    case 'const':
      return new MalformedModelFile(path, `expected ${JSON.stringify(params.allowedValue)}`);
    case 'enum':
      return new MalformedModelFile(path, `expected one of ${(params.allowedValues ?? []).map((v) => JSON.stringify(v)).join(', ')}`);
    default:
      return new MalformedModelFile(path, error.message);
  }
}

/**
 * The first problem the schema finds. For a union (a feature's forms) the errors of its branches only
 * say why each form failed: the one reported is that of the form the value names by its constant
 * (its kind), or, when it names none, the union's description of the forms.
 */
function schemaProblem(value: unknown): MalformedModelFile | undefined {
  if (modelFileValidator.Check(value)) return undefined;
  const errors = errorsOfNarrowestFailure(value);
  const error = errors.find((e) => !e.schemaPath.includes('/anyOf/')) ?? errors[0];
  if (!error) return new MalformedModelFile('', 'does not match the model file schema');
  if (error.keyword !== 'anyOf') return describeSchemaError(error);
  const prefix = `${error.schemaPath}/anyOf/`;
  const branchOf = (e: SchemaError): string => e.schemaPath.slice(prefix.length).split('/')[0] ?? '';
  const branchErrors = errors.filter((e) => e.schemaPath.startsWith(prefix) && e.instancePath.startsWith(error.instancePath));
  const otherForms = new Set(branchErrors.filter((e) => e.keyword === 'const').map(branchOf));
  const inNamedForm = branchErrors.find((e) => !otherForms.has(branchOf(e)));
  if (inNamedForm) return describeSchemaError(inNamedForm);
  const description = schemaAt(error.schemaPath)?.description ?? 'one of the allowed forms';
  return new MalformedModelFile(readablePath(error.instancePath), `expected ${description}`);
}

/**
 * What a schema cannot say about a tree: every array as long as `feature`; a leaf has feature -1, a
 * split a feature index below the feature count and two children after it (so every walk ends at a
 * leaf: the tree is acyclic) that no other split names (each node has one parent); a split's count is
 * the sum of its children's (TreeSHAP weighs by them).
 */
function treeProblem(tree: TreeArrays, featureCount: number, path: string): MalformedModelFile | undefined {
  const n = tree.feature.length;
  for (const key of ['threshold', 'missing_go_to_left', 'left', 'right', 'is_leaf', 'value', 'count'] as const) {
    if (tree[key].length !== n) return new MalformedModelFile(`${path}.${key}`, `expected ${n} items, got ${tree[key].length}`);
  }
  const parents = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const at = `${path}.node ${i}`;
    const feature = tree.feature[i] as number;
    if (tree.is_leaf[i] === 1) {
      if (feature !== -1) return new MalformedModelFile(at, 'a leaf must have feature -1');
      continue;
    }
    if (feature < 0 || feature >= featureCount) return new MalformedModelFile(at, `feature index ${feature} outside 0..${featureCount - 1}`);
    const left = tree.left[i] as number;
    const right = tree.right[i] as number;
    if (left <= i || left >= n || right <= i || right >= n) return new MalformedModelFile(at, 'child index out of range');
    if (left === right || parents[left] || parents[right]) return new MalformedModelFile(at, 'a child of two splits');
    parents[left] = 1;
    parents[right] = 1;
    if (tree.count[i] !== (tree.count[left] as number) + (tree.count[right] as number)) {
      return new MalformedModelFile(at, `count ${tree.count[i]} is not the sum of its children's (${tree.count[left]} + ${tree.count[right]})`);
    }
  }
  return undefined;
}

/** The checks across fields: the trees, the feature names, the groups' maxima, the table's lengths, the card. */
function contentProblem(file: ModelFile): MalformedModelFile | undefined {
  const names = new Set<string>();
  for (const [i, feature] of file.features.entries()) {
    if (names.has(feature.name)) return new MalformedModelFile(`features[${i}].name`, `duplicate feature ${feature.name}`);
    names.add(feature.name);
  }
  for (const [i, tree] of file.trees.entries()) {
    const problem = treeProblem(tree, file.features.length, `trees[${i}]`);
    if (problem) return problem;
  }
  const area = file.model_area;
  if (!(area.lat_min < area.lat_max && area.long_min < area.long_max)) return new MalformedModelFile('model_area', 'empty area');
  for (const [i, group] of file.rare_value_thresholds.entries()) {
    const missing = group.fields.find((field) => !Object.hasOwn(group.max, field));
    if (missing) return new MalformedModelFile(`rare_value_thresholds[${i}].max.${missing}`, 'missing');
  }
  const table = file.comparable_sales;
  const dated = table.date_runs.reduce((total, [, count]) => total + count, 0);
  if (dated !== table.sales) return new MalformedModelFile('comparable_sales.date_runs', `the runs count ${dated} sales, expected ${table.sales}`);
  for (const [key, column] of Object.entries(table.columns)) {
    if (column.length !== table.sales) return new MalformedModelFile(`comparable_sales.columns.${key}`, `expected ${table.sales} items, got ${column.length}`);
  }
  if (!table.columns.sqft_living.every((v) => v > 0)) return new MalformedModelFile('comparable_sales.columns.sqft_living', 'expected positive numbers');
  if (!file.card.not_for.some((s) => /lending/i.test(s))) return new MalformedModelFile('card.not_for', 'must state: not for lending');
  const index = file.price_index;
  const gap = index.months.findIndex((m, i) => i > 0 && monthAfter((index.months[i - 1] as { month: string }).month) !== m.month);
  if (gap > 0) return new MalformedModelFile(`price_index.months[${gap}]`, 'expected the month after the previous one');
  if (index.months.length <= index.extrapolation.trend_months) return new MalformedModelFile('price_index.months', 'fewer months than the trend needs');
  if (!file.prices_as_of.startsWith(`${index.as_of_month}-`) || !index.months.some((m) => m.month === index.as_of_month)) {
    return new MalformedModelFile('price_index.as_of_month', 'expected the month of prices_as_of, a month of the index');
  }
  if (file.card.model_version !== file.model_version || file.card.prices_as_of !== file.prices_as_of) {
    return new MalformedModelFile('card', 'model_version / prices_as_of differ from the file');
  }
  return undefined;
}

/** The month after a `YYYY-MM` month. */
function monthAfter(month: string): string {
  const year = Number(month.slice(0, 4));
  const m = Number(month.slice(5, 7));
  return m === 12 ? `${String(year + 1).padStart(4, '0')}-01` : `${month.slice(0, 5)}${String(m + 1).padStart(2, '0')}`;
}

/** Parse and check a model file (its text, bytes, or already JSON-parsed value); the file as it is, typed. */
export function parseModelFile(input: unknown): ModelFile {
  let value: unknown = input;
  if (typeof input === 'string' || input instanceof Uint8Array) {
    const text = typeof input === 'string' ? input : new TextDecoder('utf-8', { fatal: true }).decode(input);
    try {
      value = JSON.parse(text);
    } catch (error) {
      throw new MalformedModelFile('', `not JSON (${(error as Error).message})`);
    }
  }
  // The version first: a file of another format is named as such, not by its first difference.
  const version = typeof value === 'object' && value !== null ? (value as { format_version?: unknown }).format_version : undefined;
  if (version !== undefined && version !== SUPPORTED_FORMAT_VERSION) {
    throw new MalformedModelFile('format_version', `unsupported ${JSON.stringify(version)}, expected ${SUPPORTED_FORMAT_VERSION}`);
  }
  const problem = schemaProblem(value) ?? contentProblem(value as ModelFile);
  if (problem) throw problem;
  return value as ModelFile;
}
