// structures/: what searches run on: posting lists, a top-k heap, vector rows and the WASM dot-
// product scan.
import { DOT_SCAN_WASM_BASE64 } from './dot-scan-wasm.ts';

/**
 * Row storage for the vector index with one operation: the dot product of a query with every
 * row. Backed by WebAssembly memory and a SIMD kernel where the runtime allows compiling
 * WebAssembly (Node, browsers), where a row holds either float32 values or int8 codes with one
 * float32 scale (vectors read from a snapshot stay int8: a quarter of the memory, and a warm start
 * writes 1 byte per value instead of converting to 4); by an `ArrayBuffer` of float32 rows and a
 * JavaScript loop elsewhere (edge runtimes that forbid it). Rows are padded to a multiple of 16
 * values (the kernel's step); padding is written as zero, so it never changes a dot product.
 */
export class MatrixStorage {
  readonly stride: number;
  readonly accelerated: boolean;
  private rowCapacity = 0;
  // Whether the int8 region exists: it is only laid out once a row needs it, so an index of
  // float32 rows alone holds no int8 region at all.
  private withCodes = false;
  private views: Views;
  private readonly backend: Backend;
  private readonly maxBytes: number;

  constructor({
    stride,
    capacity,
    accelerate = true,
    maxBytes = MAX_WASM_BYTES,
  }: {
    /** Values per row, a multiple of `ROW_ALIGNMENT` (see `strideFor`). */
    stride: number;
    /** Rows to make room for. */
    capacity: number;
    /** Use the WebAssembly SIMD kernel where the runtime allows it. */
    accelerate?: boolean;
    /** The most WebAssembly memory to use (wasm32 addresses 4 GiB); for tests. */
    maxBytes?: number;
  }) {
    this.stride = stride;
    this.maxBytes = maxBytes;
    const module = accelerate ? compileKernel() : null;
    this.backend =
      module !== null && bytesFor(stride, capacity, false) <= maxBytes
        ? wasmBackend(new WebAssembly.Instance(module).exports as unknown as Kernel)
        : arrayBackend();
    this.accelerated = this.backend.kernel !== undefined;
    this.views = layout(this.backend.resize(bytesFor(stride, 0, false), 0), stride, 0, false);
    this.relayout(capacity, false);
  }

  get capacity(): number {
    return this.rowCapacity;
  }

  /** Bytes held by the storage (address space: rows never written take no memory). */
  get byteLength(): number {
    return this.backend.byteLength();
  }

  /** Makes room for `capacity` rows, keeping the existing ones. */
  grow(capacity: number): void {
    if (capacity <= this.rowCapacity) return;
    if (this.withCodes && !this.fits(capacity, true)) this.dropCodes();
    this.relayout(capacity, this.withCodes);
  }

  /** Stores `values[i] * scale` as float32 row `row`. */
  setFloats(row: number, values: ArrayLike<number>, scale: number): void {
    const { floats, kinds } = this.views;
    const offset = row * this.stride;
    for (let i = 0; i < values.length; i++) floats[offset + i] = (values[i] as number) * scale;
    // Grown memory keeps what the moved regions held there: padding must be written too.
    floats.fill(0, offset + values.length, offset + this.stride);
    kinds[row] = FLOATS;
  }

  /**
   * Stores int8 `codes` as row `row`, scaled to unit length (a row of zeros matches nothing). The
   * norm is summed where the codes land, by the kernel: a warm start stores a whole catalog so.
   */
  setCodes(row: number, codes: Int8Array): void {
    // Held as float32 without the kernel (an ArrayBuffer is allocated whole: int8 rows beside
    // float32 ones would only add to it) and past what WebAssembly memory addresses.
    const kernel = this.backend.kernel;
    if (kernel === undefined || (!this.withCodes && !this.fits(this.rowCapacity, true))) {
      this.setFloats(row, codes, unitScale(sumOfSquaredCodes(codes)));
      return;
    }
    if (!this.withCodes) this.relayout(this.rowCapacity, true);
    const { codes: target, kinds, scales } = this.views;
    const offset = row * this.stride;
    target.set(codes, offset);
    target.fill(0, offset + codes.length, offset + this.stride);
    scales[row] = unitScale(kernel.squares(target.byteOffset + offset, this.stride));
    kinds[row] = CODES;
  }

