import type { CursorPosition } from './cursor.js';
import { compareFilterValues, EQUALITY_FILTERS, type EqualityFilter, type FilterValue, type ListFilters } from './list-filters.js';
import type { ListPageQuery } from './service-request-store.js';

/** The columns a list page filters and orders on, and the ones facets and statistics count, of one row. */
export interface KeysetRow {
  id: number;
  created_at: string;
  borough: string | null;
  complaint_type: string | null;
  status: string;
  channel: string | null;
  council_district: number | null;
  incident_zip: string | null;
  descriptor: string | null;
  location_type: string | null;
  latitude: number | null;
  longitude: number | null;
  days_to_close: number | null;
}

/** The columns kept as value codes: the equality filters, and location_type for its facet. */
export const CODED_COLUMNS = [...EQUALITY_FILTERS, 'location_type'] as const;
export type CodedColumn = (typeof CODED_COLUMNS)[number];

export interface ValueCount {
  value: FilterValue;
  count: number;
}

/** The requests opened on one day: how many, and the days_to_close of those that have one. */
export interface DayOpenings {
  opened: number;
  closeDays: number[];
}

/**
 * One column as codes: code 0 is null, the others index `values`; for each code, the ranks (positions in
 * list order) of its rows, ascending.
 */
class CodedValues {
  readonly values: FilterValue[] = [null];
  private readonly codeOf = new Map<FilterValue, number>([[null, 0]]);
  private readonly rankLists: number[][] = [[]];
  codes: Int32Array = new Int32Array(0);
  ranks: Int32Array[] = [];
  private readonly building: number[] = [];

  add(value: FilterValue, rank: number): void {
    let code = this.codeOf.get(value);
    if (code === undefined) {
      code = this.values.length;
      this.values.push(value);
      this.codeOf.set(value, code);
      this.rankLists.push([]);
    }
    this.building.push(code);
    elementAt(this.rankLists, code).push(rank);
  }

  finish(): void {
    this.codes = Int32Array.from(this.building);
    this.building.length = 0;
    this.ranks = this.rankLists.map((list) => Int32Array.from(list));
    this.rankLists.length = 0;
  }

  code(value: FilterValue): number | undefined {
    return this.codeOf.get(value);
  }
}

/** One equality filter of a query: which codes it accepts, and the rank lists of those codes. */
interface CompiledFilter {
  codes: Int32Array;
  accepted: Uint8Array;
  lists: Int32Array[];
  size: number;
}

/**
 * The rows of a keyset index, given a few at a time (`add`, in list order; anything else is refused),
 * so that a reader can let other work run between two batches; `new KeysetIndex(builder)` then makes
 * the index. The last row added is `last`, where the next batch starts.
 */
export class KeysetIndexBuilder {
  private ids: number[] = [];
  private createdAt: string[] = [];
  private columns = Object.fromEntries(CODED_COLUMNS.map((name) => [name, new CodedValues()])) as Record<CodedColumn, CodedValues>;
  private latitude: number[] = [];
  private longitude: number[] = [];
  private daysToClose: number[] = [];
  private dayCodes: number[] = [];
  private readonly dayCodeOf = new Map<string, number>();
  private dayTexts: string[] = [];
  private taken = false;

  /** How many rows were added. */
  get size(): number {
    return this.ids.length;
  }

  /** The (created_at, id) of the last row added, null before the first. */
  get last(): { created_at: string; id: number } | null {
    const rank = this.ids.length - 1;
    return rank < 0 ? null : { created_at: elementAt(this.createdAt, rank), id: elementAt(this.ids, rank) };
  }

  add(row: KeysetRow): void {
    if (this.taken) throw new Error('keyset index: the builder was already used');
    const rank = this.ids.length;
    if (rank > 0 && !isAfter(row.created_at, row.id, elementAt(this.createdAt, rank - 1), elementAt(this.ids, rank - 1))) {
      throw new Error(`keyset index: row ${row.id} is not after row ${this.ids[rank - 1]} in (created_at, id) order`);
    }
    this.ids.push(row.id);
    this.createdAt.push(row.created_at);
    for (const name of CODED_COLUMNS) this.columns[name].add(row[name], rank);
    this.latitude.push(row.latitude ?? Number.NaN);
    this.longitude.push(row.longitude ?? Number.NaN);
    this.daysToClose.push(row.days_to_close ?? Number.NaN);
    const day = row.created_at.slice(0, 10);
    let dayCode = this.dayCodeOf.get(day);
    if (dayCode === undefined) {
      dayCode = this.dayTexts.length;
      this.dayCodeOf.set(day, dayCode);
      this.dayTexts.push(day);
    }
    this.dayCodes.push(dayCode);
  }

  /** What the index is made of; the builder cannot be used again. */
  take() {
    if (this.taken) throw new Error('keyset index: the builder was already used');
    this.taken = true;
    const parts = {
      ids: this.ids,
      createdAt: this.createdAt,
      columns: this.columns,
      latitude: this.latitude,
      longitude: this.longitude,
      daysToClose: this.daysToClose,
      dayCodes: this.dayCodes,
      dayTexts: this.dayTexts,
    };
    this.ids = [];
    this.createdAt = [];
    this.latitude = [];
    this.longitude = [];
    this.daysToClose = [];
    this.dayCodes = [];
    this.dayTexts = [];
    return parts;
  }
}

