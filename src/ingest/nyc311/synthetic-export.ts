/**
 * A deterministic synthetic export of DOT service requests, January to June 2025, written as a raw
 * CSV in the layout of NYC Open Data's erm2-nwe9 export: the 41 classic columns with
 * `Council District` and `Police Precinct` after `Community Board` (the newer layout; the reader
 * finds columns by name, so their position does not matter).
 *
 * It is built from exactly SYNTHETIC_REQUEST_COUNT (109,915) distinct requests, each at its own
 * place, plus the dirt that cleaning removes: repeated submissions (copies of a request 1 to 55
 * minutes later at the same place), requests closed before they were created, other agencies'
 * requests, DOT requests outside the period and records repeated with the same Unique Key. The kept
 * requests also carry dirt that cleaning rewrites: Unspecified / N/A / empty values, mixed case,
 * extra spaces, UNKNOWN channels, Unspecified statuses. Addresses and streets are generated text.
 *
 * The dirt of each cleaning rule is planted by a function named after the rule: rule
 * `closed_before_created` (entry closedBeforeCreated in cleaning-rules.ts) by
 * plantClosedBeforeCreated, and so on; placeholder_to_null, spread over many fields, is marked by
 * comments with its id. malformed_record, borough_code, coordinates_numeric and local_timestamps
 * have no dirt here (the rule tests and the hand-written fixtures of test/fixtures/nyc311 cover them).
 */
import { SeededRandom } from './seeded-random.js';
import { cityLocalTimeToEpochMs, cityWallTimeExists, cityWallTimeToEpochMs, epochMsToCityLocalTime, formatExportTimestamp } from '../../snapshot/new-york-time.js';
import { STANDARD_EXPORT_COLUMNS, apiFieldName } from './export-columns.js';
import type { Borough } from '../../snapshot/service-request.js';

export const SYNTHETIC_SEED = 311;
export const SYNTHETIC_GENERATOR_VERSION = '1.1.0';
/** Requests left after cleaning the synthetic export. */
export const SYNTHETIC_REQUEST_COUNT = 109_915;
/** The synthetic export is taken on this day at 06:00 local time; statuses are as of then. */
export const SYNTHETIC_SNAPSHOT_DATE = '2025-07-01';
export const SYNTHETIC_SOURCE_DESCRIPTION = 'synthetic, in the layout of NYC Open Data erm2-nwe9';

/** Records per text chunk of the synthetic export (after the header chunk). */
export const SYNTHETIC_RECORDS_PER_CHUNK = 2000;

export function syntheticExportFileName(seed: number): string {
  return `311_Service_Requests_DOT_2025-01-01_2025-06-30_synthetic-seed${seed}.csv`;
}

/** Header of the synthetic export: the 41 columns, with Council District and Police Precinct after Community Board. */
export const SYNTHETIC_EXPORT_COLUMNS: readonly string[] = (() => {
  const columns: string[] = [...STANDARD_EXPORT_COLUMNS];
  columns.splice(columns.indexOf('Community Board') + 1, 0, 'Council District', 'Police Precinct');
  return columns;
})();

export interface SyntheticExportCounts {
  /** Distinct requests: what cleaning keeps. */
  requests: number;
  repeatedSubmissions: number;
  closedBeforeCreation: number;
  otherAgencies: number;
  outsidePeriod: number;
  duplicateUniqueKeys: number;
  /** Data records of the CSV. */
  records: number;
}

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;
/** 2025-01-01T00:00:00 as a wall time (ms, as if UTC). */
const PERIOD_START_WALL = Date.UTC(2025, 0, 1);
const PERIOD_DAYS = 181;
/** 06:00 New York time on the snapshot date (2025-07-01 06:00 EDT): the moment of the export. */
const EXPORT_INSTANT = cityLocalTimeToEpochMs(`${SYNTHETIC_SNAPSHOT_DATE}T06:00:00`);

interface ComplaintSpec {
  type: string;
  descriptor: string;
  weight: number;
  season: (day: number) => number;
  /** Median days to close and spread (log-normal), share never closed. */
  medianDays: number;
  sigma: number;
  neverClosed: number;
  locationTypes: readonly [string, number][];
  /** Share of requests placed at an intersection rather than an address. */
  intersection: number;
  highway?: boolean;
  bridge?: boolean;
}

const flat = (): number => 1;
const potholeSeason = (d: number): number => 0.7 + 1.6 * Math.exp(-(((d - 72) / 30) ** 2));
const lightSeason = (d: number): number => 1.2 - (0.35 * d) / PERIOD_DAYS;
const sidewalkSeason = (d: number): number => 0.75 + (0.5 * d) / PERIOD_DAYS;

const STREET: readonly [string, number][] = [['Street', 6], ['', 3], ['N/A', 0.2]];
const SIDEWALK: readonly [string, number][] = [['Sidewalk', 6], ['Street', 1], ['', 1]];

