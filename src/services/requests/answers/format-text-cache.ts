/**
 * Byte-bounded storage of the rows' JSON texts, CSV records and GeoJSON Feature heads (serialized-rows.ts):
 * texts are appended to slabs of `slabBytes`, and a row keeps only where its text is (a number), not a
 * Buffer object per text (about 100 bytes of heap each, as much as a CSV record). Past `maxBytes` the arena
 * starts again empty: its generation changes, which makes every earlier place stale at once, and the
 * old slabs are freed when no page being built still holds them.
 *
 * 40 MiB holds the CSV records and Feature heads of the whole synthetic snapshot (bench/README.md,
 * "Figures behind source comments"), so that paging through every row in those formats builds each
 * text once; a larger snapshot rebuilds texts from the JSON texts instead of growing the memory.
 */
export const FORMAT_TEXT_BYTES = 40 * 1024 * 1024;
export const SLAB_BYTES = 1024 * 1024;

export class FormatTextCache {
  private slabs: Buffer[] = [];
  private used = 0;
  /** Changes each time the arena starts again: places of another generation are stale. */
  generation = 0;

  constructor(
    readonly maxBytes = FORMAT_TEXT_BYTES,
    readonly slabBytes = SLAB_BYTES,
  ) {}

  /**
   * Appends `text` and returns its place as one number (slab index times slabBytes plus offset), or
   * -1 when it is longer than a slab (then it is not kept). Starting a slab past `maxBytes` first
   * starts the arena again (new generation).
   */
  put(text: string, length = Buffer.byteLength(text)): number {
    if (length > this.slabBytes) return -1;
    let slab = this.slabs[this.slabs.length - 1];
    if (slab === undefined || this.used + length > this.slabBytes) {
      if ((this.slabs.length + 1) * this.slabBytes > this.maxBytes) {
        this.slabs = [];
        this.generation += 1;
      }
      slab = Buffer.allocUnsafeSlow(this.slabBytes);
      this.slabs.push(slab);
      this.used = 0;
    }
    const place = (this.slabs.length - 1) * this.slabBytes + this.used;
    slab.write(text, this.used, length, 'utf8');
    this.used += length;
    return place;
  }

  /**
   * The slab that holds `place` (of the current generation); the text starts at `place % slabBytes`. A
   * page copies texts out of it, and holding it keeps it valid after the arena starts again.
   */
  slabOf(place: number): Buffer {
    const slab = this.slabs[Math.floor(place / this.slabBytes)];
    if (slab === undefined) throw new RangeError(`format text arena: no slab holds place ${place}`);
    return slab;
  }

  /** Bytes of slabs held (for tests and benchmarks). */
  bytes(): number {
    return this.slabs.length * this.slabBytes;
  }
}
