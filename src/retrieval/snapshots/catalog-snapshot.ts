// snapshots/: a catalog's vectors and lexical analysis kept whole in the store: formats, chunked
// reads and writes, checks.
import { base64ByteLength, decodeBase64Into, encodeBase64 } from '../../util/base64.ts';
import { sha256Base64Url } from '../../util/sha256.ts';

/**
 * A whole catalog's vectors in a store, so a warm start reads them in one round trip instead of
 * one key per tool: the catalog's distinct keys (its tools' content hashes), sorted, identify it,
 * and their vectors are kept as int8 with one float32 scale per vector (a quarter of float32's
 * bytes, which is what a warm start waits for), in chunks of `SNAPSHOT_CHUNK_ROWS` vectors, one
 * store value each: `aitb-snap2|<catalog hash>|<dimensions>|<rows>|<total rows>|<chunk>|<model
 * id>|<the rows' scales (little-endian float32) then their int8 values>`, the payload as base64
 * text, or raw where the store keeps bytes (Redis, see `redisBytes`). The hash in
 * each chunk (not only in its key) means a chunk of another catalog of the same size, copied under
 * this key, is refused; chunks of the older `aitb-snap1` format read as misses. The vectors it
 * gives are approximate; the index replaces them with the exact ones (see `ApproximateVectors`,
 * which also drops a snapshot whose vectors turn out not to match).
 */
export type SnapshotChunk = string;

/** Vectors per store value: 256 vectors of 1,536 dimensions are about 0.5 MB of base64. */
export const SNAPSHOT_CHUNK_ROWS = 256;

const FORMAT = 'aitb-snap2';
// The encoder scales every nonzero vector so that its largest value is this code.
const LARGEST_CODE = 127;
const MAX_DIMENSIONS = 65_536;

/** A catalog as a snapshot sees it: its distinct keys in a fixed order, and their hash. */
export type SnapshotCatalog = { keys: string[]; hash: string; chunks: number };

/**
 * The distinct `keys` (each names one vector: a tool's content hash, or its embedding text),
 * sorted so the order tools arrive in does not matter, their SHA-256 (base64url), and how many
 * chunks their snapshot has.
 *
 * @example
 * ```ts
 * const { hash, chunks } = snapshotCatalog(tools.map(toolEmbeddingText));
 * ```
 */
export function snapshotCatalog(keys: readonly string[]): SnapshotCatalog {
  const sorted = [...new Set(keys)].sort();
  const hash = sha256Base64Url(sorted.map(key => `${key.length}:${key}`).join('\n'));
  return { keys: sorted, hash, chunks: Math.ceil(sorted.length / SNAPSHOT_CHUNK_ROWS) };
}

/**
 * Encodes the vectors of a catalog's keys (in `snapshotCatalog` order) as its chunks. Each
 * vector becomes int8 values with its own scale (largest magnitude / 127). `bytes` gives each chunk
 * as bytes, its payload raw (a quarter less to move than base64), for stores that keep bytes.
 */
export function encodeSnapshot(request: SnapshotRequest & { bytes?: false }): SnapshotChunk[];
export function encodeSnapshot(request: SnapshotRequest & { bytes: true }): Uint8Array[];
export function encodeSnapshot({
  modelId,
  hash,
  vectors,
  bytes: asBytes = false,
}: SnapshotRequest & { bytes?: boolean }): (SnapshotChunk | Uint8Array)[] {
  const dimensions = vectors[0]?.length ?? 0;
  const chunks: (SnapshotChunk | Uint8Array)[] = [];
  for (let first = 0; first < vectors.length; first += SNAPSHOT_CHUNK_ROWS) {
    const rows = Math.min(SNAPSHOT_CHUNK_ROWS, vectors.length - first);
    const bytes = new Uint8Array(rows * 4 + rows * dimensions);
    const scales = new Float32Array(bytes.buffer, 0, rows);
    const codes = new Int8Array(bytes.buffer, rows * 4, rows * dimensions);
    for (let r = 0; r < rows; r++) {
      const vector = vectors[first + r] as Float32Array;
      if (vector.length !== dimensions)
        throw new RangeError('snapshot vectors of different lengths');
      let largest = 0;
      for (let i = 0; i < dimensions; i++)
        largest = Math.max(largest, Math.abs(vector[i] as number));
      const scale = largest / LARGEST_CODE;
      scales[r] = scale;
      const inverse = scale === 0 ? 0 : 1 / scale;
      for (let i = 0; i < dimensions; i++) {
        codes[r * dimensions + i] = Math.round((vector[i] as number) * inverse);
      }
    }
    const chunk = first / SNAPSHOT_CHUNK_ROWS;
    const header = `${FORMAT}|${hash}|${dimensions}|${rows}|${vectors.length}|${chunk}|${modelId}|`;
    if (!asBytes) chunks.push(`${header}${encodeBase64(bytes)}`);
    else {
      const head = utf8.encode(header);
      const value = new Uint8Array(head.length + bytes.length);
      value.set(head);
      value.set(bytes, head.length);
      chunks.push(value);
    }
  }
  return chunks;
}

