export type { AnalysisSnapshots } from './analysis-cache.ts';
export { readEvalQueries, readToolCatalog, type EvalQuery } from './catalog-file.ts';
export { createToolIndex, type CreateToolIndexOptions } from './create-tool-index.ts';
export {
  createEmbeddingCache,
  type EmbeddingCache,
  type EmbeddingCacheEvent,
  type EmbeddingCacheOptions,
} from './embedding-cache.ts';
export type { CatalogTexts, CatalogVectors, Embedder } from './embedder.ts';
export {
  evaluateRetrieval,
  type EvaluateRetrievalOptions,
  type RetrievalReport,
} from './evaluate-retrieval.ts';
export { learnFromQueries } from './learn-from-queries.ts';
export { ToolIndex } from './tool-index.ts';
export type { LearningEvent, LearningOptions } from './tool-learning.ts';
export type { TermCounts } from './term-counts.ts';
export type * from './types.ts';