const COMPLAINTS: readonly ComplaintSpec[] = [
  { type: 'Street Condition', descriptor: 'Pothole', weight: 190, season: potholeSeason, medianDays: 2.5, sigma: 1.1, neverClosed: 0.01, locationTypes: STREET, intersection: 0.1 },
  { type: 'Street Condition', descriptor: 'Cave-in', weight: 8, season: flat, medianDays: 6, sigma: 1.2, neverClosed: 0.03, locationTypes: STREET, intersection: 0.1 },
  { type: 'Street Condition', descriptor: 'Defective Hardware', weight: 16, season: flat, medianDays: 8, sigma: 1.3, neverClosed: 0.03, locationTypes: STREET, intersection: 0.1 },
  { type: 'Street Condition', descriptor: 'Rough, Pitted or Cracked Roads', weight: 22, season: potholeSeason, medianDays: 12, sigma: 1.3, neverClosed: 0.05, locationTypes: STREET, intersection: 0.1 },
  { type: 'Street Condition', descriptor: 'Failed Street Repair', weight: 14, season: flat, medianDays: 20, sigma: 1.2, neverClosed: 0.06, locationTypes: STREET, intersection: 0.1 },
  { type: 'Street Condition', descriptor: 'Line/Marking - Faded', weight: 9, season: sidewalkSeason, medianDays: 30, sigma: 1.1, neverClosed: 0.1, locationTypes: STREET, intersection: 0.5 },
  { type: 'Street Condition', descriptor: 'Plate Condition - Noisy', weight: 6, season: flat, medianDays: 3, sigma: 1, neverClosed: 0.02, locationTypes: STREET, intersection: 0.2 },
  { type: 'Street Light Condition', descriptor: 'Street Light Out', weight: 120, season: lightSeason, medianDays: 4, sigma: 1.2, neverClosed: 0.03, locationTypes: [['', 5], ['Street', 1]], intersection: 0.15 },
  { type: 'Street Light Condition', descriptor: 'Street Light Cycling', weight: 28, season: lightSeason, medianDays: 5, sigma: 1.2, neverClosed: 0.03, locationTypes: [['', 5], ['Street', 1]], intersection: 0.15 },
  { type: 'Street Light Condition', descriptor: 'Street Light Dayburning', weight: 18, season: flat, medianDays: 6, sigma: 1.2, neverClosed: 0.03, locationTypes: [['', 5], ['Street', 1]], intersection: 0.15 },
  { type: 'Street Light Condition', descriptor: 'Lamppost Damaged', weight: 14, season: flat, medianDays: 15, sigma: 1.3, neverClosed: 0.06, locationTypes: [['', 4], ['Street', 1]], intersection: 0.15 },
  { type: 'Street Light Condition', descriptor: 'Lamppost Base Door/Cover Missing', weight: 10, season: flat, medianDays: 10, sigma: 1.2, neverClosed: 0.04, locationTypes: [['', 4], ['Street', 1]], intersection: 0.1 },
  { type: 'Street Light Condition', descriptor: 'Wire Exposed', weight: 6, season: flat, medianDays: 1, sigma: 1, neverClosed: 0.01, locationTypes: [['', 4], ['Street', 1]], intersection: 0.1 },
  { type: 'Traffic Signal Condition', descriptor: 'Controller', weight: 30, season: flat, medianDays: 0.25, sigma: 1.3, neverClosed: 0.005, locationTypes: [['', 1]], intersection: 1 },
  { type: 'Traffic Signal Condition', descriptor: 'Cycle Time', weight: 8, season: flat, medianDays: 6, sigma: 1.2, neverClosed: 0.02, locationTypes: [['', 1]], intersection: 1 },
  { type: 'Traffic Signal Condition', descriptor: 'LED Lense', weight: 18, season: flat, medianDays: 0.4, sigma: 1.2, neverClosed: 0.005, locationTypes: [['', 1]], intersection: 1 },
  { type: 'Traffic Signal Condition', descriptor: 'Ped Multiple Lamps', weight: 10, season: flat, medianDays: 0.5, sigma: 1.2, neverClosed: 0.005, locationTypes: [['', 1]], intersection: 1 },
  { type: 'Traffic Signal Condition', descriptor: 'Veh Signal Head', weight: 9, season: flat, medianDays: 0.5, sigma: 1.2, neverClosed: 0.005, locationTypes: [['', 1]], intersection: 1 },
  { type: 'Traffic Signal Condition', descriptor: 'Post Pole Damaged', weight: 6, season: flat, medianDays: 2, sigma: 1.2, neverClosed: 0.01, locationTypes: [['', 1]], intersection: 1 },
  { type: 'Sidewalk Condition', descriptor: 'Broken Sidewalk', weight: 52, season: sidewalkSeason, medianDays: 40, sigma: 1.1, neverClosed: 0.12, locationTypes: SIDEWALK, intersection: 0.05 },
  { type: 'Sidewalk Condition', descriptor: 'Defacement', weight: 6, season: sidewalkSeason, medianDays: 25, sigma: 1.1, neverClosed: 0.08, locationTypes: SIDEWALK, intersection: 0.05 },
  { type: 'Street Sign - Damaged', descriptor: 'Stop', weight: 12, season: flat, medianDays: 3, sigma: 1.1, neverClosed: 0.02, locationTypes: [['Street', 3], ['', 1]], intersection: 0.7 },
  { type: 'Street Sign - Damaged', descriptor: 'One Way', weight: 8, season: flat, medianDays: 10, sigma: 1.2, neverClosed: 0.04, locationTypes: [['Street', 3], ['', 1]], intersection: 0.6 },
  { type: 'Street Sign - Damaged', descriptor: 'Street Cleaning - ASP', weight: 14, season: flat, medianDays: 14, sigma: 1.2, neverClosed: 0.05, locationTypes: [['Street', 3], ['', 1]], intersection: 0.2 },
  { type: 'Street Sign - Damaged', descriptor: 'Other/Unknown', weight: 10, season: flat, medianDays: 14, sigma: 1.3, neverClosed: 0.05, locationTypes: [['Street', 3], ['', 1]], intersection: 0.3 },
  { type: 'Street Sign - Missing', descriptor: 'Stop', weight: 9, season: flat, medianDays: 2, sigma: 1.1, neverClosed: 0.02, locationTypes: [['Street', 3], ['', 1]], intersection: 0.8 },
  { type: 'Street Sign - Missing', descriptor: 'Street Name', weight: 10, season: flat, medianDays: 21, sigma: 1.2, neverClosed: 0.06, locationTypes: [['Street', 3], ['', 1]], intersection: 0.8 },
  { type: 'Street Sign - Missing', descriptor: 'Street Cleaning - ASP', weight: 14, season: flat, medianDays: 16, sigma: 1.2, neverClosed: 0.05, locationTypes: [['Street', 3], ['', 1]], intersection: 0.2 },
  { type: 'Street Sign - Dangling', descriptor: 'Street Name', weight: 6, season: flat, medianDays: 5, sigma: 1.1, neverClosed: 0.03, locationTypes: [['Street', 3], ['', 1]], intersection: 0.8 },
  { type: 'Street Sign - Dangling', descriptor: 'Other/Unknown', weight: 7, season: flat, medianDays: 5, sigma: 1.1, neverClosed: 0.03, locationTypes: [['Street', 3], ['', 1]], intersection: 0.5 },
  { type: 'Broken Parking Meter', descriptor: 'No Receipt', weight: 14, season: flat, medianDays: 2, sigma: 1, neverClosed: 0.02, locationTypes: [['Street', 1]], intersection: 0 },
  { type: 'Broken Parking Meter', descriptor: 'Coin or Card Did Not Register', weight: 20, season: flat, medianDays: 2, sigma: 1, neverClosed: 0.02, locationTypes: [['Street', 1]], intersection: 0 },
  { type: 'Broken Parking Meter', descriptor: 'Out of Order', weight: 18, season: flat, medianDays: 3, sigma: 1, neverClosed: 0.02, locationTypes: [['Street', 1]], intersection: 0 },
  { type: 'Highway Condition', descriptor: 'Pothole - Highway', weight: 28, season: potholeSeason, medianDays: 4, sigma: 1.2, neverClosed: 0.03, locationTypes: [['Highway', 5], ['', 1]], intersection: 0, highway: true },
  { type: 'Highway Condition', descriptor: 'Guard Rail - Highway', weight: 6, season: flat, medianDays: 20, sigma: 1.2, neverClosed: 0.08, locationTypes: [['Highway', 5], ['', 1]], intersection: 0, highway: true },
  { type: 'Highway Condition', descriptor: 'Graffiti - Highway', weight: 5, season: sidewalkSeason, medianDays: 30, sigma: 1.1, neverClosed: 0.1, locationTypes: [['Highway', 5], ['', 1]], intersection: 0, highway: true },
  { type: 'Curb Condition', descriptor: 'Broken Curb', weight: 16, season: sidewalkSeason, medianDays: 45, sigma: 1.1, neverClosed: 0.15, locationTypes: SIDEWALK, intersection: 0.1 },
  { type: 'Curb Condition', descriptor: 'Curb Defect-Metal Protruding', weight: 5, season: flat, medianDays: 15, sigma: 1.2, neverClosed: 0.06, locationTypes: SIDEWALK, intersection: 0.1 },
  { type: 'Bridge Condition', descriptor: 'Pothole - Bridge', weight: 5, season: potholeSeason, medianDays: 6, sigma: 1.2, neverClosed: 0.04, locationTypes: [['Bridge', 1]], intersection: 0, bridge: true },
  { type: 'Bridge Condition', descriptor: 'Guard Rail - Bridge', weight: 3, season: flat, medianDays: 20, sigma: 1.2, neverClosed: 0.08, locationTypes: [['Bridge', 1]], intersection: 0, bridge: true },
  { type: 'Bridge Condition', descriptor: 'Graffiti - Bridge', weight: 3, season: sidewalkSeason, medianDays: 25, sigma: 1.1, neverClosed: 0.1, locationTypes: [['Bridge', 1]], intersection: 0, bridge: true },
  { type: 'Bike Rack Condition', descriptor: 'Bike Rack Damaged', weight: 4, season: sidewalkSeason, medianDays: 30, sigma: 1.1, neverClosed: 0.1, locationTypes: SIDEWALK, intersection: 0 },
];

