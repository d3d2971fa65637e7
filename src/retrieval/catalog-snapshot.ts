import { base64ByteLength, decodeBase64Into, encodeBase64 } from '../util/base64.ts';
import { sha256Base64Url } from '../util/sha256.ts';

/**
 * A whole catalog's vectors in a store, so a warm start reads them in one round trip instead of
 * one key per tool: the catalog's distinct embedding texts, sorted, identify it (`catalogHash`),
 * and their vectors are kept as int8 with one float32 scale per vector (a quarter of float32's
 * bytes, which is what a warm start waits for), in chunks of `SNAPSHOT_CHUNK_ROWS` vectors, one
 * store value each: `aitb-snap2|<catalog hash>|<dimensions>|<rows>|<total rows>|<chunk>|<model
 * id>|<base64 of the rows' scales (little-endian float32) then their int8 values>`. The hash in
 * each chunk (not only in its key) means a chunk of another catalog of the same size, copied under
 * this key, is refused; chunks of the older `aitb-snap1` format read as misses. The vectors it
 * gives are approximate; the index rescores its top candidates with the exact ones (see
 * `rescoreCandidates`, which also drops a snapshot whose vectors turn out not to match).
 */
export type SnapshotChunk = string;

/** Vectors per store value: 256 vectors of 1,536 dimensions are about 0.5 MB of base64. */
export const SNAPSHOT_CHUNK_ROWS = 256;

const FORMAT = 'aitb-snap2';
// The encoder scales every nonzero vector so that its largest value is this code.
const LARGEST_CODE = 127;
const MAX_DIMENSIONS = 65_536;

/** A catalog as a snapshot sees it: its distinct texts in a fixed order, and their hash. */
export type SnapshotCatalog = { texts: string[]; hash: string; chunks: number };

/**
 * The distinct `texts`, sorted (so the order tools arrive in does not matter), their SHA-256
 * (base64url), and how many chunks their snapshot has.
 *
 * @example
 * ```ts
 * const { hash, chunks } = snapshotCatalog(tools.map(toolEmbeddingText));
 * ```
 */
export function snapshotCatalog(texts: readonly string[]): SnapshotCatalog {
  const sorted = [...new Set(texts)].sort();
  const hash = sha256Base64Url(sorted.map(text => `${text.length}:${text}`).join('\n'));
  return { texts: sorted, hash, chunks: Math.ceil(sorted.length / SNAPSHOT_CHUNK_ROWS) };
}

/**
 * Encodes the vectors of a catalog's texts (in `snapshotCatalog` order) as its chunks. Each
 * vector becomes int8 values with its own scale (largest magnitude / 127).
 */
export function encodeSnapshot({
  modelId,
  hash,
  vectors,
}: {
  /** The embedder's id, checked on read. */
  modelId: string;
  /** The catalog's hash (`snapshotCatalog`), checked on read. */
  hash: string;
  /** One per text, all of one length. */
  vectors: readonly Float32Array[];
}): SnapshotChunk[] {
  const dimensions = vectors[0]?.length ?? 0;
  const chunks: SnapshotChunk[] = [];
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
    chunks.push(
      `${FORMAT}|${hash}|${dimensions}|${rows}|${vectors.length}|${chunk}|${modelId}|${encodeBase64(bytes)}`,
    );
  }
  return chunks;
}

/** A decoded chunk: its scales and int8 values, or why it cannot be used. */
export type DecodedChunk =
  { dimensions: number; scales: Float32Array; codes: Int8Array } | { invalid: string };

/**
 * Decodes and checks one stored chunk: format, catalog, model, position in the catalog, row count
 * and length, scales that are finite and positive, and rows whose largest code is 127, as the
 * encoder makes every nonzero vector (a row of zeros, or of small codes, was not written by it).
 */
export function decodeSnapshotChunk(
  value: unknown,
  {
    modelId,
    hash,
    chunk,
    total,
    dimensions,
  }: {
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
  },
): DecodedChunk {
  if (typeof value !== 'string' || !value.startsWith(`${FORMAT}|`))
    return { invalid: 'not a snapshot chunk' };
  const fields = value.split('|', 7);
  const beforePayload = value.lastIndexOf('|');
  const headerLength = fields.slice(0, 6).join('|').length + 1;
  if (fields.length < 7 || beforePayload < headerLength) return { invalid: 'not a snapshot chunk' };
  const [, hashText, dimensionsText, rowsText, totalText, chunkText] = fields as [
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  if (hashText !== hash) return { invalid: 'a chunk of another catalog' };
  const stored = value.slice(headerLength, beforePayload);
  if (stored !== modelId) return { invalid: `made by ${stored}` };
  const length = Number(dimensionsText);
  if (!/^\d{1,5}$/.test(dimensionsText) || length < 1 || length > MAX_DIMENSIONS)
    return { invalid: `bad dimensions ${dimensionsText}` };
  if (dimensions !== undefined && length !== dimensions)
    return { invalid: `${length} dimensions, expected ${dimensions}` };
  const rows = Math.min(SNAPSHOT_CHUNK_ROWS, total - chunk * SNAPSHOT_CHUNK_ROWS);
  if (rowsText !== String(rows) || totalText !== String(total) || chunkText !== String(chunk))
    return { invalid: `chunk ${chunkText} of ${totalText} rows, expected ${chunk} of ${total}` };
  const base64 = value.slice(beforePayload + 1);
  const byteLength = rows * 4 + rows * length;
  if (base64ByteLength(base64) !== byteLength) return { invalid: 'wrong payload length' };
  const bytes = new Uint8Array(byteLength);
  if (!decodeBase64Into(base64, bytes)) return { invalid: 'not base64' };
  const scales = new Float32Array(bytes.buffer, 0, rows);
  for (const scale of scales) {
    if (!(Number.isFinite(scale) && scale > 0)) return { invalid: 'a zero or non-finite scale' };
  }
  const codes = new Int8Array(bytes.buffer, rows * 4);
  for (let r = 0; r < rows; r++) {
    let largest = 0;
    for (let i = r * length; i < (r + 1) * length; i++) {
      const code = codes[i] as number;
      if (code > largest) largest = code;
      else if (-code > largest) largest = -code;
    }
    if (largest !== LARGEST_CODE) return { invalid: `a row whose largest code is ${largest}` };
  }
  return { dimensions: length, scales, codes };
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
