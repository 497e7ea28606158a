/**
 * The primitives of every settings reader (the platform's, settings.ts, and each service's): a value
 * from the environment, read by a pure function that fails closed. A variable that is set but holds
 * no usable value (empty, only spaces, only commas, a control character, out of range, an unknown
 * word, a repeated item) stops the start with a SettingsError whose message is one line,
 * `Invalid setting NAME: why`; the start command prints it alone on stderr and exits 1.
 * The concerns that read their own settings (metrics.ts, rate-limit.ts) import these, not settings.ts,
 * which imports them: no cycle.
 */

export type Env = Record<string, string | undefined>;

export class SettingsError extends Error {
  constructor(
    readonly variable: string,
    detail: string,
  ) {
    super(`Invalid setting ${variable}: ${detail}`);
    this.name = 'SettingsError';
  }
}

/** How a setting's value is described in messages, and whether it may be echoed. */
export interface SettingShape {
  /** What a usable value is, e.g. `a port number (0 to 65535)`. */
  expected: string;
  /** True for keys, secrets and URLs that may hold a password: the value is never quoted. */
  secret?: boolean;
}

// eslint-disable-next-line no-control-regex -- finding control characters is this pattern's purpose
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;
const QUOTED_VALUE_MAX = 80;

/** The value as a message may show it: JSON-quoted (one line whatever it holds), cut at 80 characters. */
export function quoted(value: string): string {
  return JSON.stringify(value.length > QUOTED_VALUE_MAX ? `${value.slice(0, QUOTED_VALUE_MAX)}...` : value);
}

/** `"value" is not ...` for an ordinary setting, `the value is not ...` for a secret one. */
function subject(value: string, shape: SettingShape): string {
  return shape.secret ? 'the value' : quoted(value);
}

/**
 * The trimmed value of a setting, or undefined when the variable is unset. Set but empty or blank,
 * or holding a control character: refused.
 */
export function readText(env: Env, variable: string, shape: SettingShape): string | undefined {
  const raw = env[variable];
  if (raw === undefined) return undefined;
  const value = raw.trim();
  if (value === '') {
    throw new SettingsError(variable, `set but empty; give ${shape.expected}, or unset it for the default`);
  }
  if (CONTROL_CHARACTER.test(value)) {
    throw new SettingsError(variable, `${subject(value, shape)} holds a control character; give ${shape.expected}`);
  }
  return value;
}

/**
 * A comma-separated list, or undefined when the variable is unset. Each item is trimmed; a value
 * with no item, an empty item or an item given twice is refused (`item` names one in messages).
 */
export function readList(env: Env, variable: string, shape: SettingShape & { item: string }): string[] | undefined {
  const value = readText(env, variable, shape);
  if (value === undefined) return undefined;
  const items = value.split(',').map((item) => item.trim());
  if (items.every((item) => item === '')) {
    throw new SettingsError(variable, `holds only commas; give ${shape.expected}, or unset it for the default`);
  }
  items.forEach((item, index) => {
    if (item === '') {
      throw new SettingsError(variable, `${shape.item} ${index + 1} of ${items.length} is empty (a stray comma); give ${shape.expected}`);
    }
    const first = items.indexOf(item);
    if (first !== index) {
      throw new SettingsError(variable, `${shape.item} ${index + 1} repeats ${shape.item} ${first + 1}; give each once`);
    }
  });
  return items;
}

/** One of a few words, in any case; the default when unset. */
export function readChoice<T extends string>(env: Env, variable: string, choices: readonly T[], defaultValue: T): T {
  const expected = `one of ${choices.join(', ')}`;
  const value = readText(env, variable, { expected });
  if (value === undefined) return defaultValue;
  const choice = choices.find((word) => word === value.toLowerCase());
  if (choice === undefined) throw new SettingsError(variable, `${quoted(value)} is not ${expected}`);
  return choice;
}

export function readBoolean(env: Env, variable: string, defaultValue: boolean): boolean {
  return readChoice(env, variable, ['true', 'false'], defaultValue ? 'true' : 'false') === 'true';
}

/** Printable ASCII without spaces: what a header value can carry unchanged, and any shell or YAML file. */
export const PRINTABLE_TOKEN = /^[\x21-\x7e]+$/;

/**
 * A comma-separated list of keys or secrets (API_KEY, CURSOR_SECRET), or undefined when unset: the
 * list rules, each item printable ASCII without spaces, and never an item quoted in a message.
 */
export function readSecretList(env: Env, variable: string, shape: { expected: string; item: string }): string[] | undefined {
  const items = readList(env, variable, { ...shape, secret: true });
  items?.forEach((item, index) => {
    if (!PRINTABLE_TOKEN.test(item)) {
      throw new SettingsError(variable, `${shape.item} ${index + 1} is not printable ASCII without spaces (separate several by commas)`);
    }
  });
  return items;
}

/** A whole number from `min` to `max` (decimal digits) of `unit`s; the default when unset. */
export function readWholeNumber(env: Env, variable: string, limits: { min: number; max: number; defaultValue: number; unit: string }): number {
  const expected = `a whole number of ${limits.unit} from ${limits.min} to ${limits.max}`;
  const value = readText(env, variable, { expected });
  if (value === undefined) return limits.defaultValue;
  const number = /^[0-9]{1,9}$/.test(value) ? Number(value) : Number.NaN;
  if (!(number >= limits.min && number <= limits.max)) throw new SettingsError(variable, `${quoted(value)} is not ${expected}`);
  return number;
}

/**
 * A whole number of seconds from `min` to `max` (decimal digits), in milliseconds; the default when
 * unset.
 */
export function readSeconds(env: Env, variable: string, limits: { min: number; max: number; defaultSeconds: number }): number {
  return readWholeNumber(env, variable, { min: limits.min, max: limits.max, defaultValue: limits.defaultSeconds, unit: 'seconds' }) * 1_000;
}