  /** Marks `row` empty (it scores 0 and is never read). */
  clear(row: number): void {
    this.views.kinds[row] = EMPTY;
  }

  /** A float32 copy of the first `length` values of `row` (int8 rows scaled), or undefined when empty. */
  row(row: number, length: number): Float32Array | undefined {
    const { floats, codes, kinds, scales } = this.views;
    const offset = row * this.stride;
    if (kinds[row] === FLOATS) return floats.slice(offset, offset + length);
    if (kinds[row] !== CODES) return undefined;
    const values = new Float32Array(length);
    const scale = scales[row] as number;
    for (let i = 0; i < length; i++) values[i] = (codes[offset + i] as number) * scale;
    return values;
  }

  /** Dot products of `query` (length `stride`) with rows `0..rows-1`; the result is scratch, valid until the next call. */
  scan(query: Float32Array, rows: number): Float32Array {
    const views = this.views;
    views.query.set(query);
    const kernel = this.backend.kernel;
    if (kernel === undefined) {
      scanInJs(views, this.stride, rows);
    } else {
      const { floats, codes, kinds, scales, query, scores } = views;
      kernel.scan(
        floats.byteOffset,
        codes.byteOffset,
        kinds.byteOffset,
        scales.byteOffset,
        rows,
        this.stride,
        query.byteOffset,
        scores.byteOffset,
      );
    }
    return views.scores;
  }

  private fits(capacity: number, withCodes: boolean): boolean {
    return !this.accelerated || bytesFor(this.stride, capacity, withCodes) <= this.maxBytes;
  }

  // Turns every int8 row into float32 and removes the int8 region.
  private dropCodes(): void {
    const { codes, kinds, scales } = this.views;
    for (let row = 0; row < this.rowCapacity; row++) {
      if (kinds[row] !== CODES) continue;
      const offset = row * this.stride;
      this.setFloats(row, codes.subarray(offset, offset + this.stride), scales[row] as number);
    }
    this.relayout(this.rowCapacity, false);
  }

  // Lays the regions out again for `capacity` rows, keeping every row. The float32 rows sit at
  // offset 0, where growing WebAssembly memory keeps them; the regions after them move.
  private relayout(capacity: number, withCodes: boolean): void {
    const old = this.views;
    const kept = {
      kinds: old.kinds.slice(),
      scales: old.scales.slice(),
      codes: this.withCodes && withCodes ? old.codes.slice() : undefined,
    };
    const bytes = bytesFor(this.stride, capacity, withCodes);
    if (!this.fits(capacity, withCodes))
      throw new RangeError(`vector index over ${this.maxBytes} bytes`);
    const buffer = this.backend.resize(bytes, old.floats.byteLength);
    this.views = layout(buffer, this.stride, capacity, withCodes);
    // Rows past the old capacity are empty, whatever the moved regions left in their kind bytes.
    this.views.kinds.fill(EMPTY);
    this.views.kinds.set(kept.kinds);
    this.views.scales.set(kept.scales);
    if (kept.codes) this.views.codes.set(kept.codes);
    this.rowCapacity = capacity;
    this.withCodes = withCodes;
  }
}

export const ROW_ALIGNMENT = 16;
const EMPTY = 0;
const FLOATS = 1;
const CODES = 2;

// 1 / the norm whose square is `squares`; 0 for a zero vector, which then matches nothing.
const unitScale = (squares: number): number => (squares === 0 ? 0 : 1 / Math.sqrt(squares));

// Its own loop: one element type keeps V8's loop monomorphic.
function sumOfSquaredCodes(codes: Int8Array): number {
  let sum = 0;
  for (let i = 0; i < codes.length; i++) sum += (codes[i] as number) * (codes[i] as number);
  return sum;
}

const PAGE = 65_536;
// wasm32 addresses 4 GiB; leave headroom.
const MAX_WASM_BYTES = 3.5 * 2 ** 30;

/** Rounds a vector length up to the storage stride. */
export function strideFor(dimensions: number): number {
  return Math.ceil(dimensions / ROW_ALIGNMENT) * ROW_ALIGNMENT;
}

