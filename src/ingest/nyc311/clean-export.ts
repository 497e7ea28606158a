/**
 * Cleaning of an export: reads CSV records (header first), applies the rules of cleaning-rules.ts
 * in order and returns the cleaned requests sorted by (created_at, id), with each rule's count.
 */
import {
  CLEANING_RULES,
  type CleaningRuleId,
  REPEAT_WINDOW_MINUTES,
  SNAPSHOT_AGENCY,
  SNAPSHOT_PERIOD,
  boroughCode,
  channelCode,
  foldText,
  isPlaceholder,
  statusCode,
} from './cleaning-rules.js';
import { readCsvRecordBatches } from './csv-reader.js';
import { type ExportLayout, locateExportColumns } from './export-columns.js';
import { cityLocalTimeToEpochMs, parseExportTimestamp, wallTimeMs } from './new-york-time.js';
import type { CleaningRuleResult, ServiceRequest, Status } from './service-request.js';

export interface CleaningOptions {
  /** Apply the DOT and period filters (default true). Off for exports of other agencies or years. */
  applyFilters?: boolean;
  /** Called after each batch with the number of data records read so far. */
  onRecords?: (recordsRead: number) => void;
}

export interface CleanedExport {
  /** Sorted by created_at, then id. */
  rows: ServiceRequest[];
  rules: CleaningRuleResult[];
  rawRowsRead: number;
  layout: ExportLayout;
  filtersApplied: boolean;
  /** Latest valid Created or Closed Date read in the whole export (local time), or null. */
  latestTimestamp: string | null;
}

/** A request that passed the removal rules before the repeat check. */
interface Candidate {
  row: ServiceRequest;
  /** Real instant of created_at. */
  createdMs: number;
  /** created_at as a wall time (sorts like the text). */
  createdWallMs: number;
  /** Case-folded complaint type, descriptor and place; null when the place is unknown. */
  repeatKey: string | null;
}

type Counter = Record<CleaningRuleId, number>;

/**
 * One shared copy of each distinct value of a repetitive field (complaint type, zip, ...). Values
 * read from the CSV are slices of a large chunk of text; storing them would keep every chunk alive.
 * The copy is made once per distinct value; later map lookups reuse its cached hash.
 */
class ValuePool {
  private readonly values = new Map<string, string>();
  intern(value: string): string {
    let pooled = this.values.get(value);
    if (pooled === undefined) {
      pooled = Buffer.from(value, 'utf8').toString('utf8');
      this.values.set(pooled, pooled);
    }
    return pooled;
  }
}

const pool = new ValuePool();

function cleanText(raw: string, counter: Counter): string | null {
  if (raw.length === 0) return null;
  if (isPlaceholder(raw)) {
    if (raw.trim().length > 0) counter.placeholder_to_null++;
    return null;
  }
  const trimmed = raw.trim();
  return pool.intern(/\s{2,}|[\t\r\n]/.test(trimmed) ? trimmed.replace(/\s+/g, ' ') : trimmed);
}

function cleanCommunityBoard(raw: string, counter: Counter): string | null {
  const text = cleanText(raw, counter);
  if (text === null) return null;
  if (/(^|\s)unspecified(\s|$)/i.test(text)) {
    counter.placeholder_to_null++;
    return null;
  }
  return pool.intern(text.toUpperCase());
}

function cleanZip(raw: string, counter: Counter): string | null {
  if (raw.length === 0) return null;
  if (isPlaceholder(raw)) {
    if (raw.trim().length > 0) counter.placeholder_to_null++;
    return null;
  }
  const value = raw.trim();
  if (/^\d{5}$/.test(value) && value !== '00000') return pool.intern(value);
  counter.incident_zip_text++;
  const plus4 = /^(\d{5})-\d{4}$/.exec(value);
  return plus4 && plus4[1] !== '00000' ? (plus4[1] ?? null) : null;
}