interface BoroughSpec {
  code: Borough;
  name: string;
  share: number;
  lat: [number, number];
  lon: [number, number];
  zips: readonly string[];
  boards: number;
  council: [number, number];
  precincts: [number, number];
  cities: readonly string[];
  bblPrefix: string;
}

const range = (from: number, to: number): string[] => Array.from({ length: to - from + 1 }, (_, i) => String(from + i));

const BOROUGH_SPECS: readonly BoroughSpec[] = [
  { code: 'brooklyn', name: 'BROOKLYN', share: 31, lat: [40.58, 40.73], lon: [-74.03, -73.86], zips: range(11201, 11239).filter((z) => z !== '11202' && z !== '11227'), boards: 18, council: [33, 48], precincts: [60, 94], cities: ['BROOKLYN'], bblPrefix: '3' },
  { code: 'queens', name: 'QUEENS', share: 30, lat: [40.58, 40.79], lon: [-73.96, -73.71], zips: [...range(11101, 11106), ...range(11354, 11379), ...range(11411, 11436), ...range(11691, 11694)], boards: 14, council: [19, 32], precincts: [100, 115], cities: ['ASTORIA', 'FLUSHING', 'JAMAICA', 'LONG ISLAND CITY', 'RIDGEWOOD', 'FAR ROCKAWAY', 'ELMHURST'], bblPrefix: '4' },
  { code: 'manhattan', name: 'MANHATTAN', share: 16, lat: [40.70, 40.87], lon: [-74.02, -73.93], zips: range(10001, 10040), boards: 12, council: [1, 10], precincts: [1, 34], cities: ['NEW YORK'], bblPrefix: '1' },
  { code: 'bronx', name: 'BRONX', share: 15, lat: [40.80, 40.91], lon: [-73.93, -73.78], zips: range(10451, 10475), boards: 12, council: [11, 18], precincts: [40, 52], cities: ['BRONX'], bblPrefix: '2' },
  { code: 'staten_island', name: 'STATEN ISLAND', share: 8, lat: [40.50, 40.65], lon: [-74.25, -74.06], zips: range(10301, 10314), boards: 3, council: [49, 51], precincts: [120, 123], cities: ['STATEN ISLAND'], bblPrefix: '5' },
];

const STREET_NAMES = [
  'BROADWAY', 'ATLANTIC AVENUE', 'FLATBUSH AVENUE', 'OCEAN PARKWAY', 'QUEENS BOULEVARD', 'NORTHERN BOULEVARD', 'GRAND CONCOURSE',
  'JAMAICA AVENUE', 'AMSTERDAM AVENUE', 'LEXINGTON AVENUE', 'FOREST AVENUE', 'HYLAN BOULEVARD', 'VICTORY BOULEVARD', 'FORDHAM ROAD',
  'LINDEN BOULEVARD', 'MYRTLE AVENUE', 'UNION TURNPIKE', 'JEROME AVENUE', 'WEBSTER AVENUE', 'BEDFORD AVENUE', 'NOSTRAND AVENUE',
  'ROCKAWAY BOULEVARD', 'MAIN STREET', 'RICHMOND AVENUE', 'EAST  86 STREET', 'WEST  42 STREET', 'EAST TREMONT AVENUE', 'KINGS HIGHWAY',
  'CHURCH AVENUE', 'ASTORIA BOULEVARD', '31 STREET', '5 AVENUE', '3 AVENUE', 'METROPOLITAN AVENUE', 'WOODHAVEN BOULEVARD',
];
const HIGHWAYS = ['BQE/Gowanus Expwy (I-278)', 'Cross Bronx Expwy (I-95)', 'Long Island Expwy (I-495)', 'FDR Dr', 'Belt Pkwy', 'Major Deegan Expwy (I-87)', 'Staten Island Expwy (I-278)', 'Grand Central Pkwy'];
const BRIDGES = ['Queensboro/59th St Br', 'Brooklyn Br', 'Manhattan Br', 'Williamsburg Br', 'Ed Koch Queensboro Br', 'Pulaski Br'];
const RESOLUTIONS = [
  'The Department of Transportation inspected this complaint and repaired the problem.',
  'The Department of Transportation has completed the request or corrected the condition.',
  'The Department of Transportation inspected the condition, and determined that no action was necessary at this time.',
  'The Department of Transportation referred this complaint to the appropriate Maintenance Unit for repair.',
  'Crew reported "no defect found" at the location; the condition was not observed.',
  'Work order created.\nA crew was assigned, follow-up pending.',
];
const OTHER_AGENCIES: readonly [string, string, string, string][] = [
  ['NYPD', 'New York City Police Department', 'Illegal Parking', 'Blocked Hydrant'],
  ['NYPD', 'New York City Police Department', 'Noise - Street/Sidewalk', 'Loud Music/Party'],
  ['NYPD', 'New York City Police Department', 'Blocked Driveway', 'No Access'],
  ['DSNY', 'Department of Sanitation', 'Dirty Condition', 'Trash'],
  ['DEP', 'Department of Environmental Protection', 'Water System', 'Hydrant Leaking (WC1)'],
  ['DOHMH', 'Department of Health and Mental Hygiene', 'Rodent', 'Rat Sighting'],
  ['DPR', 'Department of Parks and Recreation', 'Damaged Tree', 'Branch Cracked and Will Fall'],
];
const HOUR_WEIGHTS = [1, 0.7, 0.5, 0.4, 0.4, 0.6, 1.2, 2.2, 3.4, 4.2, 4.4, 4.3, 4.1, 4, 3.9, 3.7, 3.4, 3, 2.6, 2.3, 2, 1.7, 1.4, 1.1];
const WEEKDAY_WEIGHTS = [0.72, 1.18, 1.12, 1.08, 1.05, 0.98, 0.78]; // Sunday first

