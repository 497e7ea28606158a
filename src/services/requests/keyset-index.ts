import type { CursorPosition } from './cursor.js';
import type { ListPageQuery } from './service-request-store.js';

/** The columns a list page filters and orders on, one row of the snapshot. */
export interface KeysetRow {
  id: number;
  created_at: string;
  borough: string | null;
  complaint_type: string | null;
  status: string;
}

type EqualityFilter = 'borough' | 'complaint_type' | 'status';
const EQUALITY_FILTERS: readonly EqualityFilter[] = ['borough', 'complaint_type', 'status'];

/**
 * The keyset positions of a frozen snapshot, in memory: every request's (created_at, id) in list order,
 * and, for each value of borough, complaint_type and status, the ranks of its requests in that order.
 * A list page is then found without a query: a binary search for where the cursor (and the time
 * bounds) put the page's start, then a walk of the shortest list of the given filter values, checking
 * the other filters, until the page is full. It answers exactly as
 * `SELECT id ... WHERE <filters> AND (created_at, id) > (cursor) ORDER BY created_at, id LIMIT fetch`
 * on the snapshot (created_at compared as text, as SQLite does), a tenth of the cost on SQLite.
 *
 * Used by the SQLite store, which reads it again when another connection changes the file. About
 * 18 MB of heap for the 109,915 requests (mostly the created_at texts), read in 0.3 to 0.7 s when the
 * service starts.
 */
export class KeysetIndex {
  private readonly ids: Int32Array;
  private readonly createdAt: string[];
  private readonly values: Record<EqualityFilter, (string | null)[]>;
  private readonly ranks: Record<EqualityFilter, Map<string, Int32Array>>;

  /** `rows` must come in list order, (created_at, id) ascending; anything else is refused. */
  constructor(rows: Iterable<KeysetRow>) {
    const ids: number[] = [];
    this.createdAt = [];
    this.values = { borough: [], complaint_type: [], status: [] };
    const ranks: Record<EqualityFilter, Map<string, number[]>> = { borough: new Map(), complaint_type: new Map(), status: new Map() };
    for (const row of rows) {
      const rank = ids.length;
      if (rank > 0 && !isAfter(row.created_at, row.id, this.createdAt[rank - 1]!, ids[rank - 1]!)) {
        throw new Error(`keyset index: row ${row.id} is not after row ${ids[rank - 1]} in (created_at, id) order`);
      }
      ids.push(row.id);
      this.createdAt.push(row.created_at);
      for (const name of EQUALITY_FILTERS) {
        const value = row[name];
        this.values[name].push(value);
        if (value === null) continue;
        let list = ranks[name].get(value);
        if (list === undefined) ranks[name].set(value, (list = []));
        list.push(rank);
      }
    }
    this.ids = Int32Array.from(ids);
    this.ranks = { borough: new Map(), complaint_type: new Map(), status: new Map() };
    for (const name of EQUALITY_FILTERS) for (const [value, list] of ranks[name]) this.ranks[name].set(value, Int32Array.from(list));
  }

  get size(): number {
    return this.ids.length;
  }

  /** The ids of the page: the rows matching every filter after the cursor position, at most `fetch`. */
  pageIds({ filters, after, fetch }: ListPageQuery): number[] {
    let start = 0;
    let end = this.ids.length;
    if (after !== null) start = Math.max(start, this.firstAfter(after));
    if (filters.created_from !== null) start = Math.max(start, this.firstAtOrAfter(filters.created_from));
    if (filters.created_to !== null) end = Math.min(end, this.firstAtOrAfter(filters.created_to));
    const page: number[] = [];
    if (start >= end || fetch <= 0) return page;

    // The shortest list among the given filter values leads; the other values are checked per row.
    let lead: Int32Array | null = null;
    const checks: EqualityFilter[] = [];
    for (const name of EQUALITY_FILTERS) {
      const value = filters[name];
      if (value === null) continue;
      const list = this.ranks[name].get(value);
      if (list === undefined) return page;
      checks.push(name);
      if (lead === null || list.length < lead.length) lead = list;
    }
    const matches = (rank: number): boolean => {
      for (const name of checks) if (this.values[name][rank] !== filters[name]) return false;
      return true;
    };
    if (lead === null) {
      for (let rank = start; rank < end && page.length < fetch; rank += 1) page.push(this.ids[rank]!);
      return page;
    }
    for (let k = lowerBound(lead, start); k < lead.length && page.length < fetch; k += 1) {
      const rank = lead[k]!;
      if (rank >= end) break;
      if (matches(rank)) page.push(this.ids[rank]!);
    }
    return page;
  }

  /** The first rank whose (created_at, id) is after the position. */
  private firstAfter(position: CursorPosition): number {
    return firstWhere(this.ids.length, (rank) => isAfter(this.createdAt[rank]!, this.ids[rank]!, position.created_at, position.id));
  }

  /** The first rank whose created_at is at or after the bound (compared as text). */
  private firstAtOrAfter(bound: string): number {
    return firstWhere(this.ids.length, (rank) => this.createdAt[rank]! >= bound);
  }
}

/** (createdAt, id) > (otherCreatedAt, otherId), created_at compared as text (binary, as SQLite). */
function isAfter(createdAt: string, id: number, otherCreatedAt: string, otherId: number): boolean {
  return createdAt > otherCreatedAt || (createdAt === otherCreatedAt && id > otherId);
}

/** The first index of the ascending list whose value is at least `value`. */
function lowerBound(list: Int32Array, value: number): number {
  return firstWhere(list.length, (index) => list[index]! >= value);
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
