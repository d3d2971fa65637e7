/**
 * One vector per text from a batch's token vectors (`[rows, width, dimensions]`, rows padded to
 * `width`): the mean over each text's real tokens, or its first (`[CLS]`) token's, then scaled
 * to unit length when `normalize` (as sentence-transformers' Pooling and Normalize modules do).
 *
 * @example
 * ```ts
 * poolTokens({ hidden, lengths: [5, 3], width: 5, dimensions: 384, pooling: 'mean', normalize: true });
 * ```
 */
export function poolTokens({
  hidden,
  lengths,
  width,
  dimensions,
  pooling,
  normalize,
}: {
  /** The graph's token vectors, row after row. */
  hidden: Float32Array;
  /** Each text's real token count (the rest of its row is padding). */
  lengths: readonly number[];
  /** The padded row length, in tokens. */
  width: number;
  /** Values per token vector. */
  dimensions: number;
  pooling: 'mean' | 'cls';
  normalize: boolean;
}): Float32Array[] {
  return lengths.map((length, row) => {
    const vector = new Float32Array(dimensions);
    const first = row * width * dimensions;
    const tokens = pooling === 'cls' ? 1 : length;
    for (let t = 0; t < tokens; t++) {
      const at = first + t * dimensions;
      for (let d = 0; d < dimensions; d++) vector[d]! += hidden[at + d]!;
    }
    let norm = 0;
    for (let d = 0; d < dimensions; d++) {
      vector[d]! /= tokens;
      norm += vector[d]! * vector[d]!;
    }
    if (normalize && norm > 0) {
      const scale = 1 / Math.sqrt(norm);
      for (let d = 0; d < dimensions; d++) vector[d]! *= scale;
    }
    return vector;
  });
}