/** One record of the export before it is written (times as instants). */
interface SyntheticRecord {
  createdMs: number;
  closedMs: number | null;
  agency: string;
  agencyName: string;
  complaintType: string;
  descriptor: string;
  locationType: string;
  borough: BoroughSpec | null;
  boroughText: string;
  zip: string;
  address: string;
  street: string;
  cross1: string;
  cross2: string;
  inter1: string;
  inter2: string;
  addressType: string;
  city: string;
  status: string;
  resolution: string;
  communityBoard: string;
  councilDistrict: string;
  precinct: string;
  bbl: string;
  channel: string;
  latitude: number | null;
  longitude: number | null;
  bridgeHighwayName: string;
  bridgeHighwayDirection: string;
  roadRamp: string;
  bridgeHighwaySegment: string;
  /** Set for a verbatim repetition of a record (duplicate Unique Key). */
  sameKeyAs?: SyntheticRecord;
  key: number;
}

function lognormal(random: SeededRandom, median: number, sigma: number): number {
  return median * Math.exp(sigma * random.normal());
}

/** Requests per day for `days` days from `firstDayWall`, `total` in all; `seasonDay(d)` is the day of the season curves. */
function allocateDailyCounts(random: SeededRandom, total: number, firstDayWall = PERIOD_START_WALL, days = PERIOD_DAYS, seasonDay = (d: number): number => d): number[] {
  const weights: number[] = [];
  for (let d = 0; d < days; d++) {
    const weekday = new Date(firstDayWall + d * DAY_MS).getUTCDay();
    let w = 0;
    for (const c of COMPLAINTS) w += c.weight * c.season(seasonDay(d));
    // Storm and holiday days: a little noise.
    w *= (WEEKDAY_WEIGHTS[weekday] as number) * (0.9 + 0.2 * random.next());
    weights.push(w);
  }
  const sum = weights.reduce((a, b) => a + b, 0);
  const exact = weights.map((w) => (w / sum) * total);
  const counts = exact.map(Math.floor);
  let missing = total - counts.reduce((a, b) => a + b, 0);
  const order = exact.map((x, i) => [x - Math.floor(x), i] as const).sort((a, b) => b[0] - a[0] || a[1] - b[1]);
  for (const [, i] of order) {
    if (missing-- <= 0) break;
    counts[i] = (counts[i] ?? 0) + 1;
  }
  return counts;
}

/** Rule canonical_spelling: with probability p, the text in upper case, lower case or with spaces around. */
function plantCanonicalSpelling(random: SeededRandom, text: string, p: number): string {
  if (!random.chance(p)) return text;
  const r = random.next();
  return r < 0.4 ? text.toUpperCase() : r < 0.8 ? text.toLowerCase() : ` ${text} `;
}

/** Rule status_code: 0.4% of statuses "Unspecified" (the cleaning infers them), 1% in upper case. */
function plantStatusCode(random: SeededRandom, status: string): string {
  if (random.chance(0.004)) return 'Unspecified';
  if (random.chance(0.01)) return status.toUpperCase();
  return status;
}

/** Rule incident_zip_text: ZIP+4 (0.2%) and 00000 (0.1%); also empty (1%) and "N/A" (0.3%, placeholder_to_null). */
function plantIncidentZipText(random: SeededRandom, borough: BoroughSpec): string {
  const draw = random.next();
  if (draw < 0.01) return '';
  if (draw < 0.013) return 'N/A';
  if (draw < 0.015) return `${random.pick(borough.zips)}-${String(random.int(1, 9999)).padStart(4, '0')}`;
  if (draw < 0.016) return '00000';
  return random.pick(borough.zips);
}

/** Rule council_district_integer: "0" (0.1%); also empty (0.6%) and "Unspecified" (0.2%, placeholder_to_null). */
function plantCouncilDistrictInteger(random: SeededRandom, borough: BoroughSpec): string {
  const draw = random.next();
  if (draw < 0.006) return '';
  if (draw < 0.008) return 'Unspecified';
  if (draw < 0.009) return '0';
  return String(random.int(borough.council[0], borough.council[1]));
}

/**
 * Rule channel_code: channels in any case (1% in title case, which the codes accept) and UNKNOWN
 * (3%, placeholder_to_null). No unrecognised channel is planted: channel_code changes none here.
 */
function plantChannelCode(random: SeededRandom): string {
  const draw = random.next();
  const channel = draw < 0.34 ? 'PHONE' : draw < 0.64 ? 'ONLINE' : draw < 0.95 ? 'MOBILE' : draw < 0.97 ? 'OTHER' : 'UNKNOWN';
  return random.chance(0.01) ? titleCase(channel) : channel;
}

/** True when the export's local time of the instant reads back as the same instant (false in the repeated autumn hour). */
function readsBackExactly(epochMs: number): boolean {
  return cityLocalTimeToEpochMs(epochMsToCityLocalTime(epochMs)) === epochMs;
}

function titleCase(text: string): string {
  return text.toLowerCase().replace(/\b[a-z]/g, (ch) => ch.toUpperCase());
}

class SyntheticExportBuilder {
  private readonly random: SeededRandom;
  /** Places taken (a history forgets them two days later: a repeat is only looked for within an hour). */
  private usedPlaces = new Set<string>();
  private previousPlaces = new Set<string>();
  private readonly hourTotal = HOUR_WEIGHTS.reduce((a, b) => a + b, 0);
  private readonly boroughWeights = BOROUGH_SPECS.map((b) => b.share);
  private placeCounter = 0;

  /**
   * `exportInstant`: the moment of the export (statuses are as of then); `endLocal`: no repeated
   * submission is created at or after this local time.
   */
  constructor(
    seed: number,
    private readonly exportInstant = EXPORT_INSTANT,
    private readonly endLocal = SYNTHETIC_SNAPSHOT_DATE,
  ) {
    this.random = new SeededRandom(seed);
  }

  /** The random draws, for a history generated day by day. */
  get draws(): SeededRandom {
    return this.random;
  }

  /** Forget the places taken before the previous call (a history calls it once a day). */
  rotatePlaces(): void {
    this.previousPlaces = this.usedPlaces;
    this.usedPlaces = new Set<string>();
  }

