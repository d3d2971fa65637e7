import { base64ByteLength, decodeBase64Into, encodeBase64 } from '../../util/base64.ts';

/**
 * What a store holds for one embedded text, as one string:
 * `aitb-emb1|<dimensions>|<model id>|<base64 of the little-endian float32 values>`.
 * A string rather than a JSON object: unstorage passes it through untouched
 * (JSON values go through a prototype-pollution scan and `JSON.parse`, which
 * cost more than the rest of loading a warm index), and base64 is a quarter
 * of the size of a JSON array of numbers. The model id and dimensions travel
 * with the vector, so a vector of another model or shape is never used.
 */
export type EmbeddingRecord = string;

/** A decoded record, or why it cannot be used. */
export type DecodedRecord = { vector: Float32Array } | { invalid: string };

const FORMAT = 'aitb-emb1';
// Larger than any embedding model's output; a corrupt length field stays cheap to reject.
const MAX_DIMENSIONS = 65_536;

/** Encodes a vector the embedder made. */
export function encodeEmbeddingRecord(model: string, vector: Float32Array): EmbeddingRecord {
  const bytes = new Uint8Array(vector.buffer, vector.byteOffset, vector.byteLength);
  return `${FORMAT}|${vector.length}|${model}|${encodeBase64(bytes)}`;
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
  if (typeof value !== 'string' || !value.startsWith(`${FORMAT}|`))
    return { invalid: 'not an embedding record' };
  const afterLength = value.indexOf('|', FORMAT.length + 1);
  const beforeVector = value.lastIndexOf('|'); // base64 has no '|'; a model id may
  if (afterLength < 0 || beforeVector <= afterLength) return { invalid: 'not an embedding record' };
  const stored = value.slice(afterLength + 1, beforeVector);
  if (stored !== model) return { invalid: `made by ${stored}` };
  const lengthText = value.slice(FORMAT.length + 1, afterLength);
  const length = /^\d{1,5}$/.test(lengthText) ? Number(lengthText) : Number.NaN;
  if (!(length >= 1 && length <= MAX_DIMENSIONS))
    return { invalid: `bad dimensions ${lengthText}` };
  if (dimensions !== undefined && length !== dimensions)
    return { invalid: `${length} dimensions, expected ${dimensions}` };
  const base64 = value.slice(beforeVector + 1);
  const byteLength = base64ByteLength(base64);
  if (byteLength !== length * 4) return { invalid: `${byteLength} bytes for ${length} dimensions` };
  // Decoded straight into the vector's own memory: no intermediate copy.
  const vector = new Float32Array(length);
  if (!decodeBase64Into(base64, new Uint8Array(vector.buffer))) return { invalid: 'not base64' };
  let sum = 0;
  for (let i = 0; i < vector.length; i++) sum += (vector[i] as number) * (vector[i] as number);
  if (!Number.isFinite(sum)) return { invalid: 'NaN or Infinity in the vector' };
  if (sum === 0) return { invalid: 'a zero vector' };
  return { vector };
}
