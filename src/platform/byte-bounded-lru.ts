/**
 * A least-recently-used map of Buffers bounded by the sum of their byte lengths (not by a count):
 * adding past `maxBytes` drops the least recently used entries first, and a value larger than a
 * quarter of the bound is never kept (one large value must not empty the cache). A Map keeps the
 * order of use (an entry read is moved to the end).
 */
export class ByteBoundedLru {
  private readonly entries = new Map<string, Buffer>();
  private total = 0;

  constructor(readonly maxBytes: number) {}

  get(key: string): Buffer | undefined {
    const value = this.entries.get(key);
    if (value === undefined) return undefined;
    this.entries.delete(key);
    this.entries.set(key, value);
    return value;
  }

  set(key: string, value: Buffer): void {
    const size = value.length + key.length;
    if (size > this.maxBytes / 4) return;
    const previous = this.entries.get(key);
    if (previous !== undefined) {
      this.entries.delete(key);
      this.total -= previous.length + key.length;
    }
    this.entries.set(key, value);
    this.total += size;
    for (const [oldest, kept] of this.entries) {
      if (this.total <= this.maxBytes) break;
      this.entries.delete(oldest);
      this.total -= kept.length + oldest.length;
    }
  }

  /** Bytes held (values and keys) and entries, for tests and benchmarks. */
  stats(): { bytes: number; entries: number } {
    return { bytes: this.total, entries: this.entries.size };
  }
}
