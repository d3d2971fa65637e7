// toolbox/: what an app holds: `connectMcpServers` builds an McpToolbox over the server
// connections; per-user toolboxes share its servers and catalog; sign-in callbacks find their server.
import type { ToolSet } from 'ai';
import { InvalidArgumentError } from '../../errors/invalid-argument-error.ts';
import type { McpAuthorizationError } from '../../errors/mcp-authorization-error.ts';
import { McpConnectionError } from '../../errors/mcp-connection-error.ts';
import type { ToolIndex } from '../../retrieval/tool-index.ts';
import { isMcpOAuth } from '../auth/create-mcp-oauth.ts';
import { serverSettings } from '../connection/connection-settings.ts';
import { configAuth, findAuthConnection } from './find-auth-connection.ts';
import { McpServerConnection } from '../connection/server-connection.ts';
import { McpToolCatalog } from '../catalog/tool-catalog.ts';
import type { McpToolboxOptions } from './toolbox-options.ts';
import { UserToolboxes } from './user-toolboxes.ts';
import type {
  McpEvent,
  McpServerConfig,
  McpServerStatus,
  McpSyncResult,
  McpToolIndex,
} from '../types.ts';

/**
 * Tools from a set of MCP servers, kept current. Create it with
 * `connectMcpServers()`; share one per process (it owns child processes and
 * connections), and `close()` it on shutdown. Servers that sign in per user
 * come with `toolbox.forUser({ userId })`, which reuses everything shared.
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
  /** The user of a per-user toolbox. */
  readonly userId: string | undefined;
  private options: McpToolboxOptions<TIndex>;
  private own: McpServerConnection[];
  private borrowed: McpServerConnection[];
  private order: string[];
  private perUser: Set<string>;
  private catalog: McpToolCatalog;
  private users: UserToolboxes<McpToolbox<TIndex>> | undefined;
  private onEvent: (event: McpEvent) => void;
  private closing: Promise<void> | undefined;
  private refreshing = 0;

  constructor(options: McpToolboxOptions<TIndex>) {
    this.options = options;
    this.index = options.index;
    this.userId = options.userId;
    this.onEvent = event => {
      try {
        options.onEvent(event);
      } catch {
        // A throwing listener must not break reconnects or syncs.
      }
    };
    const entries = Object.entries(options.servers);
    this.order = entries.map(([name]) => name);
    this.perUser = new Set(
      entries.filter(([, config]) => isMcpOAuth(configAuth(config))).map(([name]) => name),
    );
    const mine = entries.filter(([name]) =>
      options.parent === undefined
        ? !this.perUser.has(name) || options.userId !== undefined
        : this.perUser.has(name),
    );
    this.borrowed = options.parent?.borrowed ?? [];
    this.own = mine.map(([name, config]) => this.connection(name, config));
    const byName = new Map([...this.borrowed, ...this.own].map(c => [c.name, c]));
    this.catalog = new McpToolCatalog({
      sources: () => [...this.borrowed, ...this.own],
      index: this.index,
      naming: options.naming,
      ...(options.parent === undefined ? {} : { shared: options.parent.shared }),
      onEvent: this.onEvent,
      call: (server, tool, args, signal, toolCallId) => {
        options.parent?.onUse();
        const connection = byName.get(server);
        if (connection === undefined)
          throw new McpConnectionError({
            server,
            tool,
            message: `Unknown MCP server "${server}".`,
          });
        return connection.callTool(tool, args, signal, toolCallId);
      },
    });
    if (options.parent === undefined) {
      this.users = new UserToolboxes<McpToolbox<TIndex>>({
        idleTimeoutMs: options.userIdleTimeoutMs,
        create: ({ userId, onClose, onUse }) =>
          new McpToolbox<TIndex>({
            ...options,
            userId,
            parent: {
              borrowed: this.own.filter(c => !this.perUser.has(c.name)),
              shared: this.catalog.shared,
              onClose,
              onUse,
            },
          }),
      });
    }
  }

  /**
   * The AI SDK ToolSet of every server's tools. One object, updated in place
   * when servers change their tools, so it can be held on to.
   */
  get tools(): ToolSet {
    return this.catalog.tools;
  }

  /**
   * A snapshot of every server's state, by server name. A user's toolbox
   * leaves out the `authorizationUrl` of a server with app-wide `auth`: only
   * the app's administrator signs that in, from this toolbox's `status()`.
   */
  status(): Record<string, McpServerStatus> {
    const own = new Map(this.own.map(c => [c.name, c]));
    const borrowed = new Map(this.borrowed.map(c => [c.name, c]));
    return Object.fromEntries(
      this.order.map(name => [
        name,
        own.get(name)?.status() ??
          borrowed.get(name)?.status({ borrowed: true }) ?? {
            name,
            state: 'per-user',
            tools: 0,
            attempts: 0,
          },
      ]),
    );
  }

  /** Connects every server in parallel and indexes their tools. Failures are reported in `status()`. */
  async start(abortSignal?: AbortSignal): Promise<void> {
    await Promise.all(this.own.map(connection => connection.start(abortSignal)));
    abortSignal?.throwIfAborted();
    await this.catalog.sync(abortSignal);
  }

  /**
   * The toolbox of one signed-in user: the shared servers' tools (same
   * connections, same index entries: nothing is re-embedded) plus that user's
   * own connections to servers with per-user `auth`, each `ready` or
   * `needs-auth`. Cached per user until `close()` or `userIdleTimeoutMs` of
   * disuse; closing it ends only that user's connections.
   */
  async forUser({
    userId,
    abortSignal,
  }: {
    /** Your app's id of the signed-in user (from your session, never from the request body). */
    userId: string;
    /** Cancels connecting. */
    abortSignal?: AbortSignal;
  }): Promise<McpToolbox<TIndex>> {
    this.assertOpen();
    if (this.users === undefined) {
      throw new InvalidArgumentError({
        argument: 'forUser',
        value: userId,
        message:
          'call forUser() on the toolbox connectMcpServers() returned, not on a per-user one.',
      });
    }
    if (typeof userId !== 'string' || userId === '') {
      throw new InvalidArgumentError({
        argument: 'userId',
        value: userId,
        message: 'expected a non-empty string identifying the signed-in user.',
      });
    }
    return await this.users.get({ userId, abortSignal });
  }

  /**
   * Finishes a sign-in from your OAuth callback route: exchanges `code` for
   * tokens (after checking `state` was started by this toolbox's user for
   * that server), connects the server and indexes its tools. `server` may be
   * left out when `state` identifies it. `state` is required: a callback
   * without it, or with one this toolbox did not start, is refused
   * ({@link McpAuthorizationError}, `invalid-state`). A server with app-wide
   * `auth` (an SDK provider: one identity for every user) finishes only on
   * the toolbox `connectMcpServers()` returned, never on a `forUser()` one.
   * Resolves with the server's status.
   */
  async finishAuth({
    server,
    code,
    state,
    abortSignal,
  }: {
    /** The server's name; found from `state` when omitted. */
    server?: string;
    /** The callback's `code` query parameter. */
    code: string;
    /** The callback's `state` query parameter (required; typed optional so a missing one is refused with a clear error). */
    state?: string;
    /** Cancels connecting afterwards. */
    abortSignal?: AbortSignal;
  }): Promise<McpServerStatus> {
    this.assertOpen();
    const connection = await findAuthConnection({
      own: this.own,
      borrowed: this.borrowed,
      perUser: this.perUser,
      servers: this.options.servers,
      userId: this.userId,
      server,
      state,
    });
    await connection.finishAuth({ code, state, abortSignal });
    await this.catalog.sync(abortSignal);
    return connection.status();
  }

  /**
   * Re-lists every ready server, retries failed ones (and `needs-auth` ones
   * once new tokens are in the store), then syncs tools and index. Not needed
   * for `list_changed`; useful for servers that change without notifying.
   */
  async refresh({
    abortSignal,
  }: {
    /** Cancels waiting (not the re-lists). */ abortSignal?: AbortSignal;
  } = {}): Promise<McpSyncResult> {
    this.assertOpen();
    // Our own final sync reports what changed; background syncs would take the credit.
    this.refreshing++;
    try {
      await Promise.all(
        this.own.map(connection =>
          connection.state === 'ready' ? connection.relist() : connection.retry(abortSignal),
        ),
      );
    } finally {
      this.refreshing--;
    }
    return await this.catalog.sync(abortSignal);
  }

  /** Retries `needs-auth` servers whose user signed in elsewhere (another process). */
  async recheckAuth(): Promise<void> {
    const waiting = this.own.filter(connection => connection.state === 'needs-auth');
    await Promise.all(waiting.map(connection => connection.retry()));
  }

  /** True while one of its own servers runs a tool call. */
  get busy(): boolean {
    return this.own.some(connection => connection.busy);
  }

  /**
   * Closes its own connections and child processes (a per-user toolbox: only
   * that user's), and removes their tools from `tools` and the index. The
   * process-wide toolbox also closes every per-user one.
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.options.parent?.onClose();
      await this.users?.closeAll();
      await Promise.all(this.own.map(connection => connection.close()));
      // Queued behind any running sync: empties `tools` and drops our share of the index.
      await this.catalog.release();
    })();
    return this.closing;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /** Syncs after a change of its own servers or of the shared ones it borrows. */
  async backgroundSync(): Promise<void> {
    if (this.closing !== undefined || this.refreshing > 0) return;
    try {
      await this.catalog.sync();
    } catch (error) {
      this.onEvent({ type: 'error', error: error as Error });
    }
  }

  private connection(name: string, config: McpServerConfig): McpServerConnection {
    const { settings, onAuthorizationRequired, onElicitation } = this.options;
    const userId = this.perUser.has(name) ? this.userId : undefined;
    const shared = !this.perUser.has(name) && this.options.parent === undefined;
    return new McpServerConnection({
      name,
      config,
      userId,
      settings: serverSettings({ defaults: settings, config }),
      onEvent: this.onEvent,
      onElicitation,
      onAuthorizationRequired: url =>
        onAuthorizationRequired?.({
          server: name,
          ...(userId === undefined ? {} : { userId }),
          ...(url === undefined ? {} : { url }),
        }),
      // A shared server's tools are in every per-user toolbox too.
      onTools: () => {
        void this.backgroundSync();
        if (shared) this.users?.forEach(user => void user.backgroundSync());
      },
    });
  }

  private assertOpen(): void {
    if (this.closing !== undefined) {
      throw new McpConnectionError({
        server: '*',
        message: 'This MCP toolbox is closed; create a new one with connectMcpServers().',
      });
    }
  }
}
