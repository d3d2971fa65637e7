/**
 * An append-only byte buffer with a hard cap: it starts small and doubles as it fills, up to
 * `maxBytes`, so a stream of a million one-byte writes costs a handful of allocations instead
 * of a million Buffer objects, and never more memory than about twice what it holds.
 *
 * @example
 * ```ts
 * const out = new ByteBuffer({ maxBytes: 1 << 20 });
 * const kept = out.append(chunk); // bytes of `chunk` that fitted
 * out.bytes().toString('utf8');
 * ```
 */
export class ByteBuffer {
  private data: Buffer;
  private size = 0;
  readonly maxBytes: number;

  constructor({
    maxBytes,
    initialBytes = 4096,
  }: {
    /** Bytes it will ever hold; `append` keeps what fits and reports the rest. */
    maxBytes: number;
    /** First allocation (clamped to `maxBytes`). */
    initialBytes?: number;
  }) {
    this.maxBytes = maxBytes;
    this.data = Buffer.allocUnsafe(Math.max(0, Math.min(initialBytes, maxBytes)));
  }

  /** Bytes held. */
  get length(): number {
    return this.size;
  }

  /** Room left before the cap. */
  get room(): number {
    return this.maxBytes - this.size;
  }

  /** Appends what fits of `chunk` and returns how many bytes were kept. */
  append(chunk: Uint8Array): number {
    const take = Math.min(chunk.length, this.maxBytes - this.size);
    if (take <= 0) return 0;
    const needed = this.size + take;
    if (needed > this.data.length) {
      let capacity = Math.max(this.data.length, 64);
      while (capacity < needed) capacity *= 2;
      const grown = Buffer.allocUnsafe(Math.min(capacity, this.maxBytes));
      this.data.copy(grown, 0, 0, this.size);
      this.data = grown;
    }
    this.data.set(take === chunk.length ? chunk : chunk.subarray(0, take), this.size);
    this.size = needed;
    return take;
  }

  /** The bytes held (a view; copy it before appending more if it must not change). */
  bytes(): Buffer {
    return this.data.subarray(0, this.size);
  }
}
