/**
 * A rate as written in a setting or in the key file: `N/second`, `N/minute`, `N/hour` or `N/day`,
 * N a whole number from 1 (up to 9 digits), spaces around the slash allowed, the unit in any case.
 * One fixed window per unit: the window is the unit.
 */
export interface Rate {
  max: number;
  windowMs: number;
  /** The rate written back in its plain form, e.g. `600/minute`. */
  text: string;
}

const WINDOWS: Readonly<Record<string, number>> = { second: 1_000, minute: 60_000, hour: 3_600_000, day: 86_400_000 };

export const RATE_EXPECTED = 'a limit of the form N/second, N/minute, N/hour or N/day with N at least 1 (for example 600/minute)';

/** The rate of `value`, or null when it is not one. */
export function parseRate(value: string): Rate | null {
  const match = /^(\d{1,9})\s*\/\s*(second|minute|hour|day)$/i.exec(value.trim());
  if (match === null) return null;
  const max = Number(match[1]);
  const window = (match[2] as string).toLowerCase();
  const windowMs = WINDOWS[window];
  if (windowMs === undefined || max < 1) return null;
  return { max, windowMs, text: `${max}/${window}` };
}
