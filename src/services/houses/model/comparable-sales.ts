/**
 * The training sales most like a house, from the model file's comparable-sales table
 * (training/comparables.py; docs/houses.md, "Comparable sales"):
 *
 * - similar size: the sale's sqft_living is within a factor `similar_size_ratio` (1.25) of the
 *   house's, both ways (sale / house between 1 / 1.25 and 1.25, bounds included);
 * - among those, the `count` (5) nearest by great-circle distance (the haversine formula on a sphere
 *   of radius `earth_radius_km`), nearest first; equal distances keep table order (date, then CSV row);
 * - when fewer than `count` sales are of similar size, the rest are the sales nearest in size
 *   (|log(sale / house)|, the smaller size first on a tie), listed after them;
 * - each sale names the `differing_fields` (3) fields that differ most from the house: largest
 *   |sale - house| / scale first (scale: the field's standard deviation over the training sales,
 *   stored in the table), lat and long left out (the distance says it), equal fields never named.
 *
 * The search ranks by the dot product of unit vectors (the chord, which orders like the great-circle
 * distance) over the similar-size slice of the table sorted by size, and computes the haversine
 * distance of the chosen sales only.
 */
import { fieldAsNumber, fieldFromNumber, HOUSE_FIELDS, type House, type HouseField } from '../house.js';
import type { ComparableSalesTable } from './model-file.js';

export interface DifferingField {
  field: HouseField;
  house_value: number | boolean;
  sale_value: number | boolean;
}

export interface ComparableSale {
  date: string;
  price_usd: number;
  /** price / sqft_living, 2 decimals. */
  usd_per_sqft: number;
  /** Great-circle distance from the house, km, 3 decimals. */
  distance_km: number;
  sqft_living: number;
  /** Whether the sale is of similar size (false: a sale nearest in size filling the list). */
  similar_size: boolean;
  differing_fields: DifferingField[];
}

export interface ComparableSalesFinder {
  find(house: House): ComparableSale[];
}

const RADIANS = Math.PI / 180;

function roundTo(x: number, decimals: number): number {
  const f = 10 ** decimals;
  return Math.round(x * f) / f;
}

