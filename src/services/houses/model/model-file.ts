/**
 * The house-price model file (models/kc-hgb-*.json), written by `python -m training.train`
 * (see training/README.md): its types and a strict parser that refuses a malformed file
 * with a clear Error before anything is evaluated.
 */

/** The 16 request fields of a House, in the contract's order. */
export const REQUEST_FIELDS = [
  'bedrooms',
  'bathrooms',
  'floors',
  'sqft_living',
  'sqft_basement',
  'sqft_lot',
  'waterfront',
  'view',
  'condition',
  'grade',
  'yr_built',
  'yr_renovated',
  'lat',
  'long',
  'sqft_living15',
  'sqft_lot15',
] as const;

export type RequestField = (typeof REQUEST_FIELDS)[number];

/** A house as the service receives it (already validated). */
export interface HouseInput {
  bedrooms: number;
  bathrooms: number;
  floors: number;
  sqft_living: number;
  sqft_basement: number;
  sqft_lot: number;
  waterfront: boolean;
  view: number;
  condition: number;
  grade: number;
  yr_built: number;
  yr_renovated: number;
  lat: number;
  long: number;
  sqft_living15: number;
  sqft_lot15: number;
}

/**
 * One model input. `input`: a request field as a number (waterfront: 1 or 0).
 * `add_scaled`: x + c * y. `max`: max(x, y). All in float64, exactly as in training.
 */
export type FeatureSpec =
  | { name: RequestField; kind: 'input'; description?: string }
  | { name: string; kind: 'add_scaled'; x: RequestField; y: RequestField; c: number; description?: string }
  | { name: string; kind: 'max'; x: RequestField; y: RequestField; description?: string };

/** raw = log(price / sqft_living); estimate = exp(raw) * sqft_living. */
export interface TargetTransform {
  name: 'log_price_per_sqft_living';
  raw: string;
  estimate: string;
  denominator: 'sqft_living';
}

/** One tree as parallel arrays indexed by node; node 0 is the root. */
export interface TreeArrays {
  /** Feature index of a split node; -1 on leaves. */
  feature: number[];
  /** Go left when value <= threshold (scikit-learn's num_threshold, float64). */
  threshold: number[];
  /** 1: a missing (NaN) value goes left. */
  missing_go_to_left: number[];
  left: number[];
  right: number[];
  is_leaf: number[];
  /** Leaf value (0 on split nodes). */
  value: number[];
  /** Number of training samples that reached the node (scikit-learn's node count; > 0). */
  count: number[];
}

/**
 * The training sales the service searches for comparable sales (training/comparables.py): the sale
 * date, price and 16 request fields of each training sale (no id), as columns in one order.
 */
export interface ComparableSalesTable {
  /** How many sales the service lists. */
  count: number;
  /** A sale is of similar size when its sqft_living is within this factor of the house's, both ways. */
  similar_size_ratio: number;
  earth_radius_km: number;
  /** How many differing fields are named per sale. */
  differing_fields: number;
  /** Per request field other than lat/long: the spread a difference is divided by. */
  scale: Partial<Record<RequestField, number>>;
  sales: number;
  /** The sale dates, in table order: [date, number of consecutive sales on that date]. */
  date_runs: [string, number][];
  /** price and the 16 request fields (waterfront 1/0), each an array of `sales` numbers. */
  columns: Record<'price' | RequestField, number[]>;
}

export interface RangeSpec {
  coverage: number;
  low_factor: number;
  high_factor: number;
  measured_test_coverage: number;
}

export interface ModelArea {
  lat_min: number;
  lat_max: number;
  long_min: number;
  long_max: number;
  margin_deg: number;
}

/** One warning per group: a house with any field of the group above its max. */
export interface RareValueGroup {
  name: string;
  fields: RequestField[];
  quantile: number;
  max: Partial<Record<RequestField, number>>;
}

export interface CardTest {
  sales: number;
  first_sales: string;
  median_error_pct: number;
  mape_pct: number;
  within_10pct: number;
  over_by_10pct_or_more: number;
  [key: string]: unknown;
}

/** The model card, exactly as GET /v1/model returns it. */
export interface ModelCard {
  model_version: string;
  prices_as_of: string;
  test: CardTest;
  range: RangeSpec;
  not_for: string[];
  intended_use: string;
  training: Record<string, unknown>;
  features: { name: string; description: string }[];
  [key: string]: unknown;
}

export interface ModelFile {
  format_version: 2;
  model_version: string;
  prices_as_of: string;
  features: FeatureSpec[];
  target_transform: TargetTransform;
  baseline: number;
  trees: TreeArrays[];
  range: RangeSpec;
  model_area: ModelArea;
  rare_value_thresholds: RareValueGroup[];
  high_value_usd: number;
  card: ModelCard;
  comparable_sales: ComparableSalesTable;
  trained_with?: Record<string, string>;
}

