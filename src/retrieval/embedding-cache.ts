import { LRUCache } from 'lru-cache';
import type { Storage } from 'unstorage';
import { StoreError } from '../errors/store-error.ts';
import { InvalidArgumentError } from '../errors/invalid-argument-error.ts';
import { sha256Base64Url } from '../util/sha256.ts';
import { type EmbeddingBacking, fileBacking, storeBacking } from './store/embedding-backing.ts';
import { decodeEmbeddingRecord, encodeEmbeddingRecord } from './store/embedding-record.ts';
import { type AnalysisSnapshots, analysisSnapshots } from './snapshots/analysis-cache.ts';
import { snapshotCache } from './snapshots/snapshot-cache.ts';
import { storeGuard } from './store/store-guard.ts';
import type { EmbeddingCacheEvent } from './store/embedding-cache-event.ts';

export type { EmbeddingCacheEvent } from './store/embedding-cache-event.ts';

/** One lookup of {@link EmbeddingCache.read}. */
export type EmbeddingCacheRead = {
  /** The embedder's id; part of every key, and checked against each stored vector. */
  modelId: string;
  texts: readonly string[];
  /** Expected vector length when known; other lengths are rejected. */
  dimensions?: number;
  /** Also look in the file or store (tool texts); `false` stays in memory (user queries). */
  persist?: boolean;
  /** Stops waiting for the store (the read then throws the signal's reason). */
  abortSignal?: AbortSignal;
};

/** One store of {@link EmbeddingCache.write}. */
export type EmbeddingCacheWrite = {
  modelId: string;
  entries: readonly { text: string; vector: Float32Array }[];
  /** Also write to the file or store; `false` keeps them in memory (user queries never leave the process). */
  persist?: boolean;
};

/**
 * Where embeddings are remembered: memory in front of an optional shared
 * store. Create one with {@link createEmbeddingCache}; implement it to plug
 * in something else.
 */
export interface EmbeddingCache {
  /** Vectors for `texts` (same order), `undefined` where none is known or usable. */
  read(request: EmbeddingCacheRead): Promise<(Float32Array | undefined)[]>;
  /** Remembers vectors the model just made. Never throws for a failing store. */
  write(request: EmbeddingCacheWrite): Promise<void>;
  /**
   * The vectors of a catalog from its whole-catalog snapshot, in one store round trip, in the
   * order of `keys` (each names one vector: a tool's content hash, or its embedding text):
   * approximate (int8, each pointing its vector's way; its length is not kept), for a cosine
   * index until the exact ones are read. Undefined when there is none (or no store).
   */
  readSnapshot?(request: {
    modelId: string;
    keys: readonly string[];
    dimensions?: number | undefined;
    abortSignal?: AbortSignal | undefined;
  }): Promise<ArrayLike<number>[] | undefined>;
  /**
   * Keeps a catalog's vectors (in the order of `keys`) as a snapshot for the next start. Never
   * throws for a failing store.
   */
  writeSnapshot?(request: {
    modelId: string;
    keys: readonly string[];
    vectors: readonly Float32Array[];
  }): Promise<void>;
  /**
   * Forgets a catalog's snapshot whose vectors turned out not to match the exact ones (reported
   * as `invalid-entry` events), so the next start reads the tools one by one. Never throws for a
   * failing store.
   */
  dropSnapshot?(request: {
    modelId: string;
    keys: readonly string[];
    reason: string;
  }): Promise<void>;
  /**
   * Whole-catalog snapshots of the lexical analysis (each tool's tokenised text), so a warm start
   * does not tokenise an unchanged catalog again; kept beside the vector snapshots.
   */
  analysis?: AnalysisSnapshots;
}