  build(): { records: SyntheticRecord[]; counts: SyntheticExportCounts } {
    const random = this.random;
    const base: SyntheticRecord[] = [];
    const daily = allocateDailyCounts(random, SYNTHETIC_REQUEST_COUNT);
    daily.forEach((count, d) => {
      const weights = COMPLAINTS.map((c) => c.weight * c.season(d));
      const total = weights.reduce((a, b) => a + b, 0);
      for (let i = 0; i < count; i++) {
        const spec = COMPLAINTS[random.weightedIndex(weights, total)] as ComplaintSpec;
        base.push(this.request(spec, this.createdInDay(d)));
      }
    });

    // The bad records, one method per cleaning rule that removes them (the order fixes the random draws).
    const repeats = this.plantRepeatedSubmission(base);
    const closedBefore = this.plantClosedBeforeCreated();
    const otherAgencies = this.plantAgencyNotDot();
    const outsidePeriod = this.plantCreatedOutsidePeriod();

    const all = [...base, ...repeats, ...closedBefore, ...otherAgencies, ...outsidePeriod].sort((a, b) => a.createdMs - b.createdMs);
    let key = 63_680_000 + random.int(0, 999);
    for (const record of all) {
      key += random.int(1, 29);
      record.key = key;
    }
    const withRepeats = this.plantDuplicateUniqueKey(all, new Set(base));
    return {
      records: withRepeats,
      counts: {
        requests: base.length,
        repeatedSubmissions: repeats.length,
        closedBeforeCreation: closedBefore.length,
        otherAgencies: otherAgencies.length,
        outsidePeriod: outsidePeriod.length,
        duplicateUniqueKeys: withRepeats.length - all.length,
        records: withRepeats.length,
      },
    };
  }

  /** Rule repeated_submission: copies of a request at the same place, 1 to 55 minutes later. */
  private plantRepeatedSubmission(base: readonly SyntheticRecord[]): SyntheticRecord[] {
    const copies: SyntheticRecord[] = [];
    for (const original of base) this.plantRepeatsOf(original, copies);
    return copies;
  }

  /** Rule repeated_submission, for one request: none (most often), one or two copies, added to `copies`. */
  plantRepeatsOf(original: SyntheticRecord, copies: SyntheticRecord[]): void {
    const random = this.random;
    if (!random.chance(0.028)) return;
    const count = random.chance(0.15) ? 2 : 1;
    for (let k = 0; k < count; k++) {
      const createdMs = original.createdMs + random.int(1, 55) * MINUTE_MS + random.int(0, 59) * 1000;
      if (epochMsToCityLocalTime(createdMs) >= this.endLocal) continue;
      // Not in the hour that occurs twice in autumn: the export's local times would read it an hour off.
      if (!readsBackExactly(original.createdMs) || !readsBackExactly(createdMs)) continue;
      const copy: SyntheticRecord = {
        ...original,
        createdMs,
        complaintType: plantCanonicalSpelling(random, original.complaintType, 0.1),
        descriptor: plantCanonicalSpelling(random, original.descriptor, 0.1),
        channel: random.pick(['PHONE', 'ONLINE', 'MOBILE']),
        resolution:
          original.closedMs === null
            ? original.resolution
            : 'The Department of Transportation determined that this complaint is a duplicate of a previously filed complaint. The original complaint is being addressed.',
        key: 0,
      };
      if (copy.closedMs !== null && copy.closedMs < createdMs) copy.closedMs = createdMs + random.int(1, 30) * MINUTE_MS;
      copies.push(copy);
    }
  }

  /** A request of any complaint type (uniform, not weighted), created on any day of the period. */
  private anyRequestInPeriod(): SyntheticRecord {
    const spec = COMPLAINTS[this.random.int(0, COMPLAINTS.length - 1)] as ComplaintSpec;
    return this.request(spec, this.createdInDay(this.random.int(0, PERIOD_DAYS - 1)));
  }

  /** Rule closed_before_created: 430 requests closed 1 minute to 3 days before they were created. */
  private plantClosedBeforeCreated(): SyntheticRecord[] {
    const random = this.random;
    const records: SyntheticRecord[] = [];
    for (let i = 0; i < 430; i++) {
      const record = this.anyRequestInPeriod();
      records.push(this.closeBeforeCreation(record, random));
    }
    return records;
  }

  /** The record, closed 1 minute to 3 days before it was created. */
  closeBeforeCreation(record: SyntheticRecord, random: SeededRandom = this.random): SyntheticRecord {
    record.closedMs = record.createdMs - random.int(1, 3 * 24 * 60) * MINUTE_MS;
    record.status = 'Closed';
    return record;
  }

  /** Rule agency_not_dot: 1,380 requests of other agencies, in the period. */
  private plantAgencyNotDot(): SyntheticRecord[] {
    const random = this.random;
    const records: SyntheticRecord[] = [];
    for (let i = 0; i < 1_380; i++) {
      const record = this.anyRequestInPeriod();
      records.push(this.ofOtherAgency(record, random));
    }
    return records;
  }

  /** The record, made a request of another agency. */
  ofOtherAgency(record: SyntheticRecord, random: SeededRandom = this.random): SyntheticRecord {
    const [agency, agencyName, type, descriptor] = random.pick(OTHER_AGENCIES);
    Object.assign(record, { agency, agencyName, complaintType: type, descriptor, locationType: random.pick(['Street/Sidewalk', 'Residential Building/House', 'Street']) });
    return record;
  }

  /** Rule created_outside_period: 160 DOT requests created in late December 2024 or early on 1 July 2025. */
  private plantCreatedOutsidePeriod(): SyntheticRecord[] {
    const random = this.random;
    const records: SyntheticRecord[] = [];
    for (let i = 0; i < 160; i++) {
      const spec = COMPLAINTS[random.int(0, COMPLAINTS.length - 1)] as ComplaintSpec;
      const before = i % 4 !== 0;
      const wall = before
        ? PERIOD_START_WALL - random.int(1, 7 * 24 * 3600) * 1000
        : Date.UTC(2025, 6, 1) + random.int(0, 5 * 3600) * 1000;
      records.push(this.request(spec, cityWallTimeToEpochMs(wall)));
    }
    return records;
  }

  /**
   * Rule duplicate_unique_key: records repeated verbatim (same Unique Key), as paged downloads
   * sometimes hold, placed right after the first; only distinct requests are repeated.
   */
  private plantDuplicateUniqueKey(records: readonly SyntheticRecord[], distinct: ReadonlySet<SyntheticRecord>): SyntheticRecord[] {
    const random = this.random;
    const withRepeats: SyntheticRecord[] = [];
    for (const record of records) {
      withRepeats.push(record);
      if (distinct.has(record) && random.chance(0.0007)) withRepeats.push({ ...record, sameKeyAs: record });
    }
    return withRepeats;
  }

