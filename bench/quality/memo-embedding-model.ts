import type { EmbeddingModelV4 } from '@ai-sdk/provider';

/**
 * An embedding model that embeds each distinct text once per process: the quality bench builds
 * many indexes over the same catalogs and queries (one per fusion setting and learning fold), and
 * only their ranking differs. Vectors are the model's own, so figures are those of the model.
 */
export function memoEmbeddingModel(model: EmbeddingModelV4): EmbeddingModelV4 {
  const memo = new Map<string, number[]>();
  return {
    specificationVersion: 'v4',
    provider: model.provider,
    modelId: model.modelId,
    maxEmbeddingsPerCall: model.maxEmbeddingsPerCall,
    supportsParallelCalls: model.supportsParallelCalls,
    async doEmbed(options) {
      const missing = [...new Set(options.values.filter(text => !memo.has(text)))];
      if (missing.length > 0) {
        const { embeddings } = await model.doEmbed({ ...options, values: missing });
        missing.forEach((text, i) => memo.set(text, embeddings[i] as number[]));
      }
      return { embeddings: options.values.map(text => memo.get(text)!), warnings: [] };
    },
  };
}
