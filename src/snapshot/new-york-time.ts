/**
 * Timestamps of the export: parsing its spellings into local New York time written as
 * `YYYY-MM-DDTHH:MM:SS`, and turning local times into real instants with the America/New_York zone
 * (through Intl), so that elapsed times across the daylight-saving changes (2025-03-09: 02:00 ->
 * 03:00; 2025-11-02: 02:00 -> 01:00) are real elapsed times.
 *
 * A local time that does not exist (02:30 on 2025-03-09) is read with the offset before the change
 * (as 03:30 EDT); a local time that occurs twice (01:30 on 2025-11-02) is read as the first one (EDT).
 */

export const CITY_TIME_ZONE = 'America/New_York';

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

const zoneFormatter = new Intl.DateTimeFormat('en-US', {
  timeZone: CITY_TIME_ZONE,
  hourCycle: 'h23',
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
});

/** Offset of New York from UTC at instant `epochMs`, in milliseconds (e.g. -4 h in summer). */
function zoneOffsetAt(epochMs: number): number {
  const parts = zoneFormatter.formatToParts(new Date(epochMs));
  const get = (type: Intl.DateTimeFormatPartTypes): number => {
    const part = parts.find((p) => p.type === type);
    return part ? Number(part.value) : 0;
  };
  const asUtc = Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second'));
  return asUtc - Math.floor(epochMs / 1000) * 1000;
}

/**
 * The offsets are cached per day when New York keeps one offset all day (every day but the two of
 * the changes each year), otherwise per hour: a history of ten years asks the zone a few thousand
 * times, not once per hour of it.
 */
const offsetByUtcDay = new Map<number, number | null>();
const offsetByUtcHour = new Map<number, number>();
/** Offset at an instant (New York changes offset on whole hours). */
function cachedZoneOffsetAt(epochMs: number): number {
  const day = Math.floor(epochMs / DAY_MS);
  let dayOffset = offsetByUtcDay.get(day);
  if (dayOffset === undefined) {
    const first = zoneOffsetAt(day * DAY_MS);
    dayOffset = first === zoneOffsetAt(day * DAY_MS + 23 * HOUR_MS) ? first : null;
    offsetByUtcDay.set(day, dayOffset);
  }
  if (dayOffset !== null) return dayOffset;
  const hour = Math.floor(epochMs / HOUR_MS);
  let offset = offsetByUtcHour.get(hour);
  if (offset === undefined) {
    offset = zoneOffsetAt(hour * HOUR_MS);
    offsetByUtcHour.set(hour, offset);
  }
  return offset;
}

const offsetByLocalDay = new Map<number, number | null>();
const offsetByLocalHour = new Map<number, number>();
/** Offset to apply to a local wall time (given as if it were UTC), cached per local day or hour. */
function offsetForLocalWallTime(wallMs: number): number {
  const day = Math.floor(wallMs / DAY_MS);
  let dayOffset = offsetByLocalDay.get(day);
  if (dayOffset === undefined) {
    // The same offset from 14 hours before the day to 14 hours after it: no change near the day.
    const before = zoneOffsetAt(day * DAY_MS - 14 * HOUR_MS);
    dayOffset = before === zoneOffsetAt((day + 1) * DAY_MS + 14 * HOUR_MS) ? before : null;
    offsetByLocalDay.set(day, dayOffset);
  }
  if (dayOffset !== null) return dayOffset;
  const hour = Math.floor(wallMs / HOUR_MS);
  let offset = offsetByLocalHour.get(hour);
  if (offset === undefined) {
    const wall = hour * HOUR_MS;
    const before = zoneOffsetAt(wall - 14 * HOUR_MS);
    const after = zoneOffsetAt(wall + 14 * HOUR_MS);
    const valid = [...new Set([before, after])].filter((o) => zoneOffsetAt(wall - o) === o);
    // Two valid offsets: the repeated hour, take the first instant (the larger offset).
    // None: the skipped hour, take the offset in force before the change.
    offset = valid.length > 0 ? Math.max(...valid) : before;
    offsetByLocalHour.set(hour, offset);
  }
  return offset;
}

const digits2 = (s: string, i: number): number => (s.charCodeAt(i) - 48) * 10 + s.charCodeAt(i + 1) - 48;

/** Local wall time `YYYY-MM-DDTHH:MM:SS` read as if UTC, in milliseconds. */
export function wallTimeMs(local: string): number {
  return Date.UTC(
    digits2(local, 0) * 100 + digits2(local, 2),
    digits2(local, 5) - 1,
    digits2(local, 8),
    digits2(local, 11),
    digits2(local, 14),
    digits2(local, 17),
  );
}

