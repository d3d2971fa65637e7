/**
 * The cosine of two vectors' angle (0 when either is zero).
 *
 * @example
 * ```ts
 * cosine(Float32Array.of(1, 0), Float32Array.of(1, 1)); // 0.7071...
 * ```
 */
export function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let dot = 0;
  let aa = 0;
  let bb = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as number;
    const y = b[i] as number;
    dot += x * y;
    aa += x * x;
    bb += y * y;
  }
  return aa === 0 || bb === 0 ? 0 : dot / Math.sqrt(aa * bb);
}

/**
 * A learned tool's dense vector: its description's and its requests' mean
 * vector, each normalised, added with `weight` for the usage side. A request
 * worded unlike the description then lands near the tool too.
 *
 * @example
 * ```ts
 * combineVectors(descriptionVector, usage.vector.values, 1);
 * ```
 */
export function combineVectors(
  description: ArrayLike<number>,
  usage: ArrayLike<number>,
  weight: number,
): Float32Array {
  const d = 1 / (norm(description) || 1);
  const u = weight / (norm(usage) || 1);
  const out = new Float32Array(description.length);
  for (let i = 0; i < out.length; i++)
    out[i] = (description[i] as number) * d + (usage[i] as number) * u;
  return out;
}

/**
 * `vector` scaled to length 1 (a zero vector stays zero).
 *
 * @example
 * ```ts
 * normalized(Float32Array.of(3, 4)); // Float32Array [0.6, 0.8]
 * ```
 */
export function normalized(vector: Float32Array): Float32Array {
  const scale = 1 / (norm(vector) || 1);
  return vector.map(value => value * scale);
}

function norm(vector: ArrayLike<number>): number {
  let sum = 0;
  for (let i = 0; i < vector.length; i++) sum += (vector[i] as number) * (vector[i] as number);
  return Math.sqrt(sum);
}