type SnapshotRequest = {
  /** The embedder's id, checked on read. */
  modelId: string;
  /** The catalog's hash (`snapshotCatalog`), checked on read. */
  hash: string;
  /** One per text, all of one length. */
  vectors: readonly Float32Array[];
};

const utf8 = new TextEncoder();
const utf8Text = new TextDecoder();

/** A decoded chunk: its scales and int8 values, or why it cannot be used. */
export type DecodedChunk =
  { dimensions: number; scales: Float32Array; codes: Int8Array } | { invalid: string };

/** What a chunk must be: the catalog, model and position it was read for. */
export type ExpectedChunk = {
  /** The embedder's id. */
  modelId: string;
  /** The catalog's hash (`snapshotCatalog`). */
  hash: string;
  /** Which chunk this should be. */
  chunk: number;
  /** Rows of the whole catalog. */
  total: number;
  /** Expected vector length, when known. */
  dimensions?: number | undefined;
};

/**
 * Decodes and checks one stored chunk, as text (`encodeSnapshot`) or as bytes (`encodeSnapshot({
 * bytes: true })`, or text read as bytes): format, catalog, model, position in the catalog, row
 * count and length, scales that are finite and positive, and rows whose largest code is 127, as the
 * encoder makes every nonzero vector (a row of zeros, or of small codes, was not written by it).
 * A raw payload is used in place, not copied.
 */