/** Real instant (epoch ms) of a New York local time `YYYY-MM-DDTHH:MM:SS`. */
export function cityLocalTimeToEpochMs(local: string): number {
  return cityWallTimeToEpochMs(wallTimeMs(local));
}

/** Real instant (epoch ms) of a New York local wall time given in ms as if it were UTC. */
export function cityWallTimeToEpochMs(wallMs: number): number {
  return wallMs - offsetForLocalWallTime(wallMs);
}

/** False for a wall time (ms, as if UTC) in the hour New York skips when daylight-saving time starts. */
export function cityWallTimeExists(wallMs: number): boolean {
  const offset = offsetForLocalWallTime(wallMs);
  return cachedZoneOffsetAt(wallMs - offset) === offset;
}

/** `YYYY-MM-DD` of a day counted from 1970-01-01, kept once made (the days of a snapshot are a few thousand). */
function dateOfDayNumber(dayNumber: number): string {
  let date = dateByDayNumber.get(dayNumber);
  if (date === undefined) {
    date = new Date(dayNumber * DAY_MS).toISOString().slice(0, 10);
    dateByDayNumber.set(dayNumber, date);
  }
  return date;
}

/** New York local time `YYYY-MM-DDTHH:MM:SS` of an instant. */
export function epochMsToCityLocalTime(epochMs: number): string {
  return formatWallTime(epochMs + cachedZoneOffsetAt(epochMs));
}

/** Format a wall time (ms, as if UTC) as `YYYY-MM-DDTHH:MM:SS`. */
export function formatWallTime(wallMs: number): string {
  const seconds = Math.floor(wallMs / 1000);
  const dayNumber = Math.floor(seconds / 86_400);
  const date = dateOfDayNumber(dayNumber);
  const inDay = seconds - dayNumber * 86_400;
  const h = Math.floor(inDay / 3600);
  const m = Math.floor((inDay % 3600) / 60);
  return `${date}T${pad2(h)}:${pad2(m)}:${pad2(inDay % 60)}`;
}

const dateByDayNumber = new Map<number, string>();

/** Real elapsed days between two New York local times, rounded to 2 decimals. */
export function elapsedDaysBetween(createdLocal: string, closedLocal: string): number {
  const ms = cityLocalTimeToEpochMs(closedLocal) - cityLocalTimeToEpochMs(createdLocal);
  return Math.round((ms / DAY_MS) * 100) / 100;
}