/** 2: the trees carry each node's training sample count, and the file holds the comparable sales. */
export const SUPPORTED_FORMAT_VERSION = 2;

class Check {
  constructor(private readonly path: string) {}

  fail(message: string): never {
    throw new Error(`malformed model file: ${this.path ? `${this.path}: ` : ''}${message}`);
  }

  at(key: string | number): Check {
    return new Check(typeof key === 'number' ? `${this.path}[${key}]` : this.path ? `${this.path}.${key}` : key);
  }
}

type Obj = Record<string, unknown>;

function isObject(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function object(value: unknown, c: Check): Obj {
  if (!isObject(value)) c.fail('expected an object');
  return value;
}

function field(obj: Obj, key: string, c: Check): unknown {
  if (!(key in obj)) c.at(key).fail('missing');
  return obj[key];
}

function finite(value: unknown, c: Check): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) c.fail('expected a finite number');
  return value;
}

function str(value: unknown, c: Check): string {
  if (typeof value !== 'string' || value === '') c.fail('expected a non-empty string');
  return value;
}

function date(value: unknown, c: Check): string {
  const s = str(value, c);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(s)) c.fail('expected a date YYYY-MM-DD');
  return s;
}

function array(value: unknown, c: Check): unknown[] {
  if (!Array.isArray(value)) c.fail('expected an array');
  return value;
}

function requestField(value: unknown, c: Check): RequestField {
  if (typeof value !== 'string' || !(REQUEST_FIELDS as readonly string[]).includes(value)) {
    c.fail(`expected one of the 16 request fields, got ${JSON.stringify(value)}`);
  }
  return value as RequestField;
}

function numberArray(value: unknown, length: number | undefined, c: Check, integer: boolean): number[] {
  const a = array(value, c);
  if (length !== undefined && a.length !== length) c.fail(`expected ${length} items, got ${a.length}`);
  for (let i = 0; i < a.length; i++) {
    const v = a[i];
    if (typeof v !== 'number' || Number.isNaN(v) || (integer && !Number.isInteger(v))) {
      c.at(i).fail(integer ? 'expected an integer' : 'expected a number');
    }
  }
  return a as number[];
}

function parseFeatures(value: unknown, c: Check): FeatureSpec[] {
  const list = array(value, c);
  if (list.length === 0) c.fail('no features');
  const names = new Set<string>();
  return list.map((item, i) => {
    const fc = c.at(i);
    const o = object(item, fc);
    const name = str(field(o, 'name', fc), fc.at('name'));
    if (names.has(name)) fc.at('name').fail(`duplicate feature ${name}`);
    names.add(name);
    const description = o.description === undefined ? undefined : str(o.description, fc.at('description'));
    const kind = field(o, 'kind', fc);
    const extra = description === undefined ? {} : { description };
    if (kind === 'input') {
      return { name: requestField(name, fc.at('name')), kind, ...extra };
    }
    const x = requestField(field(o, 'x', fc), fc.at('x'));
    const y = requestField(field(o, 'y', fc), fc.at('y'));
    if (kind === 'add_scaled') {
      return { name, kind, x, y, c: finite(field(o, 'c', fc), fc.at('c')), ...extra };
    }
    if (kind === 'max') return { name, kind, x, y, ...extra };
    return fc.at('kind').fail(`unknown feature kind ${JSON.stringify(kind)}`);
  });
}

function parseTree(value: unknown, nFeatures: number, c: Check): TreeArrays {
  const o = object(value, c);
  const feature = numberArray(field(o, 'feature', c), undefined, c.at('feature'), true);
  const n = feature.length;
  if (n === 0) c.at('feature').fail('empty tree');
  const tree: TreeArrays = {
    feature,
    threshold: numberArray(field(o, 'threshold', c), n, c.at('threshold'), false),
    missing_go_to_left: numberArray(field(o, 'missing_go_to_left', c), n, c.at('missing_go_to_left'), true),
    left: numberArray(field(o, 'left', c), n, c.at('left'), true),
    right: numberArray(field(o, 'right', c), n, c.at('right'), true),
    is_leaf: numberArray(field(o, 'is_leaf', c), n, c.at('is_leaf'), true),
    value: numberArray(field(o, 'value', c), n, c.at('value'), false),
    count: numberArray(field(o, 'count', c), n, c.at('count'), true),
  };
  for (let i = 0; i < n; i++) {
    const nc = c.at(`node ${i}`);
    const leaf = tree.is_leaf[i];
    const miss = tree.missing_go_to_left[i];
    if (leaf !== 0 && leaf !== 1) nc.fail('is_leaf must be 0 or 1');
    if (!((tree.count[i] as number) > 0)) nc.fail('count must be positive');
    if (miss !== 0 && miss !== 1) nc.fail('missing_go_to_left must be 0 or 1');
    if (leaf === 1) {
      if (feature[i] !== -1) nc.fail('a leaf must have feature -1');
      if (!Number.isFinite(tree.value[i])) nc.fail('leaf value must be finite');
    } else {
      const f = feature[i] as number;
      const l = tree.left[i] as number;
      const r = tree.right[i] as number;
      if (f < 0 || f >= nFeatures) nc.fail(`feature index ${f} outside 0..${nFeatures - 1}`);
      // Children come after their parent: walking always ends at a leaf.
      if (l <= i || l >= n || r <= i || r >= n) nc.fail('child index out of range');
    }
  }
  return tree;
}

