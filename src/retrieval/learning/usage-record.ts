import { decodeEmbeddingRecord, encodeEmbeddingRecord } from '../store/embedding-record.ts';

/**
 * What the index has learned about one tool from the requests it served. By
 * default only index terms are kept (stemmed words, stop words dropped), never
 * the request's text; `texts` exists only when the app opted in.
 */
export type ToolUsage = {
  /** The terms of each learned request, oldest first. */
  requests: string[][];
  /** The learned requests' own text, oldest first (only with `keepText`). */
  texts?: string[];
  /** The mean of the learned requests' embeddings, and the model that made them. */
  vector?: { modelId: string; count: number; values: Float32Array };
  /** When the record last changed (ms since the epoch). */
  updatedAt: number;
};

/** Limits a record is held to, on write and on read (another replica may have other ones). */
export type UsageLimits = { maxRequests: number };

/** A decoded record, or why it cannot be used. */
export type DecodedUsage = { usage: ToolUsage } | { invalid: string };

const FORMAT = 'aitb-use1';
/** Terms kept per request: a pasted document must not become a tool's vocabulary. */
export const MAX_TERMS_PER_REQUEST = 32;
const MAX_TERM_LENGTH = 64;
const MAX_TEXT_LENGTH = 2_000;
const TERM = /^[\p{L}\p{N}]+$/u;

/**
 * Encodes a record as one string, `aitb-use1|<JSON>`: a string, so unstorage
 * passes it through untouched, and a format tag, so a value of anything else
 * under the same key is never mistaken for one. The vector travels as an
 * embedding record (model id, dimensions, base64).
 */
export function encodeUsageRecord(usage: ToolUsage): string {
  return `${FORMAT}|${JSON.stringify({
    r: usage.requests,
    ...(usage.texts ? { t: usage.texts } : {}),
    ...(usage.vector
      ? {
          v: {
            n: usage.vector.count,
            e: encodeEmbeddingRecord(usage.vector.modelId, usage.vector.values),
          },
        }
      : {}),
    u: usage.updatedAt,
  })}`;
}

/**
 * Decodes and checks a stored value: every term a short word, at most
 * `maxRequests` requests (the newest kept), a vector that passes the embedding
 * checks (finite, not all zeros, its length as declared).
 */
export function decodeUsageRecord(value: unknown, { maxRequests }: UsageLimits): DecodedUsage {
  if (typeof value !== 'string' || !value.startsWith(`${FORMAT}|`))
    return { invalid: 'not a usage record' };
  let raw: unknown;
  try {
    raw = JSON.parse(value.slice(FORMAT.length + 1));
  } catch {
    return { invalid: 'not JSON after the format tag' };
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
    return { invalid: 'not an object' };
  const { r, t, v, u } = raw as Record<string, unknown>;
  if (!Array.isArray(r)) return { invalid: '"r" (requests) is not an array' };
  const requests: string[][] = [];
  for (const request of r.slice(-maxRequests)) {
    if (!Array.isArray(request)) return { invalid: 'a request is not an array of terms' };
    if (!request.every(term => isTerm(term))) return { invalid: 'a term is not a word' };
    requests.push((request as string[]).slice(0, MAX_TERMS_PER_REQUEST));
  }
  const usage: ToolUsage = {
    requests,
    updatedAt: typeof u === 'number' && Number.isFinite(u) ? u : 0,
  };
  if (t !== undefined) {
    if (!Array.isArray(t) || !t.every(text => typeof text === 'string'))
      return { invalid: '"t" (texts) is not an array of strings' };
    usage.texts = (t as string[]).slice(-maxRequests).map(text => text.slice(0, MAX_TEXT_LENGTH));
  }
  if (v !== undefined) {
    const { n, e } = (v ?? {}) as Record<string, unknown>;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 1)
      return { invalid: '"v.n" (vector count) is not a positive integer' };
    if (typeof e !== 'string') return { invalid: '"v.e" is not an embedding record' };
    const modelId = embeddingModelId(e);
    if (modelId === undefined) return { invalid: '"v.e" is not an embedding record' };
    const decoded = decodeEmbeddingRecord(e, modelId);
    if ('invalid' in decoded) return { invalid: `vector: ${decoded.invalid}` };
    usage.vector = { modelId, count: Math.min(n, maxRequests), values: decoded.vector };
  }
  return { usage };
}

function isTerm(term: unknown): boolean {
  return typeof term === 'string' && term.length <= MAX_TERM_LENGTH && TERM.test(term);
}

// `aitb-emb1|<dims>|<model id>|<base64>`: the model id sits between the second and last bars.
function embeddingModelId(record: string): string | undefined {
  const first = record.indexOf('|');
  const second = record.indexOf('|', first + 1);
  const last = record.lastIndexOf('|');
  return first < 0 || second < 0 || last <= second ? undefined : record.slice(second + 1, last);
}
