/**
 * What the walks of a grouping (`/v1/stats/groups`) share, whether they record the rows
 * (group-scan.ts) or count them by value (group-value-counts.ts): the periods as the walks find them,
 * each day's key (its day, ISO week, month or year, or the part of a year a long grouping is counted
 * by), numbered as found (the rows come in created_at order, so the periods are numbered in time
 * order, and a walk asks for a row's period only at the first row of each day); and the groups found.
 */
import { DAY_SECONDS } from '../../../snapshot/index.js';
import type { GroupPeriod } from './group-query.js';
import { BUCKET_KEY_OF } from './period-stats.js';
import { dayOfRow, type CodeArray, type CreatedColumn } from './row-column-scan.js';

/** The period key of a day: the day, its ISO week and month as the weekly and monthly numbers key them, its year. */
export const PERIOD_KEY_OF: Readonly<Record<GroupPeriod, (day: string) => string>> = {
  ...BUCKET_KEY_OF,
  year: (day) => day.slice(0, 4),
};

/** Where a walk is among the periods: the period of its rows, up to the first row of the next day (+Infinity without a period). */
export interface PeriodWalk {
  period: number;
  nextDayStart: number;
}

/** The periods of a grouping, numbered as its walks find them. */
export interface PeriodNumbering {
  /** The periods walked by, by number. */
  periods: string[];
  /** The periods the answer shows (the same as `periods` unless counted by parts of them), and the one of each period walked by. */
  shownPeriods: string[];
  shownOf: number[];
  /** Sets the walk's period and its next day's first row, for a row at or after `nextDayStart`. */
  periodAt: (row: number, walk: PeriodWalk) => void;
}

/**
 * The periods of the days' keys `keyOf` (null: none, one period), those shown of `shownKeyOf`
 * (a period of them holds one or more of those walked by, that follow each other).
 */
export function periodNumbering(created: CreatedColumn, keyOf: ((day: string) => string) | null, shownKeyOf: (day: string) => string): PeriodNumbering {
  const periods: string[] = [];
  const shownPeriods: string[] = [];
  const shownOf: number[] = [];
  const periodIndex = new Map<string, number>();
  const periodAt = (row: number, walk: PeriodWalk): void => {
    const day = dayOfRow(created, row);
    walk.nextDayStart = created.dayStarts[day + 1] as number;
    const dayText = new Date(day * DAY_SECONDS * 1000).toISOString().slice(0, 10);
    const key = (keyOf as (day: string) => string)(dayText);
    let index = periodIndex.get(key);
    if (index === undefined) {
      index = periods.length;
      periods.push(key);
      periodIndex.set(key, index);
      const shown = shownKeyOf(dayText);
      if (shownPeriods.at(-1) !== shown) shownPeriods.push(shown);
      shownOf.push(shownPeriods.length - 1);
    }
    walk.period = index;
  };
  return { periods, shownPeriods, shownOf, periodAt };
}

/** A walk at the first of the rows: a period is asked for at its first row, unless there is none (`keyOf` null). */
export function firstPeriodWalk(keyOf: ((day: string) => string) | null): PeriodWalk {
  return { period: 0, nextDayStart: keyOf === null ? Number.POSITIVE_INFINITY : 0 };
}

/**
 * The groups a scan found, numbered as found (a period's groups together, the periods in time order),
 * each with its key and counts, and how the days_to_close of sets of them are ranked.
 */
export interface FoundGroups {
  count: number;
  /** Each group's period as the answer shows it: its number in `shownPeriods` (0 without a period). */
  shownPeriodOf: ArrayLike<number>;
  shownPeriods: string[];
  /** Each group's key, numbered as found, and each key's codes (first code * CODE_SPAN + second). */
  keyOf: ArrayLike<number>;
  keyCodes: ArrayLike<number>;
  keyCount: number;
  /** Each group's opened, closed and closed within 14 days. */
  opened: ArrayLike<number>;
  closed: ArrayLike<number>;
  within: ArrayLike<number>;
  /**
   * The low and high middles and the p90 (hundredths; NaN for none) of sets of groups: `setOf` the
   * set of each group (below 0: none), into[3 s, 3 s + 3) those of set s, for s below setCount.
   */
  rankSets: (setOf: Int32Array, setCount: number, into: Float64Array) => void;
  /** Gives back what the thread keeps for its next scans, once the answer is made. */
  release: () => void;
}

/** A block's matching rows and the columns a walk of a grouping reads, from the block's first row. */
export interface RowBlock {
  rows: Int32Array;
  count: number;
  blockStart: number;
  first: CodeArray;
  /** The second column's codes (the first's again for one column, with secondFactor 0). */
  second: CodeArray;
  secondFactor: number;
  hundredths: Uint16Array;
}