  /** Rule duplicate_unique_key, for one distinct request: true when it is to be written twice. */
  repeatsUniqueKey(): boolean {
    return this.random.chance(0.0007);
  }

  /** A creation instant on day d of the period (hour by the daily pattern; never in the skipped hour). */
  private createdInDay(d: number): number {
    return this.createdOnDay(PERIOD_START_WALL + d * DAY_MS);
  }

  /** A creation instant on the day starting at wall time `day` (hour by the daily pattern; never in a skipped hour). */
  createdOnDay(day: number): number {
    const random = this.random;
    let hour = random.weightedIndex(HOUR_WEIGHTS, this.hourTotal);
    // The hour skipped when daylight-saving time starts (2025-03-09 02:00-02:59) becomes the next one.
    if (!cityWallTimeExists(day + hour * HOUR_MS)) hour++;
    const wall = day + hour * HOUR_MS + random.int(0, 3599) * 1000;
    return cityWallTimeToEpochMs(wall);
  }

  /** A distinct request at its own place. */
  request(spec: ComplaintSpec, createdMs: number): SyntheticRecord {
    const random = this.random;
    const borough = BOROUGH_SPECS[random.weightedIndex(this.boroughWeights)] as BoroughSpec;
    let latitude: number | null = null;
    let longitude: number | null = null;
    // A few requests have no coordinates (highways, bridges mostly).
    const noCoordinates = random.chance(spec.highway || spec.bridge ? 0.25 : 0.008);
    if (!noCoordinates) {
      for (;;) {
        latitude = borough.lat[0] + random.next() * (borough.lat[1] - borough.lat[0]);
        longitude = borough.lon[0] + random.next() * (borough.lon[1] - borough.lon[0]);
        const place = `${latitude.toFixed(5)},${longitude.toFixed(5)}`;
        if (!this.usedPlaces.has(place) && !this.previousPlaces.has(place)) {
          this.usedPlaces.add(place);
          break;
        }
      }
    }
    const n = this.placeCounter++;
    const street = STREET_NAMES[n % STREET_NAMES.length] as string;
    const atIntersection = random.chance(spec.intersection);
    // Without coordinates the address is unique: the house number comes from a counter.
    const houseNumber = noCoordinates ? 10_000 + n : random.int(1, 2500);
    const cross1 = random.pick(STREET_NAMES);
    const cross2 = noCoordinates && atIntersection ? `${n} STREET` : random.pick(STREET_NAMES);
    const closeDays = random.chance(spec.neverClosed) ? Infinity : Math.max(5 / 1440, lognormal(random, spec.medianDays, spec.sigma));
    const closedAt = createdMs + closeDays * DAY_MS;
    const closed = closedAt <= this.exportInstant;
    let status: string;
    if (closed) status = 'Closed';
    else {
      const r = random.next();
      status = r < 0.35 ? 'Open' : r < 0.5 ? 'Assigned' : r < 0.85 ? (random.chance(0.2) ? 'Started' : 'In Progress') : 'Pending';
    }
    status = plantStatusCode(random, status);

    const channel = plantChannelCode(random);

    const boardNumber = random.int(1, borough.boards);
    const boardDraw = random.next();
    // placeholder_to_null: no borough (0.2%: borough "Unspecified", board "0 Unspecified"), board "Unspecified BOROUGH" (1.5%).
    const unspecifiedBorough = random.chance(0.002);
    const communityBoard = unspecifiedBorough
      ? '0 Unspecified'
      : boardDraw < 0.015
        ? `Unspecified ${borough.name}`
        : `${boardNumber < 10 ? '0' : ''}${boardNumber} ${borough.name}`;
    const zip = plantIncidentZipText(random, borough);
    const councilDistrict = plantCouncilDistrictInteger(random, borough);
    const [locationType] = spec.locationTypes[random.weightedIndex(spec.locationTypes.map(([, w]) => w))] as [string, number];
    const descriptorDraw = random.next();
    // placeholder_to_null: descriptor "Unspecified" (0.2%).
    const descriptor = descriptorDraw < 0.002 ? 'Unspecified' : plantCanonicalSpelling(random, spec.descriptor, 0.01);

    return {
      createdMs,
      closedMs: closed ? Math.round(closedAt / 1000) * 1000 : null,
      agency: random.chance(0.005) ? 'dot' : 'DOT',
      agencyName: 'Department of Transportation',
      complaintType: plantCanonicalSpelling(random, spec.type, 0.012),
      descriptor,
      locationType: locationType === 'Street' && random.chance(0.01) ? 'STREET' : locationType, // canonical_spelling
      borough: unspecifiedBorough ? null : borough,
      boroughText: unspecifiedBorough ? 'Unspecified' : random.chance(0.02) ? titleCase(borough.name) : borough.name,
      zip,
      address: atIntersection ? '' : `${houseNumber} ${street}`,
      street: atIntersection ? '' : street,
      cross1: atIntersection ? '' : cross1,
      cross2: atIntersection ? '' : cross2,
      inter1: atIntersection ? street : '',
      inter2: atIntersection ? cross2 : '',
      addressType: atIntersection ? 'INTERSECTION' : spec.highway || spec.bridge ? 'BLOCKFACE' : 'ADDRESS',
      city: random.pick(borough.cities),
      status,
      resolution: closed ? random.pick<string>(RESOLUTIONS) : status === 'Open' ? '' : (RESOLUTIONS[3] as string),
      communityBoard,
      councilDistrict,
      precinct: String(random.int(borough.precincts[0], borough.precincts[1])),
      bbl: atIntersection || noCoordinates ? '' : `${borough.bblPrefix}${String(random.int(1, 16000)).padStart(5, '0')}${String(random.int(1, 200)).padStart(4, '0')}`,
      channel,
      latitude,
      longitude,
      bridgeHighwayName: spec.highway ? random.pick(HIGHWAYS) : spec.bridge ? random.pick(BRIDGES) : '',
      bridgeHighwayDirection: spec.highway || spec.bridge ? random.pick(['North/Eastbound', 'South/Westbound', 'Manhattan Bound', 'Queens Bound']) : '',
      roadRamp: spec.highway || spec.bridge ? 'Roadway' : '',
      bridgeHighwaySegment: spec.highway ? `Exit ${random.int(1, 40)}` : spec.bridge ? 'Upper Level' : '',
      key: 0,
    };
  }
}

function csvField(value: string): string {
  return value.indexOf(',') < 0 && value.indexOf('"') < 0 && value.indexOf('\n') < 0 && value.indexOf('\r') < 0
    ? value
    : `"${value.replace(/"/g, '""')}"`;
}

function stateplane(latitude: number, longitude: number): [string, string] {
  // A rough local projection (feet), enough to look like the export.
  const x = Math.round(987_000 + (longitude + 73.985) * 276_000);
  const y = Math.round(210_000 + (latitude - 40.74) * 364_000);
  return [String(x), String(y)];
}

