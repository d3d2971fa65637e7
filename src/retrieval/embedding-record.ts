/**
 * What a store holds for one embedded text: the vector (base64 of its
 * little-endian float32 bytes, a quarter of the size of a JSON array) and what
 * made it, so a vector of another model or shape is never used.
 */
export type EmbeddingRecord = {
  /** The embedder's id, e.g. `openai.embedding:text-embedding-3-small`. */
  model: string;
  /** Vector length. */
  dimensions: number;
  /** Base64 of the float32 values, little-endian. */
  vector: string;
};

/** A decoded record, or why it cannot be used. */
export type DecodedRecord = { vector: Float32Array } | { invalid: string };

// Larger than any embedding model's output; a corrupt length field stays cheap to reject.
const MAX_DIMENSIONS = 65_536;

/** Encodes a vector the embedder made. */
export function encodeEmbeddingRecord(model: string, vector: Float32Array): EmbeddingRecord {
  const bytes = Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
  return { model, dimensions: vector.length, vector: bytes.toString('base64') };
}

/**
 * Decodes and checks a stored value: it must come from `model`, hold exactly
 * `dimensions` finite numbers (when given) and not be all zeros.
 */
export function decodeEmbeddingRecord(
  value: unknown,
  model: string,
  dimensions?: number,
): DecodedRecord {
  if (typeof value !== 'object' || value === null) return { invalid: 'not a record' };
  const record = value as Partial<EmbeddingRecord>;
  if (record.model !== model) return { invalid: `made by ${String(record.model)}` };
  const length = record.dimensions;
  if (!Number.isInteger(length) || (length as number) < 1 || (length as number) > MAX_DIMENSIONS)
    return { invalid: `bad dimensions ${String(length)}` };
  if (dimensions !== undefined && length !== dimensions)
    return { invalid: `${length} dimensions, expected ${dimensions}` };
  if (typeof record.vector !== 'string') return { invalid: 'no vector' };
  const byteLength = Buffer.byteLength(record.vector, 'base64');
  if (byteLength !== (length as number) * 4)
    return { invalid: `${byteLength} bytes for ${length} dimensions` };
  // Decoded straight into the vector's own memory: no intermediate Buffer to copy from.
  const vector = new Float32Array(length as number);
  if (Buffer.from(vector.buffer).write(record.vector, 'base64') !== byteLength)
    return { invalid: 'not base64' };
  let sum = 0;
  for (let i = 0; i < vector.length; i++) sum += (vector[i] as number) * (vector[i] as number);
  if (!Number.isFinite(sum)) return { invalid: 'NaN or Infinity in the vector' };
  if (sum === 0) return { invalid: 'a zero vector' };
  return { vector };
}