/** Options of {@link createEmbeddingCache}. */
export type EmbeddingCacheOptions = {
  /**
   * A key-value store shared by processes and replicas: any unstorage
   * `Storage` (Redis, Upstash, Vercel KV, Cloudflare KV, fs, memory...).
   */
  store?: Storage;
  /** Key prefix in `store`, so one store can hold other data too. */
  prefix?: string;
  /** Instead of a store: a JSON-lines file (read once, appended to). */
  path?: string;
  /** Most vectors kept in memory; the least recently used are dropped first. */
  maxEntries?: number;
  /** Longest wait for one store or file operation before embedding instead. */
  timeoutMs?: number;
  /** After a store failure, how long to embed without trying the store. */
  retryAfterMs?: number;
  /** Expiry of stored vectors (drivers with TTL support); they never expire by default. */
  ttlSeconds?: number;
  /**
   * Whole-catalog snapshots kept per model in the store (the newest), so an unchanged catalog
   * loads in one round trip, and as many of catalogs' lexical analyses (so it is not tokenised
   * again); 0 reads every tool's vector on its own and tokenises every catalog.
   */
  maxSnapshots?: number;
  /** Reads, rejected entries and store failures, for logs and metrics. */
  onEvent?: (event: EmbeddingCacheEvent) => void;
};

/** The default key prefix in a shared store. */
export const EMBEDDING_STORE_PREFIX = 'ai-toolbelt:embeddings';

/**
 * The key of one text for one model: the model id (made key-safe) and a
 * SHA-256 of the text, e.g. `openai.embedding:text-embedding-3-small:3q2-7w...`.
 */
export function embeddingCacheKey(modelId: string, text: string): string {
  return `${modelKey(modelId)}:${sha256Base64Url(text)}`;
}

const modelKey = (modelId: string): string => normalizeKeyPart(modelId.replace(/[^\w.:-]+/g, '_'));

/**
 * An embedding cache: vectors in memory, and optionally in a shared store or
 * a file so a cold start (a new process, replica or serverless instance)
 * re-embeds only tools it has never seen. Stored vectors are checked (model,
 * dimensions, finite values) before use; a store that fails or is slow is
 * reported through `onEvent` and the texts are embedded again.
 *
 * @example
 * ```ts
 * import { createStorage } from 'unstorage';
 * import redisDriver from 'unstorage/drivers/redis';
 *
 * const cache = createEmbeddingCache({
 *   store: createStorage({ driver: redisDriver({ url: process.env.REDIS_URL }) }),
 *   onEvent: event => event.type === 'store-error' && console.warn(event.error.message),
 * });
 * const index = createToolIndex({ embeddingModel: openai.embedding('text-embedding-3-small'), cache });
 * ```
 */
