/**
 * A tool as the retrieval engine sees it: what MCP `tools/list` returns, plus
 * the server it came from.
 */
export type ToolDescriptor = {
  /** Unique name within one index (MCP tools are namespaced on collision). */
  name: string;
  /** Free-text description; tools without one are indexed by name and schema. */
  description?: string;
  /** JSON Schema of the input; parameter names and descriptions are indexed. */
  inputSchema?: unknown;
  /** The MCP server (or category) the tool belongs to; searchable and filterable. */
  server?: string;
};

/** One search hit. Scores are comparable within one result list only. */
export type ScoredTool = {
  name: string;
  score: number;
  server?: string;
};

/**
 * Restricts a search to some tools: a list of servers, or a predicate over
 * the descriptor.
 */
export type ToolFilter = { servers: readonly string[] } | ((tool: ToolDescriptor) => boolean);

/** What an upsert changed; `embedded` counts texts actually sent to an embedder. */
export type UpsertResult = {
  added: string[];
  updated: string[];
  unchanged: number;
};

/**
 * How a query is matched: `multi` (the default) also covers each need of a
 * multi-step request ("find the trend, chart it, save a PDF") so every needed
 * tool can reach the top-k, and ranks a single-need request exactly like
 * `single`; `single` always ranks the whole query as one need.
 */
export type QueryMode = 'single' | 'multi';

/** Options of a search. */
export type SearchOptions = {
  /** How many tools to return. `topK < 1` returns []. */
  topK?: number;
  /** Restrict to some servers or a predicate. */
  filter?: ToolFilter;
  /** See {@link QueryMode}. */
  mode?: QueryMode;
  /** Cancels a pending query embedding. */
  abortSignal?: AbortSignal;
};
