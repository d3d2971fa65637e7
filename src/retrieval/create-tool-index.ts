import type { EmbeddingModel } from 'ai';
import type { Storage } from 'unstorage';
import { InvalidArgumentError } from '../errors/invalid-argument-error.ts';
import {
  type EmbeddingCache,
  type EmbeddingCacheEvent,
  createEmbeddingCache,
} from './embedding-cache.ts';
import { type Embedder, createEmbedder } from './dense/embedder.ts';
import type { FusionOptions } from './ranking/fusion.ts';
import type { Bm25fOptions } from './lexical/lexical-index.ts';
import { type LearningOptions, ToolLearning } from './learning/tool-learning.ts';
import { ToolIndex } from './tool-index.ts';

/** Options of {@link createToolIndex}. */
export type CreateToolIndexOptions = {
  /**
   * Any AI SDK embedding model, e.g. `openai.embedding('text-embedding-3-small')`.
   * Enables hybrid (lexical + dense) retrieval. Without one, retrieval is the
   * offline lexical BM25F channel: no network, no key.
   */
  embeddingModel?: EmbeddingModel;
  /** A custom embedder instead of `embeddingModel`. */
  embedder?: Embedder;
  /**
   * A key-value store shared by every process and replica, so a cold start
   * re-embeds only tools it has never seen and does not tokenise an unchanged
   * catalog again (with or without a model): any unstorage `Storage` (Redis,
   * Upstash, Vercel KV, Cloudflare KV, fs, memory...). Keys start with
   * `ai-toolbelt:embeddings:`; the same store can hold the app's other data.
   */
  store?: Storage;
  /**
   * Instead of `store`: a JSON-lines file path (a restart re-embeds nothing),
   * or a cache from `createEmbeddingCache` for more settings. In memory by default.
   */
  cache?: EmbeddingCache | string;
  /** Store reads, rejected entries and store failures (the index embeds again meanwhile). */
  onCacheEvent?: (event: EmbeddingCacheEvent) => void;
  /** `hybrid` (default with a model), `dense`, or `lexical` (default without). */
  retrieval?: 'lexical' | 'dense' | 'hybrid';
  /** How lexical and dense rankings are fused (`zscore`, the dense channel at 0.3, by default). */
  fusion?: FusionOptions;
  /** BM25F parameters (field weights, k1). */
  bm25?: Bm25fOptions;
  /**
   * Learning from use (off by default; nothing is kept without it):
   * `index.learn({ query, tool })` adds a request's terms (and, with a model,
   * its embedding) to the tool's usage, shared through `store` when given.
   * `true` for the defaults, or {@link LearningOptions}.
   */
  learning?: boolean | LearningOptions;
  /**
   * When a search meets vectors from a catalog snapshot (int8, see `store`) among its candidates:
   * `'after'` (default) ranks with them and reads their exact vectors in the background, for the
   * searches that follow (the first search of a warm start waits for no store read); `'before'`
   * reads them first, so every ranking is the exact one. See {@link ToolIndexOptions.rescore}.
   */
  rescore?: 'after' | 'before';
};

/**
 * Creates a tool index. Feed it tools with `upsert` (from MCP servers, a
 * JSONL catalog, or your own list) and query it with `search`.
 *
 * @example
 * ```ts
 * import { createToolIndex } from 'ai-toolbelt';
 * import { openai } from '@ai-sdk/openai';
 *
 * import { createStorage } from 'unstorage';
 * import redisDriver from 'unstorage/drivers/redis';
 *
 * const index = createToolIndex({
 *   embeddingModel: openai.embedding('text-embedding-3-small'),
 *   store: createStorage({ driver: redisDriver({ url: process.env.REDIS_URL }) }),
 * });
 * await index.upsert(tools);
 * const hits = await index.search('chart last quarter revenue', { topK: 5 });
 * ```
 */
export function createToolIndex({
  embeddingModel,
  embedder,
  store,
  cache,
  onCacheEvent,
  retrieval,
  fusion,
  bm25,
  learning,
  rescore,
}: CreateToolIndexOptions = {}): ToolIndex {
  if (store !== undefined && cache !== undefined) {
    throw new InvalidArgumentError({
      argument: 'cache',
      value: cache,
      message: 'give either `store` or `cache`, not both',
    });
  }
  const events = onCacheEvent ? { onEvent: onCacheEvent } : {};
  const resolvedCache =
    store !== undefined
      ? createEmbeddingCache({ store, ...events })
      : typeof cache === 'string'
        ? createEmbeddingCache({ path: cache, ...events })
        : (cache ?? (onCacheEvent ? createEmbeddingCache(events) : undefined));
  const resolvedEmbedder =
    embedder ??
    (embeddingModel !== undefined
      ? createEmbedder({
          model: embeddingModel,
          ...(resolvedCache ? { cache: resolvedCache } : {}),
        })
      : undefined);
  return new ToolIndex({
    ...(resolvedEmbedder ? { embedder: resolvedEmbedder } : {}),
    ...(retrieval ? { retrieval } : {}),
    ...(fusion ? { fusion } : {}),
    ...(bm25 ? { bm25 } : {}),
    ...(rescore ? { rescore } : {}),
    ...(resolvedCache?.analysis ? { analysis: resolvedCache.analysis } : {}),
    ...(learning
      ? {
          learning: new ToolLearning({
            ...(store ? { store } : {}),
            ...(learning === true ? {} : learning),
          }),
        }
      : {}),
  });
}
