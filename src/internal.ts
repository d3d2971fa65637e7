// `ai-toolbelt/internal`: the building blocks behind the public entries, for tests, benchmarks,
// the CLI and users who need one piece on its own. No semver promise: names here may change in
// any release. Node only where a piece is (the sandbox sweep loads dockerode).
export { calledTools, extractQuery, type ConversationMessage } from './middleware/conversation.ts';
export type { SelectionMarker } from './middleware/selection/selection-marker.ts';
export {
  ToolSelector,
  type OfferedTool,
  type Selection,
  type SelectorOptions,
} from './middleware/selection/tool-selector.ts';
export { pythonToolDescription } from './python/python-tool-description.ts';
export { errorFingerprint } from './repair/error-fingerprint.ts';
export { extractCode } from './repair/extract-code.ts';
export { repairCode } from './repair/repair-code.ts';
export { HARD_ATTEMPT_LIMIT, decideRepair } from './repair/repair-policy.ts';
export {
  REPAIR_RECORD_KEY,
  failureOutput,
  trailingFailures,
  type PriorFailure,
} from './repair/repair-record.ts';
export { trimError, type TrimErrorOptions } from './repair/trim-error.ts';
export {
  EMBEDDING_STORE_PREFIX,
  embeddingCacheKey,
  type EmbeddingCacheRead,
  type EmbeddingCacheWrite,
} from './retrieval/embedding-cache.ts';
export type { EmbeddingRecord } from './retrieval/store/embedding-record.ts';
export {
  createEmbedder,
  type CreateEmbedderOptions,
  type EmbedOptions,
} from './retrieval/dense/embedder.ts';
export { fuseRankings, type FusionOptions } from './retrieval/ranking/fusion.ts';
export {
  DEFAULT_FIELD_WEIGHTS,
  LexicalIndex,
  type Bm25fOptions,
  type FieldWeight,
} from './retrieval/lexical/lexical-index.ts';
export { splitNeeds } from './retrieval/ranking/split-needs.ts';
export { splitWords, visitWords } from './retrieval/lexical/split-words.ts';
export { tokenize, type TokenizeOptions } from './retrieval/lexical/tokenize.ts';
export { toolEmbeddingText } from './retrieval/tool-text.ts';
export type { LedSearch, ToolIndexOptions } from './retrieval/tool-index.ts';
export { ToolLearning, USAGE_STORE_PREFIX } from './retrieval/learning/tool-learning.ts';
export type { ToolUsage } from './retrieval/learning/usage-record.ts';
export { TopKHeap } from './retrieval/structures/top-k-heap.ts';
export { VectorIndex, type VectorIndexOptions } from './retrieval/dense/vector-index.ts';
export { createMcpTool, type McpCall } from './mcp/catalog/create-mcp-tool.ts';
export { listAllTools } from './mcp/catalog/list-all-tools.ts';
export { assignToolNames } from './mcp/catalog/tool-names.ts';
export {
  toModelOutput,
  type McpCallResult,
  type ModelOutput,
} from './mcp/calls/to-model-output.ts';
export { INSTANCE_LABEL, SANDBOX_LABEL, SCOPE_LABEL } from './sandbox/driver/labels.ts';
export { listSandboxContainers, sweepStaleContainers } from './sandbox/docker/sweep.ts';
