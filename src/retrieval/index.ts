export { readEvalQueries, readToolCatalog, type EvalQuery } from './catalog-file.ts';
export { createToolIndex, type CreateToolIndexOptions } from './create-tool-index.ts';
export {
  createEmbeddingCache,
  EMBEDDING_STORE_PREFIX,
  embeddingCacheKey,
  type EmbeddingCache,
  type EmbeddingCacheEvent,
  type EmbeddingCacheOptions,
  type EmbeddingCacheRead,
  type EmbeddingCacheWrite,
} from './embedding-cache.ts';
export type { EmbeddingRecord } from './embedding-record.ts';
export {
  createEmbedder,
  type CreateEmbedderOptions,
  type EmbedOptions,
  type Embedder,
} from './embedder.ts';
export {
  evaluateRetrieval,
  type EvaluateRetrievalOptions,
  type RetrievalReport,
} from './evaluate-retrieval.ts';
export { fuseRankings, type FusionOptions } from './fusion.ts';
export { learnFromQueries } from './learn-from-queries.ts';
export {
  DEFAULT_FIELD_WEIGHTS,
  LexicalIndex,
  type Bm25fOptions,
  type FieldWeight,
} from './lexical-index.ts';
export { splitNeeds } from './split-needs.ts';
export { splitWords, visitWords } from './split-words.ts';
export { tokenize, type TokenizeOptions } from './tokenize.ts';
export { toolEmbeddingText } from './tool-text.ts';
export { ToolIndex, type LedSearch, type ToolIndexOptions } from './tool-index.ts';
export {
  ToolLearning,
  USAGE_STORE_PREFIX,
  type LearningEvent,
  type LearningOptions,
} from './tool-learning.ts';
export type { ToolUsage } from './usage-record.ts';
export { TopKHeap } from './top-k-heap.ts';
export type * from './types.ts';
export { VectorIndex, type VectorIndexOptions } from './vector-index.ts';
