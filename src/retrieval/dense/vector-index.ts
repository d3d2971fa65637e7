import { DimensionMismatchError } from '../../errors/dimension-mismatch-error.ts';
import { InvalidArgumentError } from '../../errors/invalid-argument-error.ts';
import { MatrixStorage, strideFor } from '../structures/matrix-storage.ts';
import { TopKHeap } from '../structures/top-k-heap.ts';

/** Options of {@link VectorIndex}. */
export type VectorIndexOptions = {
  /** Vector length; when omitted, fixed by the first vector stored. */
  dimensions?: number;
  /** Rows to allocate up front (avoids regrowth when the catalog size is known). */
  initialCapacity?: number;
  /** Use the WebAssembly SIMD kernel where the runtime allows it. */
  accelerate?: boolean;
};

// Growth by 1/4 keeps slack (and so memory over the raw vectors) small; the
// extra copies are amortised and rare next to embedding calls.
const GROWTH = 1.25;

/**
 * Unit-normalised vectors in one contiguous `Float32Array`, row = slot, with
 * exact top-k by dot product (= cosine) through a bounded heap. An exact
 * linear scan is the right tool up to ~100k tools: with the SIMD kernel it
 * runs near memory bandwidth, and updates happen in place.
 *
 * @example
 * ```ts
 * const vectors = new VectorIndex({ dimensions: 3 });
 * vectors.set(0, [1, 0, 0]);
 * vectors.search([0.9, 0.1, 0], 5); // [{ slot: 0, score: 0.99… }]
 * ```
 */
export class VectorIndex {
  private dims: number | undefined;
  private storage: MatrixStorage | undefined;
  // Per slot: 0 empty, 1 a vector, 2 an approximate vector (from a snapshot) to rescore.
  private live: Uint8Array;
  private approximate = 0;
  private rows = 0; // one past the highest slot ever set
  private count = 0;
  private readonly initialCapacity: number;
  private readonly accelerate: boolean;

  constructor({ dimensions, initialCapacity = 0, accelerate = true }: VectorIndexOptions = {}) {
    if (dimensions !== undefined && !(Number.isInteger(dimensions) && dimensions > 0)) {
      throw new InvalidArgumentError({
        argument: 'dimensions',
        value: dimensions,
        message: 'expected a positive integer',
      });
    }
    this.initialCapacity = Math.max(0, Math.floor(initialCapacity));
    this.accelerate = accelerate;
    this.live = new Uint8Array(this.initialCapacity);
    if (dimensions !== undefined) this.init(dimensions);
  }

  /** Vector length, or undefined before the first vector. */
  get dimensions(): number | undefined {
    return this.dims;
  }

  /** Number of stored vectors. */
  get size(): number {
    return this.count;
  }

  /** Bytes held by the vector storage (for memory accounting). */
  get byteLength(): number {
    return (this.storage?.byteLength ?? 0) + this.live.byteLength;
  }

  /** Number of stored vectors that are approximate (see `set`). */
  get approximateCount(): number {
    return this.approximate;
  }

  /** Whether the vector at `slot` is approximate: its exact one should replace it before it is trusted. */
  isApproximate(slot: number): boolean {
    return this.live[slot] === 2;
  }

  /** Whether searches run on the WebAssembly SIMD kernel. */
  get accelerated(): boolean {
    return this.storage?.accelerated ?? false;
  }

  has(slot: number): boolean {
    return (this.live[slot] ?? 0) !== 0;
  }

  /** A copy of the (normalised) vector at `slot`, or undefined. */
  get(slot: number): Float32Array | undefined {
    if (!this.has(slot)) return undefined;
    return this.storage?.row(slot, this.dims as number);
  }

  /** Makes room for slots `0..capacity-1` without regrowth. */
  reserve(capacity: number): void {
    if (capacity <= this.live.length) return;
    // Storage first: when it cannot grow, the index stays as it was.
    this.storage?.grow(capacity);
    const live = new Uint8Array(capacity);
    live.set(this.live);
    this.live = live;
  }

