import { HOUSE_LIMITS, type House, type ModelArea } from './house.js';

/**
 * The rules of a house that one field's schema cannot express, and the model area.
 * Cross-field rules run on a house whose own fields passed the schema: a rule is checked only when
 * every field it reads is valid, so that one problem is not reported twice.
 */
export interface FieldProblem {
  /** Field path, e.g. `sqft_basement` or `houses.2.sqft_basement`. */
  field: string;
  problem: string;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * sqft_basement smaller than sqft_living; yr_renovated 0 or not before yr_built.
 * `prefix` is '' for a single house, `houses.<index>.` in a batch; `invalidPaths` are the fields the
 * schema already refused.
 */
export function crossFieldProblems(house: unknown, prefix: string, invalidPaths: { has(path: string): boolean }): FieldProblem[] {
  if (!isRecord(house)) return [];
  const usable = (field: keyof House): boolean =>
    Object.hasOwn(house, field) && typeof house[field] === 'number' && !invalidPaths.has(prefix + field);
  const problems: FieldProblem[] = [];
  if (usable('sqft_basement') && usable('sqft_living') && (house.sqft_basement as number) >= (house.sqft_living as number)) {
    problems.push({ field: `${prefix}sqft_basement`, problem: 'must be smaller than sqft_living' });
  }
  if (usable('yr_renovated') && usable('yr_built')) {
    const renovated = house.yr_renovated as number;
    if (renovated !== HOUSE_LIMITS.yr_renovated.never && renovated < (house.yr_built as number)) {
      problems.push({ field: `${prefix}yr_renovated`, problem: 'must be 0 (never renovated) or a year from yr_built to 2015' });
    }
  }
  return problems;
}

/** The coordinates of a valid house that lie outside the model area (bounds included): lat, long, both or none. */
export function coordinatesOutsideArea(house: House, area: ModelArea): ('lat' | 'long')[] {
  const outside: ('lat' | 'long')[] = [];
  if (!(house.lat >= area.lat_min && house.lat <= area.lat_max)) outside.push('lat');
  if (!(house.long >= area.long_min && house.long <= area.long_max)) outside.push('long');
  return outside;
}