function cleanCouncilDistrict(raw: string, counter: Counter): number | null {
  if (raw.length === 0) return null;
  if (isPlaceholder(raw)) {
    if (raw.trim().length > 0) counter.placeholder_to_null++;
    return null;
  }
  const value = raw.trim();
  if (/^\d{1,2}(\.0+)?$/.test(value)) {
    const n = Number.parseInt(value, 10);
    if (n >= 1 && n <= 51) return n;
  }
  counter.council_district_integer++;
  return null;
}

function parseCoordinate(raw: string | undefined): number | null | undefined {
  if (raw === undefined) return undefined;
  const value = raw.trim();
  if (value.length === 0 || isPlaceholder(value)) return undefined;
  const n = Number(value);
  return Number.isFinite(n) && n !== 0 ? n : null;
}

const LOCATION_TEXT = /^\(\s*(-?[\d.]+)\s*,\s*(-?[\d.]+)\s*\)$/;

/**
 * Clean CSV record batches (the first record of the first batch is the header) into the snapshot's
 * requests. Throws MissingColumnError when a needed column is absent.
 */
export async function cleanExportRecords(
  batches: AsyncIterable<string[][]>,
  options: CleaningOptions = {},
): Promise<CleanedExport> {
  const applyFilters = options.applyFilters ?? true;
  const counter = Object.fromEntries(CLEANING_RULES.map((rule) => [rule.id, 0])) as Counter;
  const periodStart = `${SNAPSHOT_PERIOD.start}T00:00:00`;
  const periodEndExclusive = nextDay(SNAPSHOT_PERIOD.end) + 'T00:00:00';
  const seenKeys = new Set<number>();
  const candidates: Candidate[] = [];
  let layout: ExportLayout | undefined;
  let rawRowsRead = 0;
  let latestTimestamp: string | null = null;

  for await (const batch of batches) {
    let start = 0;
    if (layout === undefined) {
      const header = batch[0];
      if (header === undefined) continue;
      layout = locateExportColumns(header);
      start = 1;
    }
    const c = layout.columns;
    const fieldCount = layout.fieldCount;
    for (let r = start; r < batch.length; r++) {
      const f = batch[r] as string[];
      rawRowsRead++;
      // malformed_record
      if (f.length !== fieldCount) {
        counter.malformed_record++;
        continue;
      }
      const keyText = (f[c.uniqueKey] as string).trim();
      const id = /^\d{1,15}$/.test(keyText) ? Number(keyText) : 0;
      const createdAt = parseExportTimestamp(f[c.createdDate] as string);
      if (id <= 0 || createdAt === null) {
        counter.malformed_record++;
        continue;
      }
      const closedRaw = f[c.closedDate] as string;
      const closedAt = closedRaw.length === 0 ? null : parseExportTimestamp(closedRaw);
      if (latestTimestamp === null || createdAt > latestTimestamp) latestTimestamp = createdAt;
      if (closedAt !== null && closedAt > latestTimestamp) latestTimestamp = closedAt;
      if (applyFilters) {
        if ((f[c.agency] as string).trim().toUpperCase() !== SNAPSHOT_AGENCY) {
          counter.agency_not_dot++;
          continue;
        }
        if (createdAt < periodStart || createdAt >= periodEndExclusive) {
          counter.created_outside_period++;
          continue;
        }
      }
      if (seenKeys.has(id)) {
        counter.duplicate_unique_key++;
        continue;
      }
      seenKeys.add(id);
      if (closedAt !== null && closedAt < createdAt) {
        counter.closed_before_created++;
        continue;
      }
      candidates.push(readCandidate(f, layout, id, createdAt, closedAt, closedRaw, counter));
    }
    options.onRecords?.(rawRowsRead);
  }
  if (layout === undefined) throw new Error('The export is empty: no header row was found.');

  applyCanonicalSpellings(candidates, counter);
  candidates.sort((a, b) => a.createdWallMs - b.createdWallMs || a.row.id - b.row.id);

  const windowMs = REPEAT_WINDOW_MINUTES * 60_000;
  const lastKeptAt = new Map<string, number>();
  const rows: ServiceRequest[] = [];
  for (const candidate of candidates) {
    if (candidate.repeatKey !== null) {
      const previous = lastKeptAt.get(candidate.repeatKey);
      if (previous !== undefined && candidate.createdMs - previous <= windowMs) {
        counter.repeated_submission++;
        continue;
      }
      lastKeptAt.set(candidate.repeatKey, candidate.createdMs);
    }
    rows.push(candidate.row);
  }

  const rules: CleaningRuleResult[] = CLEANING_RULES.map((rule) => {
    const applied = rule.kind !== 'filter' || applyFilters;
    const count = counter[rule.id];
    return {
      id: rule.id,
      kind: rule.kind,
      description: rule.description,
      rows_removed: rule.kind === 'transformation' ? 0 : count,
      values_changed: rule.kind === 'transformation' ? count : 0,
      applied,
    };
  });
  return { rows, rules, rawRowsRead, layout, filtersApplied: applyFilters, latestTimestamp };
}

