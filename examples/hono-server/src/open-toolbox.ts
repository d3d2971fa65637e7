import type { EmbeddingModel } from 'ai';
import { createToolIndex } from 'ai-toolbelt';
import {
  type McpElicitationHandler,
  type McpEvent,
  type McpServerConfig,
  type McpToolbox,
  connectMcpServers,
} from 'ai-toolbelt/mcp';
import type { Storage } from 'unstorage';

/** Options of {@link openToolbox}. */
export type OpenToolboxOptions = {
  /** MCP servers by name, as `connectMcpServers` takes them. */
  servers: Record<string, McpServerConfig>;
  /** MCP lifecycle events, for the log. */
  onEvent?: (event: McpEvent) => void;
  /** Answers servers' questions to the user (elicitation). */
  onElicitation?: McpElicitationHandler;
  /** Embeddings for hybrid retrieval; lexical without. */
  embeddingModel?: EmbeddingModel;
  /** Where embeddings are kept between processes (see `storeFromEnv`). */
  store?: Storage;
  /** Where to say how tools are selected, and what went wrong. */
  log?: Pick<Console, 'log' | 'warn'>;
};

/**
 * Connects the MCP servers and indexes their tools: hybrid (lexical +
 * embeddings) when an embedding model is configured, lexical otherwise, and
 * says once which. If the embedding model fails at start-up (a server
 * without embeddings, a wrong model id), the toolbox still opens, lexical,
 * with the reason in the log.
 *
 * @example
 * ```ts
 * const toolbox = await openToolbox({ servers, embeddingModel, store });
 * toolbox.index.retrieval; // 'hybrid'
 * ```
 */
export async function openToolbox({
  servers,
  onEvent,
  onElicitation,
  embeddingModel,
  store,
  log = console,
}: OpenToolboxOptions): Promise<McpToolbox> {
  const connect = (index = createToolIndex()) =>
    connectMcpServers({
      servers,
      index,
      ...(onEvent ? { onEvent } : {}),
      ...(onElicitation ? { onElicitation } : {}),
    });
  if (embeddingModel === undefined) return connect();
  const index = createToolIndex({
    embeddingModel,
    ...(store ? { store } : {}),
    onCacheEvent: event => {
      if (event.type === 'store-error')
        log.warn(`[retrieval] embedding store: ${event.error.message}; embedding again`);
      if (event.type === 'invalid-entry')
        log.warn(`[retrieval] ignored a stored embedding (${event.reason}); replacing it`);
    },
  });
  try {
    return await connect(index);
  } catch (error) {
    log.warn(
      `[retrieval] embedding the tools failed (${error instanceof Error ? error.message : String(error)}); selection is lexical`,
    );
    return connect();
  }
}