type Kernel = {
  memory: WebAssembly.Memory;
  scan: (
    floats: number,
    codes: number,
    kinds: number,
    scales: number,
    rows: number,
    stride: number,
    query: number,
    out: number,
  ) => void;
  squares: (codes: number, length: number) => number;
};

type Views = {
  floats: Float32Array;
  codes: Int8Array;
  kinds: Uint8Array;
  scales: Float32Array;
  query: Float32Array;
  scores: Float32Array;
};

type Backend = {
  kernel: Kernel | undefined;
  byteLength(): number;
  /** A buffer of at least `bytes`, whose first `keep` bytes are those of the previous one. */
  resize(bytes: number, keep: number): ArrayBuffer;
};

let kernelModule: WebAssembly.Module | null | undefined;

function compileKernel(): WebAssembly.Module | null {
  if (kernelModule === undefined) {
    try {
      kernelModule = new WebAssembly.Module(
        Uint8Array.from(atob(DOT_SCAN_WASM_BASE64), c => c.charCodeAt(0)),
      );
    } catch {
      kernelModule = null; // no WebAssembly, no SIMD, or compilation forbidden
    }
  }
  return kernelModule;
}

const align = (bytes: number) => Math.ceil(bytes / 16) * 16;

// Layout: [floats][codes][kinds][scales][query][scores], each 16-byte aligned.
function regions(stride: number, capacity: number, withCodes: boolean) {
  const floats = capacity * stride * 4;
  const codes = withCodes ? capacity * stride : 0;
  const kinds = align(capacity);
  const scales = align(capacity * 4);
  return { floats, codes, kinds, scales, query: stride * 4, scores: align(capacity * 4) };
}

function bytesFor(stride: number, capacity: number, withCodes: boolean): number {
  return Object.values(regions(stride, capacity, withCodes)).reduce((a, b) => a + b, 0);
}

function layout(buffer: ArrayBuffer, stride: number, capacity: number, withCodes: boolean): Views {
  const sizes = regions(stride, capacity, withCodes);
  let at = 0;
  const next = (bytes: number) => ((at += bytes), at - bytes);
  return {
    floats: new Float32Array(buffer, next(sizes.floats), capacity * stride),
    codes: new Int8Array(buffer, next(sizes.codes), withCodes ? capacity * stride : 0),
    kinds: new Uint8Array(buffer, next(sizes.kinds), capacity),
    scales: new Float32Array(buffer, next(sizes.scales), capacity),
    query: new Float32Array(buffer, next(sizes.query), stride),
    scores: new Float32Array(buffer, next(sizes.scores), capacity),
  };
}

function wasmBackend(kernel: Kernel): Backend {
  const memory = kernel.memory;
  return {
    kernel,
    byteLength: () => memory.buffer.byteLength,
    resize(bytes) {
      // Growing keeps every byte in place (and the float32 rows at offset 0).
      if (bytes > memory.buffer.byteLength)
        memory.grow(Math.ceil((bytes - memory.buffer.byteLength) / PAGE));
      return memory.buffer;
    },
  };
}

function arrayBackend(): Backend {
  let buffer = new ArrayBuffer(0);
  return {
    kernel: undefined,
    byteLength: () => buffer.byteLength,
    resize(bytes, keep) {
      if (bytes === buffer.byteLength) return buffer;
      const next = new ArrayBuffer(bytes);
      new Uint8Array(next).set(new Uint8Array(buffer, 0, Math.min(keep, bytes)));
      buffer = next;
      return buffer;
    },
  };
}

// Unrolled by four: V8 keeps the accumulators in registers.
function scanInJs(views: Views, stride: number, rows: number): void {
  const { floats, kinds, query, scores } = views;
  for (let r = 0, o = 0; r < rows; r++, o += stride) {
    if (kinds[r] !== FLOATS) {
      scores[r] = 0;
      continue;
    }
    let s0 = 0;
    let s1 = 0;
    let s2 = 0;
    let s3 = 0;
    for (let i = 0; i < stride; i += 4) {
      s0 += (floats[o + i] as number) * (query[i] as number);
      s1 += (floats[o + i + 1] as number) * (query[i + 1] as number);
      s2 += (floats[o + i + 2] as number) * (query[i + 2] as number);
      s3 += (floats[o + i + 3] as number) * (query[i + 3] as number);
    }
    scores[r] = s0 + s1 + s2 + s3;
  }
}
