/**
 * The great-circle distance of the `near` filter (list-filters.ts): the haversine formula on a sphere
 * of the Earth's mean radius. The SQLite store registers this very function for its SQL, the row
 * column scans call it, and PostgreSQL's SQL states the same arithmetic (filter-sql.ts), so that every
 * path measures a request's distance with the same numbers.
 */

/** The Earth's mean radius, metres (IUGG: (2a + b) / 3 of WGS 84). */
export const EARTH_RADIUS_M = 6_371_008.8;

const RADIANS = Math.PI / 180;

/** Metres along the sphere between two locations (degrees). */
export function greatCircleMeters(latitude1: number, longitude1: number, latitude2: number, longitude2: number): number {
  const halfLatitude = Math.sin(((latitude2 - latitude1) * RADIANS) / 2);
  const halfLongitude = Math.sin(((longitude2 - longitude1) * RADIANS) / 2);
  const a = halfLatitude * halfLatitude + Math.cos(latitude1 * RADIANS) * Math.cos(latitude2 * RADIANS) * halfLongitude * halfLongitude;
  return 2 * EARTH_RADIUS_M * Math.asin(Math.min(1, Math.sqrt(a)));
}

/**
 * A box that holds every location within `radiusM` of a centre (a little larger: a prefilter that an
 * index or a cheap comparison can test before the exact distance). Near a pole, every longitude.
 */
export function boxAround(latitude: number, longitude: number, radiusM: number): { minLatitude: number; maxLatitude: number; minLongitude: number; maxLongitude: number } {
  // One part in a thousand more, and a micro-degree: rounding never leaves a location within the radius outside.
  const degrees = (radiusM / EARTH_RADIUS_M / RADIANS) * 1.001 + 1e-6;
  const minLatitude = latitude - degrees;
  const maxLatitude = latitude + degrees;
  if (minLatitude <= -89 || maxLatitude >= 89) return { minLatitude, maxLatitude, minLongitude: -180, maxLongitude: 180 };
  const widest = Math.max(Math.abs(minLatitude), Math.abs(maxLatitude));
  const longitudeDegrees = degrees / Math.cos(widest * RADIANS);
  return { minLatitude, maxLatitude, minLongitude: longitude - longitudeDegrees, maxLongitude: longitude + longitudeDegrees };
}