const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function isValidDateTime(y: number, mo: number, d: number, h: number, mi: number, s: number): boolean {
  if (!(y >= 1900 && y <= 2100 && mo >= 1 && mo <= 12 && d >= 1 && h >= 0 && h <= 23 && mi >= 0 && mi <= 59 && s >= 0 && s <= 59)) {
    return false;
  }
  const leap = (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
  const max = mo === 2 ? (leap ? 29 : 28) : (DAYS_IN_MONTH[mo - 1] ?? 31);
  return d <= max;
}

const pad2 = (n: number): string => (n < 10 ? `0${n}` : String(n));

function formatLocal(y: number, mo: number, d: number, h: number, mi: number, s: number): string {
  return `${y}-${pad2(mo)}-${pad2(d)}T${pad2(h)}:${pad2(mi)}:${pad2(s)}`;
}

const isDigit = (c: number): boolean => c >= 48 && c <= 57;

/** `MM/DD/YYYY hh:mm:ss AM` exactly, without regular expressions; null when it is anything else. */
function parseExportTimestampFast(v: string): string | null {
  for (const i of [0, 1, 3, 4, 6, 7, 8, 9, 11, 12, 14, 15, 17, 18]) if (!isDigit(v.charCodeAt(i))) return null;
  if (v.charCodeAt(2) !== 47 || v.charCodeAt(5) !== 47 || v.charCodeAt(10) !== 32 || v.charCodeAt(13) !== 58 || v.charCodeAt(16) !== 58 || v.charCodeAt(19) !== 32) {
    return null;
  }
  const m = v.charCodeAt(20) | 32;
  if ((m !== 97 && m !== 112) || (v.charCodeAt(21) | 32) !== 109) return null;
  const mo = digits2(v, 0);
  const d = digits2(v, 3);
  const y = digits2(v, 6) * 100 + digits2(v, 8);
  let h = digits2(v, 11);
  const mi = digits2(v, 14);
  const sec = digits2(v, 17);
  if (h < 1 || h > 12) return null;
  h = (h % 12) + (m === 112 ? 12 : 0);
  return isValidDateTime(y, mo, d, h, mi, sec) ? formatLocal(y, mo, d, h, mi, sec) : null;
}

/** Month/day/year (4 or 2 digits), then optionally a time: hours, minutes, seconds (a fraction dropped), AM/PM. */
const US_TIMESTAMP = /^(\d{1,2})\/(\d{1,2})\/(\d{4}|\d{2})(?:[ T]+(\d{1,2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(?: ?([AaPp])\.?[Mm]\.?)?)?$/;
/** Year-month-day (- or /), then optionally a time (T or a space): hours, minutes, seconds (a fraction dropped). No zone. */
const ISO_TIMESTAMP = /^(\d{4})([-/])(\d{1,2})\2(\d{1,2})(?:[T ](\d{1,2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?)?$/;

/**
 * The forms of a Created or Closed Date the ingestion reads, as the messages name them. Each is read
 * as New York local time. A time with a zone (`Z`, `+00:00`) is not read: the city's times carry no
 * zone, and a tool that added one may have shifted them.
 */
export const EXPORT_TIMESTAMP_FORMS =
  '05/01/2022 12:04:47 AM (the portal), 2022-05-01T00:04:47.000 (the API), 2022-05-01 00:04:47, 05/01/2022 00:04:47, ' +
  '5/1/22 0:04 or 5/1/2022 0:04 (a spreadsheet: year 22 is 2022), or a day alone (05/01/2022, 2022-05-01: midnight)';

/**
 * Read a timestamp of the export as local `YYYY-MM-DDTHH:MM:SS`: null when it has a form of
 * EXPORT_TIMESTAMP_FORMS but names no time (02/30/2025, 13/01/2025, 25:00), undefined when it has
 * none of them (or is empty). Fractions of a second are dropped; a two-digit year is of this century.
 */
export function readExportTimestamp(raw: string): string | null | undefined {
  if (raw.length === 22) {
    const fast = parseExportTimestampFast(raw);
    if (fast !== null) return fast;
  }
  const value = raw.trim();
  if (value.length === 0) return undefined;
  let m = US_TIMESTAMP.exec(value);
  if (m) {
    const mo = Number(m[1]);
    const d = Number(m[2]);
    const y = (m[3] as string).length === 2 ? 2000 + Number(m[3]) : Number(m[3]);
    let h = m[4] === undefined ? 0 : Number(m[4]);
    const mi = m[5] === undefined ? 0 : Number(m[5]);
    const s = m[6] === undefined ? 0 : Number(m[6]);
    const meridiem = m[7];
    if (meridiem !== undefined) {
      if (h < 1 || h > 12) return null;
      const pm = meridiem === 'P' || meridiem === 'p';
      h = (h % 12) + (pm ? 12 : 0);
    }
    return isValidDateTime(y, mo, d, h, mi, s) ? formatLocal(y, mo, d, h, mi, s) : null;
  }
  m = ISO_TIMESTAMP.exec(value);
  if (m) {
    const y = Number(m[1]);
    const mo = Number(m[3]);
    const d = Number(m[4]);
    const h = m[5] === undefined ? 0 : Number(m[5]);
    const mi = m[6] === undefined ? 0 : Number(m[6]);
    const s = m[7] === undefined ? 0 : Number(m[7]);
    return isValidDateTime(y, mo, d, h, mi, s) ? formatLocal(y, mo, d, h, mi, s) : null;
  }
  return undefined;
}

/** readExportTimestamp, null for anything that is not a time (empty, another form, no such day). */
export function parseExportTimestamp(raw: string): string | null {
  return readExportTimestamp(raw) ?? null;
}

/** Write a local time `YYYY-MM-DDTHH:MM:SS` as the export does: `MM/DD/YYYY hh:mm:ss AM`. */
export function formatExportTimestamp(local: string): string {
  const h = Number(local.slice(11, 13));
  const h12 = h % 12 === 0 ? 12 : h % 12;
  return `${local.slice(5, 7)}/${local.slice(8, 10)}/${local.slice(0, 4)} ${pad2(h12)}:${local.slice(14, 16)}:${local.slice(17, 19)} ${h < 12 ? 'AM' : 'PM'}`;
}

/** `YYYY-MM-DD` days from `start` to `end` inclusive. */
export function daysInclusive(start: string, end: string): string[] {
  const days: string[] = [];
  let t = Date.UTC(Number(start.slice(0, 4)), Number(start.slice(5, 7)) - 1, Number(start.slice(8, 10)));
  const last = Date.UTC(Number(end.slice(0, 4)), Number(end.slice(5, 7)) - 1, Number(end.slice(8, 10)));
  for (; t <= last; t += DAY_MS) days.push(dateOfDayNumber(t / DAY_MS));
  return days;
}