/** Columns the cleaning reads, as a mask for the CSV reader. */
function usedColumnMask(header: readonly string[]): boolean[] {
  const used = new Set(Object.values(locateExportColumns(header).columns));
  return header.map((_, i) => used.has(i));
}

/** Clean CSV text chunks (header first): the CSV reader skips the columns cleaning never reads. */
export function cleanExportText(
  chunks: AsyncIterable<string> | Iterable<string>,
  options: CleaningOptions = {},
): Promise<CleanedExport> {
  return cleanExportRecords(readCsvRecordBatches(chunks, { selectColumns: usedColumnMask }), options);
}

function nextDay(day: string): string {
  const t = Date.UTC(Number(day.slice(0, 4)), Number(day.slice(5, 7)) - 1, Number(day.slice(8, 10))) + 86_400_000;
  return new Date(t).toISOString().slice(0, 10);
}

function readCandidate(
  f: string[],
  layout: ExportLayout,
  id: number,
  createdAt: string,
  closedAt: string | null,
  closedRaw: string,
  counter: Counter,
): Candidate {
  const c = layout.columns;
  if (closedAt === null && closedRaw.trim().length > 0) {
    if (isPlaceholder(closedRaw)) counter.placeholder_to_null++;
    else counter.local_timestamps++;
  }

  const boroughRaw = f[c.borough] as string;
  const borough = boroughCode(boroughRaw);
  if (borough === null && boroughRaw.trim().length > 0) counter.placeholder_to_null++;
  if (borough === undefined) counter.borough_code++;

  const statusRaw = f[c.status] as string;
  let status: Status | undefined = statusCode(statusRaw);
  if (status === undefined) {
    // Never null: inferred (counted by status_code, not as a placeholder turned into null).
    counter.status_code++;
    status = closedAt !== null ? 'closed' : 'open';
  }

  const channelRaw = f[c.channel] as string;
  let channel = null as ServiceRequest['channel'];
  if (isPlaceholder(channelRaw)) {
    if (channelRaw.trim().length > 0) counter.placeholder_to_null++;
  } else {
    channel = channelCode(channelRaw) ?? null;
    if (channel === null) {
      counter.channel_code++;
      channel = 'other';
    }
  }

  let latitude = parseCoordinate(f[c.latitude]);
  let longitude = parseCoordinate(f[c.longitude]);
  if (latitude === undefined && longitude === undefined && c.location >= 0) {
    const m = LOCATION_TEXT.exec((f[c.location] as string).trim());
    if (m) {
      latitude = parseCoordinate(m[1]);
      longitude = parseCoordinate(m[2]);
    }
  }
  if (latitude === null || longitude === null || (latitude === undefined) !== (longitude === undefined)) {
    counter.coordinates_numeric++;
    latitude = null;
    longitude = null;
  }

  const createdMs = cityLocalTimeToEpochMs(createdAt);
  const row: ServiceRequest = {
    id,
    created_at: createdAt,
    closed_at: closedAt,
    status,
    complaint_type: cleanText(f[c.complaintType] as string, counter),
    descriptor: cleanText(f[c.descriptor] as string, counter),
    location_type: cleanText(f[c.locationType] as string, counter),
    borough: borough ?? null,
    community_board: cleanCommunityBoard(f[c.communityBoard] as string, counter),
    council_district: c.councilDistrict >= 0 ? cleanCouncilDistrict(f[c.councilDistrict] as string, counter) : null,
    incident_zip: cleanZip(f[c.incidentZip] as string, counter),
    channel,
    latitude: latitude ?? null,
    longitude: longitude ?? null,
    days_to_close: closedAt === null ? null : Math.round(((cityLocalTimeToEpochMs(closedAt) - createdMs) / 86_400_000) * 100) / 100,
  };

  const address = c.incidentAddress >= 0 ? (f[c.incidentAddress] as string) : '';
  const street1 = c.intersectionStreet1 >= 0 ? (f[c.intersectionStreet1] as string) : '';
  const street2 = c.intersectionStreet2 >= 0 ? (f[c.intersectionStreet2] as string) : '';
  let place: string | null = null;
  if (row.latitude !== null && row.longitude !== null) {
    place = `@${row.latitude.toFixed(5)},${row.longitude.toFixed(5)}`;
  } else if (!isPlaceholder(address)) {
    place = `A${foldText(address)}|${row.borough ?? ''}`;
  } else if (!isPlaceholder(street1) && !isPlaceholder(street2)) {
    const streets = [foldText(street1), foldText(street2)].sort();
    place = `I${streets[0]}|${streets[1]}|${row.borough ?? ''}`;
  }
  const repeatKey =
    place === null
      ? null
      : `${row.complaint_type === null ? '' : foldText(row.complaint_type)}\u0001${
          row.descriptor === null ? '' : foldText(row.descriptor)
        }\u0001${place}`;
  const hadAddress = !isPlaceholder(address) || !isPlaceholder(street1);
  if (hadAddress) counter.free_text_dropped++;
  if (row.days_to_close !== null) counter.days_to_close++;
  return {
    row,
    createdMs,
    createdWallMs: wallTimeMs(createdAt),
    repeatKey,
  };
}