function parseRange(value: unknown, c: Check): RangeSpec {
  const o = object(value, c);
  const range = {
    coverage: finite(field(o, 'coverage', c), c.at('coverage')),
    low_factor: finite(field(o, 'low_factor', c), c.at('low_factor')),
    high_factor: finite(field(o, 'high_factor', c), c.at('high_factor')),
    measured_test_coverage: finite(field(o, 'measured_test_coverage', c), c.at('measured_test_coverage')),
  };
  if (!(range.low_factor > 0 && range.low_factor <= 1 && range.high_factor >= 1)) {
    c.fail('expected 0 < low_factor <= 1 <= high_factor');
  }
  return range;
}

function parseArea(value: unknown, c: Check): ModelArea {
  const o = object(value, c);
  const area = {
    lat_min: finite(field(o, 'lat_min', c), c.at('lat_min')),
    lat_max: finite(field(o, 'lat_max', c), c.at('lat_max')),
    long_min: finite(field(o, 'long_min', c), c.at('long_min')),
    long_max: finite(field(o, 'long_max', c), c.at('long_max')),
    margin_deg: finite(field(o, 'margin_deg', c), c.at('margin_deg')),
  };
  if (!(area.lat_min < area.lat_max && area.long_min < area.long_max)) c.fail('empty area');
  return area;
}

function parseRare(value: unknown, c: Check): RareValueGroup[] {
  return array(value, c).map((item, i) => {
    const gc = c.at(i);
    const o = object(item, gc);
    const fields = array(field(o, 'fields', gc), gc.at('fields')).map((f, j) => requestField(f, gc.at('fields').at(j)));
    if (fields.length === 0) gc.at('fields').fail('no fields');
    const maxObj = object(field(o, 'max', gc), gc.at('max'));
    const max: Partial<Record<RequestField, number>> = {};
    for (const f of fields) max[f] = finite(field(maxObj, f, gc.at('max')), gc.at('max').at(f));
    return {
      name: str(field(o, 'name', gc), gc.at('name')),
      fields,
      quantile: finite(field(o, 'quantile', gc), gc.at('quantile')),
      max,
    };
  });
}

function parseComparableSales(value: unknown, c: Check): ComparableSalesTable {
  const o = object(value, c);
  const positiveInteger = (key: string): number => {
    const v = finite(field(o, key, c), c.at(key));
    if (!Number.isInteger(v) || v <= 0) c.at(key).fail('expected a positive integer');
    return v;
  };
  const sales = positiveInteger('sales');
  const count = positiveInteger('count');
  const differing = positiveInteger('differing_fields');
  const ratio = finite(field(o, 'similar_size_ratio', c), c.at('similar_size_ratio'));
  if (!(ratio >= 1)) c.at('similar_size_ratio').fail('expected a number >= 1');
  const radius = finite(field(o, 'earth_radius_km', c), c.at('earth_radius_km'));
  const scaleObj = object(field(o, 'scale', c), c.at('scale'));
  const scale: Partial<Record<RequestField, number>> = {};
  for (const f of REQUEST_FIELDS) {
    if (f === 'lat' || f === 'long') continue;
    const v = finite(field(scaleObj, f, c.at('scale')), c.at('scale').at(f));
    if (!(v > 0)) c.at('scale').at(f).fail('expected a positive number');
    scale[f] = v;
  }
  const runsCheck = c.at('date_runs');
  let dated = 0;
  const runs = array(field(o, 'date_runs', c), runsCheck).map((run, i) => {
    const rc = runsCheck.at(i);
    const pair = array(run, rc);
    if (pair.length !== 2) rc.fail('expected [date, count]');
    const n = finite(pair[1], rc.at(1));
    if (!Number.isInteger(n) || n <= 0) rc.at(1).fail('expected a positive integer');
    dated += n;
    return [date(pair[0], rc.at(0)), n] as [string, number];
  });
  if (dated !== sales) runsCheck.fail(`the runs count ${dated} sales, expected ${sales}`);
  const cc = c.at('columns');
  const colObj = object(field(o, 'columns', c), cc);
  const columns = {} as Record<'price' | RequestField, number[]>;
  for (const key of ['price', ...REQUEST_FIELDS] as const) {
    columns[key] = numberArray(field(colObj, key, cc), sales, cc.at(key), false);
    if (!columns[key].every(Number.isFinite)) cc.at(key).fail('expected finite numbers');
  }
  if (!columns.sqft_living.every((v) => v > 0)) cc.at('sqft_living').fail('expected positive numbers');
  return { count, similar_size_ratio: ratio, earth_radius_km: radius, differing_fields: differing, scale, sales, date_runs: runs, columns };
}