const COLUMN = Object.fromEntries(SYNTHETIC_EXPORT_COLUMNS.map((name, i) => [name, i])) as Record<string, number>;
const col = (name: string): number => {
  const index = COLUMN[name];
  if (index === undefined) throw new Error(`no column ${name}`);
  return index;
};
const C = {
  key: col('Unique Key'), created: col('Created Date'), closed: col('Closed Date'), agency: col('Agency'), agencyName: col('Agency Name'),
  type: col('Complaint Type'), descriptor: col('Descriptor'), locationType: col('Location Type'), zip: col('Incident Zip'),
  address: col('Incident Address'), street: col('Street Name'), cross1: col('Cross Street 1'), cross2: col('Cross Street 2'),
  inter1: col('Intersection Street 1'), inter2: col('Intersection Street 2'), addressType: col('Address Type'), city: col('City'),
  landmark: col('Landmark'), facility: col('Facility Type'), status: col('Status'), resolution: col('Resolution Description'),
  resolutionDate: col('Resolution Action Updated Date'), board: col('Community Board'), council: col('Council District'),
  precinct: col('Police Precinct'), bbl: col('BBL'), borough: col('Borough'), x: col('X Coordinate (State Plane)'),
  y: col('Y Coordinate (State Plane)'), channel: col('Open Data Channel Type'), parkFacility: col('Park Facility Name'),
  parkBorough: col('Park Borough'), bridgeName: col('Bridge Highway Name'), bridgeDirection: col('Bridge Highway Direction'),
  roadRamp: col('Road Ramp'), bridgeSegment: col('Bridge Highway Segment'), latitude: col('Latitude'), longitude: col('Longitude'),
  location: col('Location'),
};

/** The fields of a record in the order of SYNTHETIC_EXPORT_COLUMNS, its times and Location as `layout` writes them. */
function recordValues(r: SyntheticRecord, layout: SyntheticLayout): string[] {
  const time = layout === 'portal-csv' ? formatExportTimestamp : (local: string): string => `${local}.000`;
  const created = time(epochMsToCityLocalTime(r.createdMs));
  const closed = r.closedMs === null ? '' : time(epochMsToCityLocalTime(r.closedMs));
  const hasPoint = r.latitude !== null && r.longitude !== null;
  const [x, y] = hasPoint ? stateplane(r.latitude as number, r.longitude as number) : ['', ''];
  const v: string[] = new Array<string>(SYNTHETIC_EXPORT_COLUMNS.length).fill('');
  v[C.key] = String(r.key);
  v[C.created] = created;
  v[C.closed] = closed;
  v[C.agency] = r.agency;
  v[C.agencyName] = r.agencyName;
  v[C.type] = r.complaintType;
  v[C.descriptor] = r.descriptor;
  v[C.locationType] = r.locationType;
  v[C.zip] = r.zip;
  v[C.address] = r.address;
  v[C.street] = r.street;
  v[C.cross1] = r.cross1;
  v[C.cross2] = r.cross2;
  v[C.inter1] = r.inter1;
  v[C.inter2] = r.inter2;
  v[C.addressType] = r.addressType;
  v[C.city] = r.city;
  v[C.landmark] = r.street;
  v[C.facility] = 'N/A';
  v[C.status] = r.status;
  v[C.resolution] = r.resolution;
  v[C.resolutionDate] = r.resolution === '' ? '' : closed === '' ? created : closed;
  v[C.board] = r.communityBoard;
  v[C.council] = r.councilDistrict;
  v[C.precinct] = r.precinct;
  v[C.bbl] = r.bbl;
  v[C.borough] = r.boroughText;
  v[C.x] = x;
  v[C.y] = y;
  v[C.channel] = r.channel;
  v[C.parkFacility] = 'Unspecified';
  v[C.parkBorough] = r.borough === null ? 'Unspecified' : r.borough.name;
  v[C.bridgeName] = r.bridgeHighwayName;
  v[C.bridgeDirection] = r.bridgeHighwayDirection;
  v[C.roadRamp] = r.roadRamp;
  v[C.bridgeSegment] = r.bridgeHighwaySegment;
  v[C.latitude] = hasPoint ? String(r.latitude) : '';
  v[C.longitude] = hasPoint ? String(r.longitude) : '';
  // The API's CSV writes Location after two empty address lines; its JSON writes an object (jsonRecord).
  v[C.location] = hasPoint ? `${layout === 'api-csv' ? '\n,  \n' : ''}(${r.latitude}, ${r.longitude})` : '';
  return v;
}

const API_FIELDS = SYNTHETIC_EXPORT_COLUMNS.map(apiFieldName);

/** A record as a line of the portal's CSV: a field quoted only when it must be. */
function portalCsvRecord(v: string[]): string {
  for (let i = 0; i < v.length; i++) v[i] = csvField(v[i] as string);
  return v.join(',');
}

/** A record as the API's CSV writes it: every field that is not empty quoted. */
function apiCsvRecord(v: string[]): string {
  for (let i = 0; i < v.length; i++) v[i] = v[i] === '' ? '' : `"${(v[i] as string).replace(/"/g, '""')}"`;
  return v.join(',');
}

/** A record as an object of the API's JSON: every value a string, an empty field left out, Location an object. */
function jsonRecord(v: string[]): string {
  const record: Record<string, unknown> = {};
  for (let i = 0; i < v.length; i++) {
    const value = v[i] as string;
    if (value === '') continue;
    record[API_FIELDS[i] as string] =
      i === C.location ? { latitude: v[C.latitude], longitude: v[C.longitude], human_address: '{"address": "", "city": "", "state": "", "zip": ""}' } : value;
  }
  return JSON.stringify(record);
}

/** The layouts the synthetic export is written in: the portal's CSV (its default), the API's CSV and the API's JSON. */
export const SYNTHETIC_LAYOUTS = ['portal-csv', 'api-csv', 'api-json'] as const;
export type SyntheticLayout = (typeof SYNTHETIC_LAYOUTS)[number];

/** How a layout writes the text: its start, a batch of records, its end. */
interface LayoutWriter {
  start: string;
  record: (r: SyntheticRecord) => string;
  /** Records in a chunk; `first`: the export's first batch. */
  batch: (records: string[], first: boolean) => string;
  end: string;
}

function layoutWriter(layout: SyntheticLayout): LayoutWriter {
  if (layout === 'api-json') {
    return { start: '[', record: (r) => jsonRecord(recordValues(r, layout)), batch: (records, first) => `${first ? '' : ','}${records.join('\n,')}\n`, end: ']\n' };
  }
  const csv = layout === 'api-csv' ? apiCsvRecord : portalCsvRecord;
  const header = layout === 'api-csv' ? API_FIELDS.map((name) => `"${name}"`).join(',') : SYNTHETIC_EXPORT_COLUMNS.map(csvField).join(',');
  return { start: `${header}\n`, record: (r) => csv(recordValues(r, layout)), batch: (records) => `${records.join('\n')}\n`, end: '' };
}



