import type { ToolUsage } from './usage-record.ts';

/**
 * The lexical side of a tool's usage: each term's share of the learned
 * requests that used it (0..1) and the mean request length. The usage field
 * thus reads like one typical request, however many were learned, so a busy
 * tool does not outscore a quiet one on volume alone.
 *
 * @example
 * ```ts
 * usageBag({ requests: [['rain', 'pari'], ['rain']], updatedAt: 0 });
 * // { terms: Map { 'rain' => 1, 'pari' => 0.5 }, length: 1.5 }
 * ```
 */
export function usageBag(usage: ToolUsage | undefined): {
  terms: Map<string, number>;
  length: number;
} {
  const terms = new Map<string, number>();
  const requests = usage?.requests ?? [];
  if (requests.length === 0) return { terms, length: 0 };
  let total = 0;
  for (const request of requests) {
    total += request.length;
    for (const term of new Set(request)) terms.set(term, (terms.get(term) ?? 0) + 1);
  }
  for (const [term, count] of terms) terms.set(term, count / requests.length);
  return { terms, length: total / requests.length };
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
  description: Float32Array,
  usage: Float32Array,
  weight: number,
): Float32Array {
  const d = 1 / (norm(description) || 1);
  const u = weight / (norm(usage) || 1);
  const out = new Float32Array(description.length);
  for (let i = 0; i < out.length; i++)
    out[i] = (description[i] as number) * d + (usage[i] as number) * u;
  return out;
}

/** `vector` scaled to length 1 (a zero vector stays zero). */
export function normalized(vector: Float32Array): Float32Array {
  const scale = 1 / (norm(vector) || 1);
  return vector.map(value => value * scale);
}

function norm(vector: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < vector.length; i++) sum += (vector[i] as number) * (vector[i] as number);
  return Math.sqrt(sum);
}
