import type { ToolSet } from 'ai';
import { McpConnectionError } from '../errors/mcp-connection-error.ts';
import type { ToolIndex } from '../retrieval/tool-index.ts';
import { type McpConnectionSettings, McpServerConnection } from './server-connection.ts';
import { McpToolCatalog } from './tool-catalog.ts';
import type { McpNaming } from './tool-names.ts';
import type {
  McpEvent,
  McpServerConfig,
  McpServerStatus,
  McpSyncResult,
  McpToolIndex,
} from './types.ts';

/**
 * Tools from a set of MCP servers, kept current. Create it with
 * `connectMcpServers()`; share one per process (it owns child processes and
 * connections), and `close()` it on shutdown.
 *
 * @example
 * ```ts
 * await using toolbox = await connectMcpServers({ servers: { fs: { command: 'mcp-fs' } } });
 * const result = await generateText({ model, tools: toolbox.tools, prompt });
 * ```
 */
export class McpToolbox<TIndex extends McpToolIndex = ToolIndex> {
  /** The index the middleware searches; holds the same (namespaced) names as `tools`. */
  readonly index: TIndex;
  #connections: McpServerConnection[];
  #byName: Map<string, McpServerConnection>;
  #catalog: McpToolCatalog;
  #onEvent: (event: McpEvent) => void;
  #closing: Promise<void> | undefined;
  #refreshing = 0;

  constructor(options: {
    /** Servers by name. */
    servers: Record<string, McpServerConfig>;
    /** Index to keep in step. */
    index: TIndex;
    /** Defaults for every server (a server's own limits win). */
    settings: McpConnectionSettings;
    /** See {@link McpNaming}. */
    naming: McpNaming;
    /** Lifecycle events. */
    onEvent: (event: McpEvent) => void;
  }) {
    this.index = options.index;
    this.#onEvent = event => {
      try {
        options.onEvent(event);
      } catch {
        // A throwing listener must not break reconnects or syncs.
      }
    };
    this.#connections = Object.entries(options.servers).map(
      ([name, config]) =>
        new McpServerConnection({
          name,
          config,
          settings: { ...options.settings, ...definedLimits(config) },
          onEvent: this.#onEvent,
          onTools: () => void this.#backgroundSync(),
        }),
    );
    this.#byName = new Map(this.#connections.map(connection => [connection.name, connection]));
    this.#catalog = new McpToolCatalog({
      sources: () => this.#connections,
      index: this.index,
      naming: options.naming,
      onEvent: this.#onEvent,
      call: (server, tool, args, signal) => {
        const connection = this.#byName.get(server);
        if (connection === undefined)
          throw new McpConnectionError({
            server,
            tool,
            message: `Unknown MCP server "${server}".`,
          });
        return connection.callTool(tool, args, signal);
      },
    });
  }

  /**
   * The AI SDK ToolSet of every server's tools. One object, updated in place
   * when servers change their tools, so it can be held on to.
   */
  get tools(): ToolSet {
    return this.#catalog.tools;
  }

  /** A snapshot of every server's state, by server name. */
  status(): Record<string, McpServerStatus> {
    return Object.fromEntries(
      this.#connections.map(connection => [connection.name, connection.status()]),
    );
  }

  /** Connects every server in parallel and indexes their tools. Failures are reported in `status()`. */
  async start(abortSignal?: AbortSignal): Promise<void> {
    await Promise.all(this.#connections.map(connection => connection.start(abortSignal)));
    abortSignal?.throwIfAborted();
    await this.#catalog.sync(abortSignal);
  }

  /**
   * Re-lists every ready server, retries failed ones, then syncs tools and
   * index. Not needed for `list_changed` (handled on its own); useful for
   * servers that change without notifying, or after fixing a failed one.
   */
  async refresh({
    abortSignal,
  }: {
    /** Cancels waiting (not the re-lists). */ abortSignal?: AbortSignal;
  } = {}): Promise<McpSyncResult> {
    this.#assertOpen();
    // Our own final sync reports what changed; background syncs would take the credit.
    this.#refreshing++;
    try {
      await Promise.all(
        this.#connections.map(connection =>
          connection.state === 'failed' ? connection.retry(abortSignal) : connection.relist(),
        ),
      );
    } finally {
      this.#refreshing--;
    }
    return await this.#catalog.sync(abortSignal);
  }

  /** Closes every connection and child process, and removes the tools from `tools` and the index. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      await Promise.all(this.#connections.map(connection => connection.close()));
      // Closed servers list no tools, so this sync (queued behind any running
      // one) empties `tools` and removes exactly our names from the index.
      await this.#catalog.sync().catch(() => {});
    })();
    return this.#closing;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  async #backgroundSync(): Promise<void> {
    if (this.#closing !== undefined || this.#refreshing > 0) return;
    try {
      await this.#catalog.sync();
    } catch (error) {
      this.#onEvent({ type: 'error', error: error as Error });
    }
  }

  #assertOpen(): void {
    if (this.#closing !== undefined) {
      throw new McpConnectionError({
        server: '*',
        message: 'This MCP toolbox is closed; create a new one with connectMcpServers().',
      });
    }
  }
}

function definedLimits(config: McpServerConfig): Partial<McpConnectionSettings> {
  const limits: Partial<McpConnectionSettings> = {};
  for (const key of ['connectTimeoutMs', 'listTimeoutMs', 'callTimeoutMs', 'maxPages'] as const) {
    const value = config[key];
    if (value !== undefined) limits[key] = value;
  }
  return limits;
}