export interface SyntheticExport {
  /** CSV text chunks (header first), LF line endings, UTF-8. */
  chunks: Iterable<string>;
  counts: SyntheticExportCounts;
  seed: number;
}

/**
 * Build the synthetic export (deterministic for a seed); the text is produced lazily, chunk by chunk,
 * in `layout` (default the portal's CSV, whose bytes the tests pin; the other layouts hold the same
 * records, and give the same snapshot).
 */
export function generateSyntheticExport(seed: number = SYNTHETIC_SEED, layout: SyntheticLayout = 'portal-csv'): SyntheticExport {
  const { records, counts } = new SyntheticExportBuilder(seed).build();
  const writer = layoutWriter(layout);
  function* chunks(): Generator<string> {
    yield writer.start;
    let lines: string[] = [];
    let first = true;
    for (const record of records) {
      lines.push(writer.record(record));
      if (lines.length === SYNTHETIC_RECORDS_PER_CHUNK) {
        yield writer.batch(lines, first);
        first = false;
        lines = [];
      }
    }
    if (lines.length > 0) yield writer.batch(lines, first);
    if (writer.end.length > 0) yield writer.end;
  }
  return { chunks: { [Symbol.iterator]: chunks }, counts, seed };
}

/** A history: `rows` requests over the years `fromYear` to `toYear` (both whole). */
export interface SyntheticHistoryOptions {
  rows: number;
  fromYear: number;
  toYear: number;
  seed?: number;
  /** The layout it is written in (default the portal's CSV). */
  layout?: SyntheticLayout;
}

export function syntheticHistoryFileName({ rows, fromYear, toYear, seed = SYNTHETIC_SEED }: SyntheticHistoryOptions): string {
  return `311_Service_Requests_synthetic-history_${fromYear}-${toYear}_${rows}-rows_seed${seed}.csv`;
}

/** Shares of the planted records of a history, per distinct request (about those of the synthetic export). */
const HISTORY_OTHER_AGENCY_SHARE = 0.0124;
const HISTORY_CLOSED_BEFORE_CREATED_SHARE = 0.0039;

/**
 * A history of the synthetic export's kind, written day by day: `rows` distinct requests (what the
 * cleaning keeps without the DOT and period filters, other agencies' requests included) from
 * 1 January of `fromYear` to 31 December of `toYear`, with the same shapes: hours, weekdays, the
 * seasons of January to June mirrored into July to December, boroughs, closing times, and the dirt
 * of the cleaning rules (repeated submissions, requests closed before they were created, records
 * repeated with the same Unique Key, and the rewritten values). The file is sorted by creation.
 *
 * Deterministic for its options; memory holds a day of records and two days of places, whatever
 * the number of rows. `counts` is complete once the chunks have been read to their end.
 */
export function generateSyntheticHistory(options: SyntheticHistoryOptions): SyntheticExport {
  const { rows, fromYear, toYear, seed = SYNTHETIC_SEED, layout = 'portal-csv' } = options;
  const writer = layoutWriter(layout);
  const counts: SyntheticExportCounts = { requests: 0, repeatedSubmissions: 0, closedBeforeCreation: 0, otherAgencies: 0, outsidePeriod: 0, duplicateUniqueKeys: 0, records: 0 };
  function* chunks(): Generator<string> {
    const firstDayWall = Date.UTC(fromYear, 0, 1);
    const days = Math.round((Date.UTC(toYear + 1, 0, 1) - firstDayWall) / DAY_MS);
    const endLocal = `${toYear + 1}-01-01`;
    const builder = new SyntheticExportBuilder(seed, cityLocalTimeToEpochMs(`${endLocal}T06:00:00`), endLocal);
    const random = builder.draws;
    const seasonDay = (d: number): number => {
      const wall = firstDayWall + d * DAY_MS;
      const dayOfYear = Math.round((wall - Date.UTC(new Date(wall).getUTCFullYear(), 0, 1)) / DAY_MS);
      return dayOfYear < PERIOD_DAYS ? dayOfYear : Math.max(0, 364 - dayOfYear);
    };
    const daily = allocateDailyCounts(random, rows, firstDayWall, days, seasonDay);
    let key = 10_000_000 + random.int(0, 999);
    let pending: SyntheticRecord[] = [];
    let first = true;
    yield writer.start;
    for (let d = 0; d < days; d++) {
      const dayWall = firstDayWall + d * DAY_MS;
      const nextDayStart = cityWallTimeToEpochMs(dayWall + DAY_MS);
      builder.rotatePlaces();
      const weights = COMPLAINTS.map((c) => c.weight * c.season(seasonDay(d)));
      const total = weights.reduce((a, b) => a + b, 0);
      const today = pending;
      pending = [];
      const distinct = new Set<SyntheticRecord>();
      const copies: SyntheticRecord[] = [];
      for (let i = 0; i < (daily[d] as number); i++) {
        const record = builder.request(COMPLAINTS[random.weightedIndex(weights, total)] as ComplaintSpec, builder.createdOnDay(dayWall));
        if (random.chance(HISTORY_OTHER_AGENCY_SHARE)) {
          builder.ofOtherAgency(record);
          counts.otherAgencies++;
        } else counts.requests++;
        distinct.add(record);
        today.push(record);
        builder.plantRepeatsOf(record, copies);
        if (random.chance(HISTORY_CLOSED_BEFORE_CREATED_SHARE)) {
          const spec = COMPLAINTS[random.int(0, COMPLAINTS.length - 1)] as ComplaintSpec;
          today.push(builder.closeBeforeCreation(builder.request(spec, builder.createdOnDay(dayWall))));
          counts.closedBeforeCreation++;
        }
      }
      counts.repeatedSubmissions += copies.length;
      for (const copy of copies) (copy.createdMs < nextDayStart ? today : pending).push(copy);
      today.sort((a, b) => a.createdMs - b.createdMs);
      let lines: string[] = [];
      for (const record of today) {
        key += random.int(1, 29);
        record.key = key;
        const line = writer.record(record);
        lines.push(line);
        if (distinct.has(record) && builder.repeatsUniqueKey()) {
          lines.push(line);
          counts.duplicateUniqueKeys++;
        }
        if (lines.length >= SYNTHETIC_RECORDS_PER_CHUNK) {
          counts.records += lines.length;
          yield writer.batch(lines, first);
          first = false;
          lines = [];
        }
      }
      if (lines.length > 0) {
        counts.records += lines.length;
        yield writer.batch(lines, first);
        first = false;
      }
    }
    if (writer.end.length > 0) yield writer.end;
  }
  return { chunks: { [Symbol.iterator]: chunks }, counts, seed };
}