export function decodeSnapshotChunk(value: unknown, expected: ExpectedChunk): DecodedChunk {
  const text = typeof value === 'string';
  if (!(text || value instanceof Uint8Array)) return { invalid: 'not a snapshot chunk' };
  // The six fields before the model id are ASCII without '|', so they sit at the same offsets in
  // text and bytes (UTF-8, which every runtime decodes; what follows them may not be text at all).
  const head = text ? value.slice(0, 4096) : utf8Text.decode(value.subarray(0, 4096));
  const fields = head.split('|', 6);
  const modelAt = fields.join('|').length + 1;
  if (fields[0] !== FORMAT || fields.length < 6 || modelAt > head.length)
    return { invalid: 'not a snapshot chunk' };
  const [, hashText, dimensionsText, rowsText, totalText, chunkText] = fields as string[];
  if (hashText !== expected.hash) return { invalid: 'a chunk of another catalog' };
  const model = `${expected.modelId}|`;
  const modelBytes = text ? model.length : utf8.encode(model).length;
  const storedModel = text
    ? value.slice(modelAt, modelAt + model.length)
    : utf8Text.decode(value.subarray(modelAt, modelAt + modelBytes));
  if (storedModel !== model) {
    // Text ends its model id at the last '|' (base64 has none); a raw payload may hold any byte.
    return {
      invalid: text
        ? `made by ${value.slice(modelAt, value.lastIndexOf('|'))}`
        : 'made by another model',
    };
  }
  const length = Number(dimensionsText);
  if (!/^\d{1,5}$/.test(dimensionsText!) || length < 1 || length > MAX_DIMENSIONS)
    return { invalid: `bad dimensions ${dimensionsText}` };
  if (expected.dimensions !== undefined && length !== expected.dimensions)
    return { invalid: `${length} dimensions, expected ${expected.dimensions}` };
  const { chunk, total } = expected;
  const rows = Math.min(SNAPSHOT_CHUNK_ROWS, total - chunk * SNAPSHOT_CHUNK_ROWS);
  if (rowsText !== String(rows) || totalText !== String(total) || chunkText !== String(chunk))
    return { invalid: `chunk ${chunkText} of ${totalText} rows, expected ${chunk} of ${total}` };
  const byteLength = rows * 4 + rows * length;
  const payloadAt = modelAt + modelBytes;
  let bytes: Uint8Array;
  if (!text && value.length - payloadAt === byteLength) {
    bytes = value.subarray(payloadAt);
  } else {
    const base64 = text ? value.slice(payloadAt) : utf8Text.decode(value.subarray(payloadAt));
    if (base64ByteLength(base64) !== byteLength) return { invalid: 'wrong payload length' };
    bytes = new Uint8Array(byteLength);
    if (!decodeBase64Into(base64, bytes)) return { invalid: 'not base64' };
  }
  // The scales are copied: a payload read as bytes may sit at any offset, a float32 view cannot.
  const scales = new Float32Array(rows);
  new Uint8Array(scales.buffer).set(bytes.subarray(0, rows * 4));
  for (const scale of scales) {
    if (!(Number.isFinite(scale) && scale > 0)) return { invalid: 'a zero or non-finite scale' };
  }
  const codes = new Int8Array(bytes.buffer, bytes.byteOffset + rows * 4, rows * length);
  const largest = largestCodes(codes, length);
  if (largest !== LARGEST_CODE) return { invalid: `a row whose largest code is ${largest}` };
  return { dimensions: length, scales, codes };
}

// The largest magnitude of every row if they all share 127, else the first row's that differs.
// A row's largest is 127 when it holds 127 or -127 and no -128: the engine's own scans
// (`indexOf`) check that at about twice the speed of a loop here, which a warm start pays per value.
function largestCodes(codes: Int8Array, length: number): number {
  for (let start = 0; start < codes.length; start += length) {
    const row = codes.subarray(start, start + length);
    if (
      row.indexOf(-128) === -1 &&
      (row.indexOf(LARGEST_CODE) !== -1 || row.indexOf(-LARGEST_CODE) !== -1)
    )
      continue;
    let largest = 0;
    for (const code of row) largest = Math.max(largest, Math.abs(code));
    return largest;
  }
  return LARGEST_CODE;
}

/**
 * The int8 values of decoded chunks, one view per vector in catalog order, without copying: each
 * points the way its vector does (the scale only sets its length), which is all a cosine index
 * needs (it normalises what it stores).
 */
export function snapshotDirections(
  chunks: readonly { dimensions: number; scales: Float32Array; codes: Int8Array }[],
): Int8Array[] {
  const rows: Int8Array[] = [];
  for (const { dimensions, scales, codes } of chunks) {
    for (let r = 0; r < scales.length; r++)
      rows.push(codes.subarray(r * dimensions, (r + 1) * dimensions));
  }
  return rows;
}

/** Dequantized vectors of decoded chunks, in catalog order, as views of one buffer. */
export function snapshotVectors(
  chunks: readonly { dimensions: number; scales: Float32Array; codes: Int8Array }[],
): Float32Array[] {
  const dimensions = chunks[0]?.dimensions ?? 0;
  const total = chunks.reduce((sum, chunk) => sum + chunk.scales.length, 0);
  const values = new Float32Array(total * dimensions);
  const vectors: Float32Array[] = [];
  let row = 0;
  for (const { scales, codes } of chunks) {
    for (let r = 0; r < scales.length; r++, row++) {
      const scale = scales[r] as number;
      const offset = row * dimensions;
      for (let i = 0; i < dimensions; i++) {
        values[offset + i] = (codes[r * dimensions + i] as number) * scale;
      }
      vectors.push(values.subarray(offset, offset + dimensions));
    }
  }
  return vectors;
}