function parseCard(value: unknown, c: Check): ModelCard {
  const o = object(value, c);
  const tc = c.at('test');
  const t = object(field(o, 'test', c), tc);
  const sales = finite(field(t, 'sales', tc), tc.at('sales'));
  if (!Number.isInteger(sales) || sales <= 0) tc.at('sales').fail('expected a positive integer');
  for (const k of ['median_error_pct', 'mape_pct', 'within_10pct', 'over_by_10pct_or_more']) {
    finite(field(t, k, tc), tc.at(k));
  }
  str(field(t, 'first_sales', tc), tc.at('first_sales'));
  str(field(o, 'model_version', c), c.at('model_version'));
  date(field(o, 'prices_as_of', c), c.at('prices_as_of'));
  str(field(o, 'intended_use', c), c.at('intended_use'));
  parseRange(field(o, 'range', c), c.at('range'));
  object(field(o, 'training', c), c.at('training'));
  array(field(o, 'features', c), c.at('features'));
  const notFor = array(field(o, 'not_for', c), c.at('not_for'));
  notFor.forEach((s, i) => str(s, c.at('not_for').at(i)));
  if (!notFor.some((s) => /lending/i.test(String(s)))) c.at('not_for').fail('must state: not for lending');
  return o as unknown as ModelCard;
}

/** Parse and check a model file (its text, bytes, or already JSON-parsed value). */
export function parseModelFile(input: string | Uint8Array | unknown): ModelFile {
  let value: unknown = input;
  if (typeof input === 'string' || input instanceof Uint8Array) {
    const text = typeof input === 'string' ? input : new TextDecoder('utf-8', { fatal: true }).decode(input);
    try {
      value = JSON.parse(text);
    } catch (error) {
      throw new Error(`malformed model file: not JSON (${(error as Error).message})`);
    }
  }
  const c = new Check('');
  const o = object(value, c);
  const version = field(o, 'format_version', c);
  if (version !== SUPPORTED_FORMAT_VERSION) {
    c.at('format_version').fail(`unsupported ${JSON.stringify(version)}, expected ${SUPPORTED_FORMAT_VERSION}`);
  }
  const features = parseFeatures(field(o, 'features', c), c.at('features'));
  const tt = object(field(o, 'target_transform', c), c.at('target_transform'));
  if (tt.name !== 'log_price_per_sqft_living' || tt.denominator !== 'sqft_living') {
    c.at('target_transform').fail(`unsupported ${JSON.stringify(tt.name)}`);
  }
  const trees = array(field(o, 'trees', c), c.at('trees')).map((t, i) => parseTree(t, features.length, c.at('trees').at(i)));
  if (trees.length === 0) c.at('trees').fail('no trees');
  const file: ModelFile = {
    format_version: SUPPORTED_FORMAT_VERSION,
    model_version: str(field(o, 'model_version', c), c.at('model_version')),
    prices_as_of: date(field(o, 'prices_as_of', c), c.at('prices_as_of')),
    features,
    target_transform: tt as unknown as TargetTransform,
    baseline: finite(field(o, 'baseline', c), c.at('baseline')),
    trees,
    range: parseRange(field(o, 'range', c), c.at('range')),
    model_area: parseArea(field(o, 'model_area', c), c.at('model_area')),
    rare_value_thresholds: parseRare(field(o, 'rare_value_thresholds', c), c.at('rare_value_thresholds')),
    high_value_usd: finite(field(o, 'high_value_usd', c), c.at('high_value_usd')),
    card: parseCard(field(o, 'card', c), c.at('card')),
    comparable_sales: parseComparableSales(field(o, 'comparable_sales', c), c.at('comparable_sales')),
  };
  if (isObject(o.trained_with)) file.trained_with = o.trained_with as Record<string, string>;
  if (file.card.model_version !== file.model_version || file.card.prices_as_of !== file.prices_as_of) {
    c.at('card').fail('model_version / prices_as_of differ from the file');
  }
  return file;
}
