import type { EmbeddingModel } from 'ai';
import { InvalidArgumentError } from '../errors/invalid-argument-error.ts';
import { createToolIndex } from '../retrieval/create-tool-index.ts';
import type { ToolIndex } from '../retrieval/tool-index.ts';
import { transportKind } from './create-transport.ts';
import { McpToolbox } from './mcp-toolbox.ts';
import type { McpNaming } from './tool-names.ts';
import type { McpEvent, McpReconnectOptions, McpServerConfig, McpToolIndex } from './types.ts';

/** Options of {@link connectMcpServers}. */
export type ConnectMcpServersOptions<TIndex extends McpToolIndex> = {
  /** Servers by name; the name namespaces colliding tools and tags them in the index. */
  servers: Record<string, McpServerConfig>;
  /** Index to keep in step (shared with other tools if you like). Default: `createToolIndex({ embeddingModel })`. */
  index?: TIndex;
  /** Embedding model for the default index (ignored when `index` is given); lexical-only without. */
  embeddingModel?: EmbeddingModel;
  /** `on-collision` (default) keeps server names unless two collide; `always` prefixes `server__`. */
  naming?: McpNaming;
  /** Per server: spawn/reach + MCP handshake. */
  connectTimeoutMs?: number;
  /** Per server: all `tools/list` pages together. */
  listTimeoutMs?: number;
  /** Per tool call. */
  callTimeoutMs?: number;
  /** Per server: pages before `tools/list` is declared endless. */
  maxPages?: number;
  /** Wait after a `list_changed` so a burst causes one re-list. */
  listChangedDebounceMs?: number;
  /** Backoff for servers that crash or drop after connecting. */
  reconnect?: McpReconnectOptions;
  /** Lifecycle events (connected, disconnected, list-changed, synced, ...), for logs and metrics. */
  onEvent?: (event: McpEvent) => void;
  /** Cancels connecting; everything started is closed again. */
  abortSignal?: AbortSignal;
};

/**
 * Connects to MCP servers (stdio and Streamable HTTP) in parallel, reads every
 * page of their tools, and returns them as one AI SDK ToolSet plus a tool
 * index for the selection middleware. Both stay current: `list_changed`
 * triggers a full re-list and an incremental index update, and crashed
 * servers are reconnected with backoff. A server that fails to connect does
 * not stop the others: see `toolbox.status()`.
 *
 * @example
 * ```ts
 * import { connectMcpServers } from 'ai-toolbelt/mcp';
 *
 * await using toolbox = await connectMcpServers({
 *   servers: {
 *     files: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/data'] },
 *     docs: { url: 'https://docs.example.com/mcp', headers: { Authorization: `Bearer ${token}` } },
 *   },
 * });
 * const { text } = await generateText({ model, tools: toolbox.tools, prompt: 'List /data' });
 * ```
 */
export async function connectMcpServers<TIndex extends McpToolIndex = ToolIndex>({
  servers,
  index,
  embeddingModel,
  naming = 'on-collision',
  connectTimeoutMs = 10_000,
  listTimeoutMs = 60_000,
  callTimeoutMs = 60_000,
  maxPages = 1_000,
  listChangedDebounceMs = 50,
  reconnect: {
    initialDelayMs = 250,
    maxDelayMs = 30_000,
    maxAttempts = Number.POSITIVE_INFINITY,
  } = {},
  onEvent = () => {},
  abortSignal,
}: ConnectMcpServersOptions<TIndex>): Promise<McpToolbox<TIndex>> {
  if (servers == null || typeof servers !== 'object') {
    throw new InvalidArgumentError({
      argument: 'servers',
      value: servers,
      message: 'expected an object of server configs by name.',
    });
  }
  // Validate every config before spawning anything.
  for (const [name, config] of Object.entries(servers)) transportKind({ server: name, config });
  for (const [argument, value] of Object.entries({
    connectTimeoutMs,
    listTimeoutMs,
    callTimeoutMs,
    maxPages,
  })) {
    if (!(value > 0))
      throw new InvalidArgumentError({ argument, value, message: 'must be a positive number.' });
  }
  abortSignal?.throwIfAborted();
  const toolbox = new McpToolbox<TIndex>({
    servers,
    index:
      index ??
      (createToolIndex(
        embeddingModel === undefined ? {} : { embeddingModel },
      ) as unknown as TIndex),
    naming,
    onEvent,
    settings: {
      connectTimeoutMs,
      listTimeoutMs,
      callTimeoutMs,
      maxPages,
      listChangedDebounceMs,
      reconnect: { initialDelayMs, maxDelayMs, maxAttempts },
    },
  });
  try {
    await toolbox.start(abortSignal);
  } catch (error) {
    await toolbox.close();
    throw error;
  }
  return toolbox;
}