/** Write complaint type, descriptor and location type in one spelling per case-folded value. */
function applyCanonicalSpellings(candidates: Candidate[], counter: Counter): void {
  for (const field of ['complaint_type', 'descriptor', 'location_type'] as const) {
    // Count exact spellings first (few distinct values), then group them by folded value.
    const exact = new Map<string, number>();
    for (const { row } of candidates) {
      const value = row[field];
      if (value !== null) exact.set(value, (exact.get(value) ?? 0) + 1);
    }
    const spellings = new Map<string, Map<string, number>>();
    for (const [value, count] of exact) {
      const folded = value.toLowerCase();
      let counts = spellings.get(folded);
      if (counts === undefined) spellings.set(folded, (counts = new Map()));
      counts.set(value, count);
    }
    const canonical = new Map<string, string>();
    for (const counts of spellings.values()) {
      let best = '';
      let bestCount = -1;
      for (const [spelling, count] of counts) {
        if (count > bestCount || (count === bestCount && spelling < best)) {
          best = spelling;
          bestCount = count;
        }
      }
      for (const spelling of counts.keys()) canonical.set(spelling, best);
    }
    for (const { row } of candidates) {
      const value = row[field];
      if (value === null) continue;
      const chosen = canonical.get(value) ?? value;
      if (chosen !== value) {
        row[field] = chosen;
        counter.canonical_spelling++;
      }
    }
  }
}
