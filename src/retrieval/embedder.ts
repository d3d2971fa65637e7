import { embedMany, type EmbeddingModel } from 'ai';
import { InvalidArgumentError } from '../errors/invalid-argument-error.ts';
import { type EmbeddingCache, createEmbeddingCache, embeddingCacheKey } from './embedding-cache.ts';

/** Turns texts into vectors, remembering what it has embedded. */
export interface Embedder {
  /** Identifies the model; part of every cache key. */
  readonly id: string;
  embed(texts: readonly string[], options?: { abortSignal?: AbortSignal }): Promise<Float32Array[]>;
}

/** Options of {@link createEmbedder}. */
export type CreateEmbedderOptions = {
  /** Any AI SDK embedding model, e.g. `openai.embedding('text-embedding-3-small')`. */
  model: EmbeddingModel;
  /** Where vectors are remembered; an in-memory cache by default. */
  cache?: EmbeddingCache;
  /** Concurrent embedding requests when a batch is split by `maxEmbeddingsPerCall`. */
  maxParallelCalls?: number;
  /** Retries per embedding request (the AI SDK's own retry with backoff). */
  maxRetries?: number;
};

/**
 * Wraps an AI SDK embedding model: identical texts are embedded once, cached
 * texts not at all, and the rest go through `embedMany`, which splits them by
 * the model's `maxEmbeddingsPerCall`.
 *
 * @example
 * ```ts
 * const embedder = createEmbedder({ model: openai.embedding('text-embedding-3-small') });
 * const [vector] = await embedder.embed(['weather in Paris']);
 * ```
 */
export function createEmbedder({
  model,
  cache = createEmbeddingCache(),
  maxParallelCalls = 4,
  maxRetries = 2,
}: CreateEmbedderOptions): Embedder {
  const id = modelId(model);
  return {
    id,
    async embed(texts, { abortSignal } = {}) {
      abortSignal?.throwIfAborted();
      const keys = texts.map((text, i) => {
        if (typeof text !== 'string') {
          throw new InvalidArgumentError({
            argument: `texts[${i}]`,
            value: text,
            message: 'expected a string',
          });
        }
        return embeddingCacheKey(id, text);
      });
      const found = new Map<string, Float32Array>();
      const missing = new Map<string, string>(); // key -> text, de-duplicated
      for (let i = 0; i < texts.length; i++) {
        const key = keys[i] as string;
        if (found.has(key) || missing.has(key)) continue;
        const cached = await cache.get(key);
        if (cached !== undefined) found.set(key, cached);
        else missing.set(key, texts[i] as string);
      }
      if (missing.size > 0) {
        const { embeddings } = await embedMany({
          model,
          values: [...missing.values()],
          abortSignal,
          maxParallelCalls,
          maxRetries,
        });
        const entries = [...missing.keys()].map((key, i) => ({
          key,
          vector: Float32Array.from(embeddings[i] as number[]),
        }));
        for (const { key, vector } of entries) found.set(key, vector);
        await cache.set(entries);
      }
      return keys.map(key => found.get(key) as Float32Array);
    },
  };
}

function modelId(model: EmbeddingModel): string {
  return typeof model === 'string' ? model : `${model.provider}:${model.modelId}`;
}
