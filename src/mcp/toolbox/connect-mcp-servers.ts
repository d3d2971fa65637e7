import type { EmbeddingModel } from 'ai';
import { InvalidArgumentError } from '../../errors/invalid-argument-error.ts';
import { createToolIndex } from '../../retrieval/create-tool-index.ts';
import type { ToolIndex } from '../../retrieval/tool-index.ts';
import { AddressPolicy } from '../auth/address-policy.ts';
import { isMcpOAuth } from '../auth/create-mcp-oauth.ts';
import { httpUrl, transportKind } from '../connection/create-transport.ts';
import type { McpElicitationHandler } from '../elicitation/elicitation.ts';
import { McpToolbox } from './mcp-toolbox.ts';
import type { McpAuthorizationRequest } from './toolbox-options.ts';
import type { McpNaming } from '../catalog/tool-names.ts';
import type {
  McpEvent,
  McpHttpServerConfig,
  McpReconnectOptions,
  McpServerConfig,
  McpToolIndex,
} from '../types.ts';

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
  /** Lifecycle events (connected, needs-auth, disconnected, list-changed, synced, ...), for logs and metrics. */
  onEvent?: (event: McpEvent) => void;
  /**
   * A single-user toolbox (a CLI, a desktop app, a test): servers with
   * per-user `auth` connect for this user right away. Multi-user apps leave
   * it out and call `toolbox.forUser({ userId })` per request.
   */
  userId?: string;
  /** Told when a user has to sign in to a server (`url` is also in `status()`), e.g. to open a browser. */
  onAuthorizationRequired?: (request: McpAuthorizationRequest) => void;
  /**
   * Answers a server's request for user input during a tool call (MCP
   * elicitation), e.g. by showing a form. Without it every request is declined.
   */
  onElicitation?: McpElicitationHandler;
  /** How long an elicitation may wait for the user before it is cancelled (call timeouts pause meanwhile). */
  elicitationTimeoutMs?: number;
  /** Elicitation modes offered: `form` (default) and/or `url` (your hook opens a link). */
  elicitationModes?: readonly ('form' | 'url')[];
  /** A `forUser()` toolbox unused this long is closed (its connections end). */
  userIdleTimeoutMs?: number;
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
  userId,
  onAuthorizationRequired,
  onElicitation,
  elicitationTimeoutMs = 10 * 60_000,
  elicitationModes = ['form'],
  userIdleTimeoutMs = 15 * 60_000,
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
  for (const [name, config] of Object.entries(servers)) validateServer(name, config);
  if (userId !== undefined && (typeof userId !== 'string' || userId === '')) {
    throw new InvalidArgumentError({
      argument: 'userId',
      value: userId,
      message: 'expected a non-empty string identifying the user.',
    });
  }
  for (const [argument, value] of Object.entries({
    connectTimeoutMs,
    listTimeoutMs,
    callTimeoutMs,
    maxPages,
    elicitationTimeoutMs,
    userIdleTimeoutMs,
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
    userId,
    onAuthorizationRequired,
    onElicitation,
    userIdleTimeoutMs,
    settings: {
      connectTimeoutMs,
      listTimeoutMs,
      callTimeoutMs,
      maxPages,
      listChangedDebounceMs,
      reconnect: { initialDelayMs, maxDelayMs, maxAttempts },
      elicitationTimeoutMs,
      elicitationModes,
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

function validateServer(name: string, config: McpServerConfig): void {
  const kind = transportKind({ server: name, config });
  const auth = (config as { auth?: unknown }).auth;
  if (auth === undefined) return;
  if (kind !== 'http') {
    throw new InvalidArgumentError({
      argument: `servers.${name}.auth`,
      value: '(auth)',
      message: 'sign-in applies to Streamable HTTP servers (`url`) only.',
    });
  }
  httpUrl({ server: name, url: (config as { url: string | URL }).url });
  // Validates the allow-list now rather than at the first sign-in.
  new AddressPolicy({
    server: name,
    allowed: (config as McpHttpServerConfig).authAllowedAddresses,
  });
  const provider = auth as { tokens?: unknown; clientMetadata?: unknown } | null;
  if (
    !isMcpOAuth(auth) &&
    (typeof provider?.tokens !== 'function' || provider.clientMetadata == null)
  ) {
    throw new InvalidArgumentError({
      argument: `servers.${name}.auth`,
      value: '(auth)',
      message:
        'expected createMcpOAuth(...) or an MCP SDK OAuthClientProvider (e.g. ClientCredentialsProvider).',
    });
  }
}