export function createComparableSalesFinder(table: ComparableSalesTable): ComparableSalesFinder {
  const n = table.sales;
  const cols = table.columns;
  const dates: string[] = [];
  for (const [date, runs] of table.date_runs) for (let i = 0; i < runs; i++) dates.push(date);
  // Rows sorted by size (then table order): a similar-size slice is one range of this order.
  const bySize = Int32Array.from({ length: n }, (_, i) => i).sort((a, b) => (cols.sqft_living[a] as number) - (cols.sqft_living[b] as number) || a - b);
  const sizes = Float64Array.from(bySize, (i) => cols.sqft_living[i] as number);
  const ux = new Float64Array(n);
  const uy = new Float64Array(n);
  const uz = new Float64Array(n);
  for (let k = 0; k < n; k++) {
    const i = bySize[k] as number;
    const lat = (cols.lat[i] as number) * RADIANS;
    const long = (cols.long[i] as number) * RADIANS;
    ux[k] = Math.cos(lat) * Math.cos(long);
    uy[k] = Math.cos(lat) * Math.sin(long);
    uz[k] = Math.sin(lat);
  }
  const compared = HOUSE_FIELDS.filter((f) => f !== 'lat' && f !== 'long');
  const want = table.count;
  const chosen = new Int32Array(want); // positions in bySize
  const closeness = new Float64Array(want);

  /** First position whose size is >= v (orEqual) or > v. */
  function firstFrom(v: number, orEqual: boolean): number {
    let lo = 0;
    let hi = n;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const s = sizes[mid] as number;
      if (s < v || (!orEqual && s === v)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  function haversineKm(lat1: number, long1: number, lat2: number, long2: number): number {
    const dLat = (lat2 - lat1) * RADIANS;
    const dLong = (long2 - long1) * RADIANS;
    const a = Math.sin(dLat / 2) ** 2 + Math.cos(lat1 * RADIANS) * Math.cos(lat2 * RADIANS) * Math.sin(dLong / 2) ** 2;
    return 2 * table.earth_radius_km * Math.asin(Math.min(1, Math.sqrt(a)));
  }

  function describe(house: House, row: number, similar: boolean): ComparableSale {
    const scored: { field: HouseField; score: number }[] = [];
    for (const field of compared) {
      const own = fieldAsNumber(house, field);
      const sale = cols[field][row] as number;
      if (own !== sale) scored.push({ field, score: Math.abs(sale - own) / table.scale[field] });
    }
    scored.sort((a, b) => b.score - a.score); // stable: equal scores keep the contract's field order
    const price = cols.price[row] as number;
    const size = cols.sqft_living[row] as number;
    return {
      date: dates[row] as string,
      price_usd: price,
      usd_per_sqft: roundTo(price / size, 2),
      distance_km: roundTo(haversineKm(house.lat, house.long, cols.lat[row] as number, cols.long[row] as number), 3),
      sqft_living: size,
      similar_size: similar,
      differing_fields: scored.slice(0, table.differing_fields).map(({ field }) => ({
        field,
        house_value: house[field],
        sale_value: fieldFromNumber(field, cols[field][row] as number),
      })),
    };
  }

  /** How many of `chosen` are filled. */
  let found = 0;
  /**
   * Keeps position k of the slice among the nearest `want` so far if it is one of them (equal dot
   * products: the earlier table row first); answers the dot product a position must now reach.
   */
  function keep(k: number, dot: number): number {
    const row = bySize[k] as number;
    let at = found;
    while (at > 0) {
      const prevDot = closeness[at - 1] as number;
      const prevRow = bySize[chosen[at - 1] as number] as number;
      if (prevDot > dot || (prevDot === dot && prevRow < row)) break;
      at--;
    }
    if (at < want) {
      for (let m = Math.min(found, want - 1); m > at; m--) {
        chosen[m] = chosen[m - 1] as number;
        closeness[m] = closeness[m - 1] as number;
      }
      chosen[at] = k;
      closeness[at] = dot;
      if (found < want) found++;
    }
    return found < want ? -Infinity : (closeness[want - 1] as number);
  }

  return {
    find(house: House): ComparableSale[] {
      const size = house.sqft_living;
      const from = firstFrom(size / table.similar_size_ratio, true);
      const to = firstFrom(size * table.similar_size_ratio, false);
      const lat = house.lat * RADIANS;
      const long = house.long * RADIANS;
      const hx = Math.cos(lat) * Math.cos(long);
      const hy = Math.cos(lat) * Math.sin(long);
      const hz = Math.sin(lat);
      // The nearest `want` of the slice: a larger dot product is nearer; ties keep table order.
      found = 0;
      let worst = -Infinity;
      for (let k = from; k < to; k++) {
        const dot = hx * (ux[k] as number) + hy * (uy[k] as number) + hz * (uz[k] as number);
        if (dot >= worst) worst = keep(k, dot); // most of the slice is farther than the five kept
      }
      const sales: ComparableSale[] = [];
      for (let m = 0; m < found; m++) sales.push(describe(house, bySize[chosen[m] as number] as number, true));
      // Too few of similar size: the nearest in size, outward from the slice.
      let below = from - 1;
      let above = to;
      const logSize = Math.log(size);
      while (sales.length < want && (below >= 0 || above < n)) {
        const downGap = below >= 0 ? logSize - Math.log(sizes[below] as number) : Infinity;
        const upGap = above < n ? Math.log(sizes[above] as number) - logSize : Infinity;
        const k = downGap <= upGap ? below-- : above++;
        sales.push(describe(house, bySize[k] as number, false));
      }
      return sales;
    },
  };
}