  /**
   * Stores `vector` (normalised) at `slot`, replacing what was there. An `Int8Array` (a snapshot's
   * codes) is kept as int8, a quarter of the memory, with its scale. An `approximate` vector (from
   * a snapshot) ranks like any other; `isApproximate` tells which to rescore.
   */
  set(
    slot: number,
    vector: ArrayLike<number>,
    { approximate = false }: { /** Not the exact vector. */ approximate?: boolean } = {},
  ): void {
    if (!Number.isInteger(slot) || slot < 0) {
      throw new InvalidArgumentError({
        argument: 'slot',
        value: slot,
        message: 'expected a non-negative integer',
      });
    }
    this.checkVector(vector, `vector for slot ${slot}`);
    // int8 codes are always finite; the storage takes their norm where it copies them.
    const norm = vector instanceof Int8Array ? 0 : Math.sqrt(sumOfSquares(vector));
    if (!Number.isFinite(norm)) {
      throw new InvalidArgumentError({
        argument: `vector for slot ${slot}`,
        value: vector,
        message: 'contains NaN or Infinity',
      });
    }
    if (slot >= this.live.length) {
      this.reserve(
        Math.max(slot + 1, Math.ceil(this.live.length * GROWTH), this.initialCapacity, 16),
      );
    }
    const storage = this.storage as MatrixStorage;
    if (vector instanceof Int8Array) storage.setCodes(slot, vector);
    else storage.setFloats(slot, vector, norm === 0 ? 0 : 1 / norm); // a zero vector matches nothing
    if (!this.has(slot)) this.count++;
    if (this.live[slot] === 2) this.approximate--;
    this.live[slot] = approximate ? 2 : 1;
    if (approximate) this.approximate++;
    if (slot >= this.rows) this.rows = slot + 1;
  }

  delete(slot: number): boolean {
    if (!this.has(slot)) return false;
    if (this.live[slot] === 2) this.approximate--;
    this.live[slot] = 0;
    this.storage?.clear(slot);
    this.count--;
    return true;
  }

  /**
   * The `topK` slots most similar to `query` (cosine), best first; `accept`
   * filters slots and is only consulted for candidates that would make the cut.
   */
  search(
    query: ArrayLike<number>,
    topK: number,
    accept?: (slot: number) => boolean,
  ): { slot: number; score: number }[] {
    if (topK < 1 || this.count === 0) return [];
    const dims = this.checkVector(query, 'query');
    const storage = this.storage as MatrixStorage;
    const sum = sumOfSquares(query);
    if (!Number.isFinite(sum)) {
      throw new InvalidArgumentError({
        argument: 'query',
        value: query,
        message: 'contains NaN or Infinity',
      });
    }
    const q = new Float32Array(storage.stride);
    const scale = sum === 0 ? 0 : 1 / Math.sqrt(sum);
    for (let i = 0; i < dims; i++) q[i] = (query[i] as number) * scale;

    const scores = storage.scan(q, this.rows);
    const heap = new TopKHeap(topK);
    const live = this.live;
    for (let slot = 0; slot < this.rows; slot++) {
      const score = scores[slot] as number;
      if (live[slot] !== 0 && score >= heap.threshold && (accept === undefined || accept(slot)))
        heap.push(slot, score);
    }
    return heap.sorted().map(({ id, score }) => ({ slot: id, score }));
  }

  private init(dimensions: number): void {
    this.dims = dimensions;
    this.storage = new MatrixStorage({
      stride: strideFor(dimensions),
      capacity: this.live.length,
      accelerate: this.accelerate,
    });
  }

  private checkVector(vector: ArrayLike<number>, context: string): number {
    if (vector == null || typeof vector.length !== 'number') {
      throw new InvalidArgumentError({
        argument: context,
        value: vector,
        message: 'expected a vector',
      });
    }
    if (this.dims === undefined) {
      if (vector.length === 0)
        throw new InvalidArgumentError({
          argument: context,
          value: vector,
          message: 'empty vector',
        });
      this.init(vector.length);
    }
    if (vector.length !== this.dims) {
      throw new DimensionMismatchError({
        expected: this.dims as number,
        actual: vector.length,
        context,
      });
    }
    return this.dims as number;
  }
}

function sumOfSquares(vector: ArrayLike<number>): number {
  let sum = 0;
  for (let i = 0; i < vector.length; i++) sum += (vector[i] as number) * (vector[i] as number);
  return sum;
}
