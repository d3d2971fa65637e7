import type { EmbeddingModel } from 'ai';
import { type EmbeddingCache, createEmbeddingCache } from './embedding-cache.ts';
import { type Embedder, createEmbedder } from './embedder.ts';
import type { FusionOptions } from './fusion.ts';
import type { Bm25fOptions } from './lexical-index.ts';
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
   * Where embeddings are remembered: a cache object, or a file path so a
   * restart does not re-embed the catalog. In memory by default.
   */
  cache?: EmbeddingCache | string;
  /** `hybrid` (default with a model), `dense`, or `lexical` (default without). */
  retrieval?: 'lexical' | 'dense' | 'hybrid';
  /** How lexical and dense rankings are fused (convex combination by default). */
  fusion?: FusionOptions;
  /** BM25F parameters (field weights, k1). */
  bm25?: Bm25fOptions;
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
 * const index = createToolIndex({ embeddingModel: openai.embedding('text-embedding-3-small'), cache: '.cache/embeddings.jsonl' });
 * await index.upsert(tools);
 * const hits = await index.search('chart last quarter revenue', { topK: 5 });
 * ```
 */
export function createToolIndex({
  embeddingModel,
  embedder,
  cache,
  retrieval,
  fusion,
  bm25,
}: CreateToolIndexOptions = {}): ToolIndex {
  const resolvedCache = typeof cache === 'string' ? createEmbeddingCache({ path: cache }) : cache;
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
  });
}