/**
 * The keyset positions of a frozen snapshot, in memory: every request's (created_at, id) in list order,
 * and, for each value of each equality filter (borough, complaint_type, status, channel,
 * council_district, incident_zip, descriptor), the ranks of its requests in that order; the location
 * and days_to_close of each rank for the map box and the statistics.
 * A list page is then found without a query: a binary search for where the cursor (and the time
 * bounds) put the page's start, then a walk of the shortest list of the given filter values (merged
 * when a filter has several), checking the other filters, until the page is full. It answers exactly as
 * `SELECT id ... WHERE <filters> AND (created_at, id) > (cursor) ORDER BY created_at, id LIMIT fetch`
 * on the snapshot (created_at compared as text, as SQLite does), a tenth of the cost on SQLite. The
 * same walk counts the rows of the count, the facets and the statistics.
 *
 * Used by the SQLite store, which reads it again when another connection changes the file. Its memory
 * and reading time for the synthetic snapshot are in bench/README.md ("Figures behind source
 * comments"); the store reads it after the service listens, a few
 * thousand rows per turn of the event loop (`KeysetIndexBuilder`), so that a start does not wait for it.
 */
export class KeysetIndex {
  private readonly ids: Int32Array;
  private readonly createdAt: string[];
  private readonly columns: Record<CodedColumn, CodedValues>;
  private readonly latitude: Float64Array;
  private readonly longitude: Float64Array;
  private readonly daysToClose: Float64Array;
  /** The local date of each rank's created_at, as an index of `dayTexts`. */
  private readonly dayCodes: Int32Array;
  private readonly dayTexts: string[];

  /** `rows` must come in list order, (created_at, id) ascending; anything else is refused. */
  constructor(rows: Iterable<KeysetRow> | KeysetIndexBuilder) {
    let builder: KeysetIndexBuilder;
    if (rows instanceof KeysetIndexBuilder) builder = rows;
    else {
      builder = new KeysetIndexBuilder();
      for (const row of rows) builder.add(row);
    }
    const parts = builder.take();
    this.ids = Int32Array.from(parts.ids);
    this.createdAt = parts.createdAt;
    this.columns = parts.columns;
    for (const name of CODED_COLUMNS) this.columns[name].finish();
    this.latitude = Float64Array.from(parts.latitude);
    this.longitude = Float64Array.from(parts.longitude);
    this.daysToClose = Float64Array.from(parts.daysToClose);
    this.dayCodes = Int32Array.from(parts.dayCodes);
    this.dayTexts = parts.dayTexts;
  }

  get size(): number {
    return this.ids.length;
  }

  /** The ids of the page: the rows matching every filter after the cursor position, at most `fetch`. */
  pageIds({ filters, after, fetch }: ListPageQuery): number[] {
    const page: number[] = [];
    if (fetch <= 0) return page;
    this.forEachMatch(filters, after, (rank) => {
      page.push(int32At(this.ids, rank));
      return page.length < fetch;
    });
    return page;
  }

  /** How many rows match the filters. */
  count(filters: ListFilters): number {
    let count = 0;
    this.forEachMatch(filters, null, () => {
      count += 1;
      return true;
    });
    return count;
  }

  /** Each value of the column among the matching rows with its count, largest first, then by value (null last). */
  facet(column: CodedColumn, filters: ListFilters): ValueCount[] {
    const values = this.columns[column];
    const counts = new Int32Array(values.values.length);
    this.forEachMatch(filters, null, (rank) => {
      const code = int32At(values.codes, rank);
      counts[code] = int32At(counts, code) + 1;
      return true;
    });
    const found: ValueCount[] = [];
    counts.forEach((count, code) => {
      if (count > 0) found.push({ value: elementAt(values.values, code), count });
    });
    return found.sort((a, b) => b.count - a.count || compareFilterValues(a.value, b.value));
  }

  /** The matching rows grouped by the local date of created_at (days without a matching row are absent). */
  openingsByDay(filters: ListFilters): Map<string, DayOpenings> {
    const byCode: (DayOpenings | undefined)[] = [];
    this.forEachMatch(filters, null, (rank) => {
      const code = int32At(this.dayCodes, rank);
      const day = (byCode[code] ??= { opened: 0, closeDays: [] });
      day.opened += 1;
      const days = float64At(this.daysToClose, rank);
      if (!Number.isNaN(days)) day.closeDays.push(days);
      return true;
    });
    const result = new Map<string, DayOpenings>();
    byCode.forEach((openings, code) => {
      if (openings !== undefined) result.set(elementAt(this.dayTexts, code), openings);
    });
    return result;
  }

