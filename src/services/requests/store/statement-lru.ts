/**
 * Prepared statements kept by their SQL text, the least recently used dropped first, bounded by the
 * sum of their texts' lengths rather than by a count: a statement's memory grows with its text, in
 * SQLite as in PostgreSQL (bench/README.md, "HEAD answers, filter shapes and statement caches"),
 * and a merge of 50 walks is a hundred times the text of a one-value page. The caller frees what is dropped
 * (sqlite-statements.ts, postgres-statements.ts).
 */
export class StatementLru<V> {
  private readonly entries = new Map<string, V>();
  private chars = 0;

  constructor(readonly maxChars: number) {}

  /** The statement kept for `text` (now the most recently used), or undefined. */
  get(text: string): V | undefined {
    const value = this.entries.get(text);
    if (value === undefined) return undefined;
    this.entries.delete(text);
    this.entries.set(text, value);
    return value;
  }

  /** Keeps `value` for `text`; returns the entries dropped to stay within the bound (never `text` itself). */
  set(text: string, value: V): [string, V][] {
    const previous = this.entries.get(text);
    if (previous !== undefined) {
      this.entries.delete(text);
      this.chars -= text.length;
    }
    this.entries.set(text, value);
    this.chars += text.length;
    const dropped: [string, V][] = [];
    for (const [oldest, kept] of this.entries) {
      if (this.chars <= this.maxChars || oldest === text) break;
      this.entries.delete(oldest);
      this.chars -= oldest.length;
      dropped.push([oldest, kept]);
    }
    return dropped;
  }

  /** Forgets every statement; returns them. */
  clear(): [string, V][] {
    const all = [...this.entries];
    this.entries.clear();
    this.chars = 0;
    return all;
  }

  /** Statements kept and the characters of their texts (tests, metrics). */
  stats(): { statements: number; chars: number } {
    return { statements: this.entries.size, chars: this.chars };
  }
}