export function createEmbeddingCache({
  store,
  prefix = EMBEDDING_STORE_PREFIX,
  path,
  maxEntries = 10_000,
  timeoutMs = 5_000,
  retryAfterMs = 30_000,
  ttlSeconds,
  maxSnapshots = 4,
  onEvent = () => {},
}: EmbeddingCacheOptions = {}): EmbeddingCache {
  if (store !== undefined && path !== undefined) {
    throw new InvalidArgumentError({
      argument: 'path',
      value: path,
      message: 'give either a store or a file path, not both',
    });
  }
  if (store !== undefined && (typeof store !== 'object' || typeof store.getItems !== 'function')) {
    throw new InvalidArgumentError({
      argument: 'store',
      value: store,
      message: 'expected an unstorage Storage (createStorage({ driver }))',
    });
  }
  for (const [argument, value, min] of [
    ['maxEntries', maxEntries, 1],
    ['maxSnapshots', maxSnapshots, 0],
  ] as const) {
    if (!Number.isInteger(value) || value < min) {
      throw new InvalidArgumentError({
        argument,
        value,
        message: `expected an integer >= ${min}`,
      });
    }
  }
  const backing: EmbeddingBacking | undefined = store
    ? storeBacking({ storage: store, ttlSeconds })
    : path !== undefined
      ? fileBacking({ path })
      : undefined;
  const base = store ? normalizeKeyPart(prefix.replace(/[/\\]/g, ':')) : '';
  const storeKey = (key: string): string => (base === '' ? key : `${base}:${key}`);
  const memory = new LRUCache<string, Float32Array>({ max: maxEntries });

  const report = (event: EmbeddingCacheEvent): void => {
    try {
      onEvent(event);
    } catch {
      // A throwing listener must not turn a cache event into a failed request.
    }
  };
  // A failing store is an event, and rests for a while; the texts are embedded instead.
  const guarded = storeGuard({
    backing,
    timeoutMs,
    retryAfterMs,
    toError: failure => new StoreError({ ...failure, records: 'embeddings' }),
    isError: StoreError.isInstance,
    onError: error =>
      report({ type: 'store-error', source: (backing as EmbeddingBacking).kind, error }),
  });

  // Only a shared store: a file is read whole at start-up anyway.
  const snapshots =
    backing?.kind === 'store'
      ? snapshotCache({ guarded, storeKey, modelKey, maxSnapshots, report })
      : undefined;

  return {
    ...(snapshots
      ? {
          readSnapshot: snapshots.read,
          writeSnapshot: snapshots.write,
          dropSnapshot: snapshots.drop,
          analysis: analysisSnapshots({ guarded, storeKey, maxSnapshots, report }),
        }
      : {}),
    async read({ modelId, texts, dimensions, persist = true, abortSignal }) {
      const keys = texts.map(text => embeddingCacheKey(modelId, text));
      const vectors = keys.map(key => {
        const vector = memory.get(key); // a hit counts as a use
        return vector !== undefined && (dimensions === undefined || vector.length === dimensions)
          ? vector
          : undefined;
      });
      const wanted = keys.flatMap((key, i) => (vectors[i] === undefined ? [i] : []));
      if (!persist || wanted.length === 0 || backing === undefined) return vectors;
      const started = performance.now();
      const values = await guarded(
        'read',
        b => b.read(wanted.map(i => storeKey(keys[i]!))),
        abortSignal,
      );
      if (values === undefined) return vectors;
      const found: { i: number; vector: Float32Array }[] = [];
      const rejected: { key: string; reason: string }[] = [];
      values.forEach((value, j) => {
        if (value === undefined) return;
        const i = wanted[j] as number;
        const decoded = decodeEmbeddingRecord(value, modelId, dimensions);
        if ('vector' in decoded) found.push({ i, vector: decoded.vector });
        else rejected.push({ key: storeKey(keys[i]!), reason: decoded.invalid });
      });
      // Without a known length, the batch's most common one wins: one odd vector is an outlier.
      const expected = dimensions ?? mostCommonLength(found.map(({ vector }) => vector));
      let hits = 0;
      for (const { i, vector } of found) {
        if (vector.length === expected) {
          hits++;
          vectors[i] = vector; // not kept in memory too: the index holds its own copy
        } else {
          rejected.push({
            key: storeKey(keys[i]!),
            reason: `${vector.length} dimensions, expected ${expected}`,
          });
        }
      }
      for (const entry of rejected) report({ type: 'invalid-entry', ...entry });
      report({
        type: 'read',
        source: backing.kind,
        texts: wanted.length,
        hits,
        invalid: rejected.length,
        ms: performance.now() - started,
      });
      return vectors;
    },
    async write({ modelId, entries, persist = true }) {
      // Memory is the cache of last resort: with a file or store, tool vectors live there
      // (and in the index), and memory keeps what must not leave the process.
      if (!persist || backing === undefined) {
        for (const { text, vector } of entries)
          memory.set(embeddingCacheKey(modelId, text), vector);
        return;
      }
      const records = entries.map(({ text, vector }) => ({
        key: storeKey(embeddingCacheKey(modelId, text)),
        record: encodeEmbeddingRecord(modelId, vector),
      }));
      if (records.length > 0) await guarded('write', b => b.write(records));
    },
  };
}

function mostCommonLength(vectors: readonly Float32Array[]): number | undefined {
  const counts = new Map<number, number>();
  let best: number | undefined;
  for (const { length } of vectors) {
    const count = (counts.get(length) ?? 0) + 1;
    counts.set(length, count);
    if (best === undefined || count > (counts.get(best) as number)) best = length;
  }
  return best;
}

// The same normalisation unstorage applies, so keys come back as they were sent.
function normalizeKeyPart(key: string): string {
  return key.split('?')[0]!.replace(/:+/g, ':').replace(/^:|:$/g, '');
}
