import { DOT_SCAN_WASM_BASE64 } from './dot-scan-wasm.ts';

/**
 * Row-major float32 storage for the vector index with one operation: the dot
 * product of a query with every row. Backed by WebAssembly memory and a SIMD
 * kernel where the runtime allows compiling WebAssembly (Node, browsers), and
 * by a plain `Float32Array` with a JavaScript loop elsewhere (edge runtimes
 * that forbid it). Rows are padded to a multiple of 16 floats (the kernel's
 * step); padding is zero, so it never changes a dot product.
 */
export interface MatrixStorage {
  /** All rows, `capacity * stride` floats; the view is replaced when storage grows. */
  readonly data: Float32Array;
  readonly capacity: number;
  readonly stride: number;
  readonly byteLength: number;
  readonly accelerated: boolean;
  /** Makes room for `capacity` rows, keeping the existing ones. */
  grow(capacity: number): void;
  /** Dot products of `query` (length `stride`) with rows `0..rows-1`; the result is scratch, valid until the next call. */
  scan(query: Float32Array, rows: number): Float32Array;
}

export const ROW_ALIGNMENT = 16;
const PAGE = 65_536;
// wasm32 addresses 4 GiB; leave headroom for the query and score regions.
const MAX_WASM_BYTES = 3.5 * 2 ** 30;

type Kernel = {
  memory: WebAssembly.Memory;
  scan: (data: number, rows: number, stride: number, query: number, out: number) => void;
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

/** Rounds a vector length up to the storage stride. */
export function strideFor(dimensions: number): number {
  return Math.ceil(dimensions / ROW_ALIGNMENT) * ROW_ALIGNMENT;
}

/** Creates storage for `capacity` rows of `stride` floats, SIMD-accelerated when possible. */
export function createMatrixStorage({
  stride,
  capacity,
  accelerate = true,
}: {
  stride: number;
  capacity: number;
  accelerate?: boolean;
}): MatrixStorage {
  const module = accelerate ? compileKernel() : null;
  if (module !== null && bytesFor(stride, capacity) <= MAX_WASM_BYTES) {
    return new WasmStorage(
      new WebAssembly.Instance(module).exports as unknown as Kernel,
      stride,
      capacity,
    );
  }
  return new ArrayStorage(stride, capacity);
}

function bytesFor(stride: number, capacity: number): number {
  return (capacity * stride + stride + capacity) * 4;
}

// Layout: [rows: capacity*stride][query: stride][scores: capacity]. Rows sit at
// offset 0 so growing never moves them; the scratch regions after them do.
class WasmStorage implements MatrixStorage {
  readonly accelerated = true;
  data: Float32Array;
  capacity = 0;
  private query: Float32Array;
  private scores: Float32Array;
  private readonly kernel: Kernel;
  readonly stride: number;

  constructor(kernel: Kernel, stride: number, capacity: number) {
    this.kernel = kernel;
    this.stride = stride;
    this.data = this.query = this.scores = new Float32Array(0);
    this.grow(capacity);
  }

  get byteLength(): number {
    return this.kernel.memory.buffer.byteLength;
  }

  grow(capacity: number): void {
    if (capacity <= this.capacity && this.data.length > 0) return;
    const needed = bytesFor(this.stride, capacity);
    if (needed > MAX_WASM_BYTES) throw new RangeError(`vector index over ${MAX_WASM_BYTES} bytes`);
    const memory = this.kernel.memory;
    if (needed > memory.buffer.byteLength)
      memory.grow(Math.ceil((needed - memory.buffer.byteLength) / PAGE));
    this.capacity = Math.max(capacity, this.capacity);
    const rowFloats = this.capacity * this.stride;
    this.data = new Float32Array(memory.buffer, 0, rowFloats);
    this.query = new Float32Array(memory.buffer, rowFloats * 4, this.stride);
    this.scores = new Float32Array(memory.buffer, (rowFloats + this.stride) * 4, this.capacity);
  }

  scan(query: Float32Array, rows: number): Float32Array {
    this.query.set(query);
    this.kernel.scan(0, rows, this.stride, this.query.byteOffset, this.scores.byteOffset);
    return this.scores;
  }
}

class ArrayStorage implements MatrixStorage {
  readonly accelerated = false;
  data: Float32Array;
  capacity: number;
  private scores: Float32Array;
  readonly stride: number;

  constructor(stride: number, capacity: number) {
    this.stride = stride;
    this.capacity = capacity;
    this.data = new Float32Array(capacity * stride);
    this.scores = new Float32Array(capacity);
  }

  get byteLength(): number {
    return this.data.byteLength + this.scores.byteLength;
  }

  grow(capacity: number): void {
    if (capacity <= this.capacity) return;
    const data = new Float32Array(capacity * this.stride);
    data.set(this.data);
    this.data = data;
    this.scores = new Float32Array(capacity);
    this.capacity = capacity;
  }

  // Unrolled by four: V8 keeps the accumulators in registers.
  scan(query: Float32Array, rows: number): Float32Array {
    const { data, stride, scores } = this;
    for (let r = 0, o = 0; r < rows; r++, o += stride) {
      let s0 = 0;
      let s1 = 0;
      let s2 = 0;
      let s3 = 0;
      for (let i = 0; i < stride; i += 4) {
        s0 += (data[o + i] as number) * (query[i] as number);
        s1 += (data[o + i + 1] as number) * (query[i + 1] as number);
        s2 += (data[o + i + 2] as number) * (query[i + 2] as number);
        s3 += (data[o + i + 3] as number) * (query[i + 3] as number);
      }
      scores[r] = s0 + s1 + s2 + s3;
    }
    return scores;
  }
}
