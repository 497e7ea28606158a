import type Database from 'better-sqlite3';
import { greatCircleMeters } from '../great-circle.js';

/** The SQL function of the `near` filter on SQLite (filter-sql.ts): the great-circle distance of great-circle.ts, metres. */
export const GREAT_CIRCLE_FUNCTION = 'great_circle_m';

/** Registers the filters' functions on a connection to the snapshot (every connection that runs their SQL). */
export function registerFilterFunctions(database: Database.Database): void {
  database.function(GREAT_CIRCLE_FUNCTION, { deterministic: true }, (latitude1: unknown, longitude1: unknown, latitude2: unknown, longitude2: unknown) =>
    typeof latitude1 === 'number' && typeof longitude1 === 'number' && typeof latitude2 === 'number' && typeof longitude2 === 'number'
      ? greatCircleMeters(latitude1, longitude1, latitude2, longitude2)
      : null,
  );
}