  /**
   * Calls `visit` with the rank of each row matching the filters after the position, in list order,
   * while it returns true.
   */
  private forEachMatch(filters: ListFilters, after: CursorPosition | null, visit: (rank: number) => boolean): void {
    let start = 0;
    let end = this.ids.length;
    if (after !== null) start = Math.max(start, this.firstAfter(after));
    if (filters.created_from !== null) start = Math.max(start, this.firstAtOrAfter(filters.created_from));
    if (filters.created_to !== null) end = Math.min(end, this.firstAtOrAfter(filters.created_to));
    if (start >= end) return;

    // The filter with the fewest rows leads; the others are checked per row.
    const compiled: CompiledFilter[] = [];
    for (const name of EQUALITY_FILTERS) {
      const accepted = filters[name];
      if (accepted === null) continue;
      const filter = this.compile(name, accepted);
      if (filter.size === 0) return;
      compiled.push(filter);
    }
    compiled.sort((a, b) => a.size - b.size);
    const [lead, ...checks] = compiled;
    const box = filters.bbox;
    const matches = (rank: number): boolean => {
      for (const check of checks) if (check.accepted[int32At(check.codes, rank)] !== 1) return false;
      if (box !== null) {
        const x = float64At(this.longitude, rank);
        const y = float64At(this.latitude, rank);
        // A missing location is NaN: every comparison is false.
        if (!(x >= box.minLongitude && x <= box.maxLongitude && y >= box.minLatitude && y <= box.maxLatitude)) return false;
      }
      return true;
    };
    if (lead === undefined) {
      for (let rank = start; rank < end; rank += 1) if (matches(rank) && !visit(rank)) return;
      return;
    }
    if (lead.lists.length === 1) {
      const list = elementAt(lead.lists, 0);
      for (let k = lowerBound(list, start); k < list.length; k += 1) {
        const rank = int32At(list, k);
        if (rank >= end) return;
        if (matches(rank) && !visit(rank)) return;
      }
      return;
    }
    // Several values: their rank lists merged on the fly (each head is the next rank of its list).
    const lists = lead.lists;
    const heads = lists.map((list) => lowerBound(list, start));
    for (;;) {
      let best = -1;
      let rank = end;
      for (let i = 0; i < lists.length; i += 1) {
        const head = elementAt(heads, i);
        const list = elementAt(lists, i);
        const candidate = head < list.length ? int32At(list, head) : end;
        if (candidate < rank) {
          rank = candidate;
          best = i;
        }
      }
      if (best < 0) return;
      heads[best] = elementAt(heads, best) + 1;
      if (matches(rank) && !visit(rank)) return;
    }
  }

  private compile(name: EqualityFilter, accepted: readonly FilterValue[]): CompiledFilter {
    const column = this.columns[name];
    const acceptedCodes = new Uint8Array(column.values.length);
    const lists: Int32Array[] = [];
    let size = 0;
    for (const value of accepted) {
      const code = column.code(value);
      if (code === undefined || acceptedCodes[code] === 1) continue;
      acceptedCodes[code] = 1;
      const list = elementAt(column.ranks, code);
      if (list.length === 0) continue;
      lists.push(list);
      size += list.length;
    }
    return { codes: column.codes, accepted: acceptedCodes, lists, size };
  }

  /** The first rank whose (created_at, id) is after the position. */
  private firstAfter(position: CursorPosition): number {
    return firstWhere(this.ids.length, (rank) => isAfter(elementAt(this.createdAt, rank), int32At(this.ids, rank), position.created_at, position.id));
  }

  /** The first rank whose created_at is at or after the bound (compared as text). */
  private firstAtOrAfter(bound: string): number {
    return firstWhere(this.ids.length, (rank) => elementAt(this.createdAt, rank) >= bound);
  }
}

/** (createdAt, id) > (otherCreatedAt, otherId), created_at compared as text (binary, as SQLite). */
function isAfter(createdAt: string, id: number, otherCreatedAt: string, otherId: number): boolean {
  return createdAt > otherCreatedAt || (createdAt === otherCreatedAt && id > otherId);
}

/** The first index of the ascending list whose value is at least `value`. */
function lowerBound(list: Int32Array, value: number): number {
  return firstWhere(list.length, (index) => int32At(list, index) >= value);
}

/** Binary search: the first index in [0, length) where `holds` is true, given that it stays true after it. */
function firstWhere(length: number, holds: (index: number) => boolean): number {
  let low = 0;
  let high = length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (holds(middle)) high = middle;
    else low = middle + 1;
  }
  return low;
}

// Checked reads: every index below is a rank, code or position the index produced itself, so a
// missing element is a bug of the index, thrown as such. One accessor per array kind keeps each
// call site monomorphic (the hot loops read Int32Array and Float64Array only).

function int32At(array: Int32Array, index: number): number {
  const value = array[index];
  if (value === undefined) throw new RangeError(`keyset index: no element ${index} of ${array.length}`);
  return value;
}

function float64At(array: Float64Array, index: number): number {
  const value = array[index];
  if (value === undefined) throw new RangeError(`keyset index: no element ${index} of ${array.length}`);
  return value;
}

function elementAt<T>(array: readonly T[], index: number): T {
  const value = array[index];
  if (value === undefined) throw new RangeError(`keyset index: no element ${index} of ${array.length}`);
  return value;
}
