export type { AnalysisSnapshots } from './snapshots/analysis-cache.ts';
export { readEvalQueries, readToolCatalog, type EvalQuery } from './eval/catalog-file.ts';
export { createToolIndex, type CreateToolIndexOptions } from './create-tool-index.ts';
export {
  createEmbeddingCache,
  type EmbeddingCache,
  type EmbeddingCacheEvent,
  type EmbeddingCacheOptions,
} from './embedding-cache.ts';
export type { CatalogTexts, CatalogVectors, Embedder } from './dense/embedder.ts';
export {
  evaluateRetrieval,
  type EvaluateRetrievalOptions,
  type RetrievalReport,
} from './eval/evaluate-retrieval.ts';
export { learnFromQueries } from './eval/learn-from-queries.ts';
export { ToolIndex } from './tool-index.ts';
export type { LearningEvent, LearningOptions } from './learning/tool-learning.ts';
export type { TermCounts } from './lexical/term-counts.ts';
export type * from './types.ts';
