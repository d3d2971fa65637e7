import { setTimeout as delay } from 'node:timers/promises';
import type { Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import { McpConnectionError } from '../errors/mcp-connection-error.ts';
import { backoffDelayMs } from './backoff-delay.ts';
import { toCallError } from './call-error.ts';
import { disposeConnection } from './dispose-connection.ts';
import { linkSignal } from './linked-signal.ts';
import { listAllTools } from './list-all-tools.ts';
import { openClient, type OpenedClient } from './open-client.ts';
import type { McpCallResult } from './to-model-output.ts';
import type { McpEvent, McpServerConfig, McpServerState, McpServerStatus } from './types.ts';

/** Resolved settings of one server (defaults applied). */
export type McpConnectionSettings = {
  connectTimeoutMs: number;
  listTimeoutMs: number;
  callTimeoutMs: number;
  maxPages: number;
  listChangedDebounceMs: number;
  reconnect: { initialDelayMs: number; maxDelayMs: number; maxAttempts: number };
};

/**
 * One MCP server: connects, lists every page, follows `list_changed`
 * (throttled, full re-list), reconnects with backoff after a crash, and calls
 * tools. `onTools` fires whenever the server's tool list may have changed.
 * Internal to `connectMcpServers`.
 *
 * @example
 * ```ts
 * const connection = new McpServerConnection({ name: 'fs', config, settings, onTools, onEvent });
 * await connection.start();
 * ```
 */
export class McpServerConnection {
  readonly name: string;
  #config: McpServerConfig;
  #settings: McpConnectionSettings;
  #onTools: () => void;
  #onEvent: (event: McpEvent) => void;
  #state: McpServerState = 'connecting';
  #tools: McpTool[] = [];
  #live: OpenedClient | undefined;
  // Identifies the live client: callbacks from a replaced client compare and bail out.
  #generation = 0;
  #error: Error | undefined;
  #attempts = 0;
  #lifetime = new AbortController();
  #connecting: Promise<unknown> | undefined;
  #relistTimer: NodeJS.Timeout | undefined;
  #relisting: Promise<void> | undefined;
  #relistAgain = false;
  #probing = false;
  #closing: Promise<void> | undefined;
  #disposals = new Set<Promise<void>>();

  constructor(options: {
    /** The server's name. */
    name: string;
    /** How to reach it. */
    config: McpServerConfig;
    /** Limits, debounce and reconnect policy. */
    settings: McpConnectionSettings;
    /** Called when the tool list may have changed. */
    onTools: () => void;
    /** Lifecycle events. */
    onEvent: (event: McpEvent) => void;
  }) {
    this.name = options.name;
    this.#config = options.config;
    this.#settings = options.settings;
    this.#onTools = options.onTools;
    this.#onEvent = options.onEvent;
  }

  /** The server's current tools, as it names them. */
  get tools(): readonly McpTool[] {
    return this.#tools;
  }

  get state(): McpServerState {
    return this.#state;
  }

  status(): McpServerStatus {
    const pid = this.#live?.pid;
    return {
      name: this.name,
      state: this.#state,
      tools: this.#tools.length,
      attempts: this.#attempts,
      ...(pid === undefined ? {} : { pid }),
      ...(this.#error === undefined ? {} : { error: this.#error }),
    };
  }

  /** First connection. Never throws: a failure leaves the server `failed` (see `status()`). */
  async start(abortSignal?: AbortSignal): Promise<void> {
    this.#state = 'connecting';
    try {
      await this.#connect(abortSignal);
    } catch (error) {
      if (this.state === 'closed') return;
      this.#state = 'failed';
      this.#error = error as Error;
      this.#onEvent({ type: 'connect-failed', server: this.name, error: error as Error });
    }
  }

  /** Tries a `failed` server again from scratch (no-op in any other state). */
  async retry(abortSignal?: AbortSignal): Promise<void> {
    if (this.#state !== 'failed') return;
    this.#attempts = 0;
    await this.start(abortSignal);
    if (this.state === 'ready') this.#onTools();
  }

  /** Re-lists every page now (a listing already running is followed by a fresh one). */
  relist(): Promise<void> {
    if (this.#relisting !== undefined) {
      this.#relistAgain = true;
      return this.#relisting;
    }
    this.#relisting = this.#runRelists().finally(() => (this.#relisting = undefined));
    return this.#relisting;
  }

  /** Calls a tool by its server-side name; maps timeouts, crashes and server errors. */
  async callTool(
    tool: string,
    args: Record<string, unknown>,
    abortSignal: AbortSignal | undefined,
  ): Promise<McpCallResult> {
    const live = this.#live;
    if (this.#state !== 'ready' || live === undefined) throw this.#unavailable(tool);
    const generation = this.#generation;
    const { callTimeoutMs } = this.#settings;
    const link = linkSignal(abortSignal);
    try {
      const params = { name: tool, arguments: args };
      const options = { timeout: callTimeoutMs, signal: link.signal };
      return (await live.client.callTool(params, undefined, options)) as McpCallResult;
    } catch (cause) {
      // The SDK reports an abort as a timeout; the caller's own reason is clearer.
      abortSignal?.throwIfAborted();
      if (this.state === 'closed') throw this.#unavailable(tool);
      const { error, disconnected } = toCallError({
        server: this.name,
        tool,
        cause,
        callTimeoutMs,
      });
      if (disconnected) this.#disconnected(generation, cause);
      throw error;
    } finally {
      link.dispose();
    }
  }

  /** Ends the connection and any child process; idempotent. */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    const wasReady = this.#state === 'ready';
    this.#state = 'closed';
    this.#generation++;
    clearTimeout(this.#relistTimer);
    const message = `MCP server "${this.name}" was closed.`;
    this.#lifetime.abort(new McpConnectionError({ server: this.name, message }));
    this.#tools = [];
    // An attempt in flight sees the abort, tears itself down and reports it via #track.
    await this.#connecting?.catch(() => {});
    const live = this.#live;
    this.#live = undefined;
    await disposeConnection({ ...live, terminateSession: wasReady });
    while (this.#disposals.size > 0) await Promise.all([...this.#disposals]);
  }

  #track(disposal: Promise<void>): void {
    this.#disposals.add(disposal);
    void disposal.finally(() => this.#disposals.delete(disposal));
  }

  async #connect(abortSignal?: AbortSignal): Promise<void> {
    const generation = ++this.#generation;
    const lifetime = this.#lifetime.signal;
    const attempt = openClient({
      server: this.name,
      config: this.#config,
      limits: this.#settings,
      signal: abortSignal ? AbortSignal.any([lifetime, abortSignal]) : lifetime,
      onDisposal: disposal => this.#track(disposal),
      handlers: {
        onListChanged: () => this.#listChanged(generation),
        onClose: () => this.#disconnected(generation, new Error('the connection closed')),
        onError: error => this.#transportError(generation, error),
      },
    });
    this.#connecting = attempt;
    const live = await attempt.finally(() => (this.#connecting = undefined));
    if (generation !== this.#generation) {
      // close() ran while the listing finished; do not resurrect.
      this.#track(disposeConnection(live));
      throw new McpConnectionError({
        server: this.name,
        message: `MCP server "${this.name}" was closed.`,
      });
    }
    this.#live = live;
    this.#tools = live.tools;
    this.#state = 'ready';
    this.#error = undefined;
    this.#attempts = 0;
    const pid = live.pid === undefined ? {} : { pid: live.pid };
    this.#onEvent({ type: 'connected', server: this.name, tools: live.tools.length, ...pid });
  }

  #listChanged(generation: number): void {
    if (generation !== this.#generation || this.#state !== 'ready') return;
    this.#onEvent({ type: 'list-changed', server: this.name });
    // Throttle: the first notification of a burst schedules one re-list; later ones join it.
    if (this.#relistTimer !== undefined) return;
    if (this.#relisting !== undefined) {
      this.#relistAgain = true;
      return;
    }
    this.#relistTimer = setTimeout(() => {
      this.#relistTimer = undefined;
      void this.relist();
    }, this.#settings.listChangedDebounceMs);
  }

  async #runRelists(): Promise<void> {
    do {
      this.#relistAgain = false;
      const live = this.#live;
      const generation = this.#generation;
      if (this.#state !== 'ready' || live === undefined) return;
      try {
        const tools = await listAllTools({
          client: live.client,
          server: this.name,
          timeoutMs: this.#settings.listTimeoutMs,
          maxPages: this.#settings.maxPages,
          abortSignal: this.#lifetime.signal,
        });
        // A reconnect in the meantime lists on its own; this result may be stale.
        if (generation !== this.#generation) return;
        this.#tools = tools;
        this.#onEvent({ type: 'relisted', server: this.name, tools: tools.length });
        this.#onTools();
      } catch (error) {
        if (this.state === 'closed') return;
        this.#onEvent({ type: 'error', server: this.name, error: error as Error });
      }
    } while (this.#relistAgain);
  }

  // The HTTP transport reports a dead server only as errors (its SSE stream
  // failing); a ping tells a real outage from a transient hiccup.
  #transportError(generation: number, error: Error): void {
    if (generation !== this.#generation || this.#state !== 'ready') return;
    this.#onEvent({ type: 'error', server: this.name, error });
    const live = this.#live;
    if (this.#probing || live === undefined) return;
    this.#probing = true;
    live.client
      .ping({ timeout: Math.min(5_000, this.#settings.callTimeoutMs) })
      .catch((pingError: unknown) => this.#disconnected(generation, pingError))
      .finally(() => (this.#probing = false));
  }

  #disconnected(generation: number, cause: unknown): void {
    if (generation !== this.#generation || this.#state !== 'ready') return;
    this.#generation++;
    this.#state = 'reconnecting';
    const why = cause instanceof Error ? cause.message : String(cause);
    const message = `MCP server "${this.name}" disconnected (${why}).`;
    this.#error = new McpConnectionError({ server: this.name, cause, message });
    this.#onEvent({ type: 'disconnected', server: this.name, error: this.#error });
    const live = this.#live;
    this.#live = undefined;
    this.#track(disposeConnection({ ...live }));
    void this.#reconnect();
  }

  async #reconnect(): Promise<void> {
    const { initialDelayMs, maxDelayMs, maxAttempts } = this.#settings.reconnect;
    while (this.#attempts < maxAttempts) {
      const attempt = ++this.#attempts;
      const delayMs = backoffDelayMs({ attempt, initialDelayMs, maxDelayMs });
      this.#onEvent({ type: 'reconnecting', server: this.name, attempt, delayMs });
      try {
        await delay(delayMs, undefined, { signal: this.#lifetime.signal });
        await this.#connect();
        this.#onTools();
        return;
      } catch (error) {
        if (this.state === 'closed') return;
        this.#error = error as Error;
        this.#onEvent({ type: 'error', server: this.name, error: error as Error });
      }
    }
    this.#state = 'failed';
    this.#tools = [];
    const error = this.#error ?? new Error('unknown');
    this.#onEvent({ type: 'gave-up', server: this.name, error });
    this.#onTools();
  }

  #unavailable(tool: string): McpConnectionError {
    const state = this.#state;
    const cause = this.#error?.message;
    const why =
      state === 'closed'
        ? 'the toolbox was closed'
        : state === 'reconnecting'
          ? `it is reconnecting after: ${cause ?? 'a disconnect'}; retry shortly`
          : `it is ${state}${cause === undefined ? '' : ` (${cause})`}`;
    return new McpConnectionError({
      server: this.name,
      tool,
      message: `Tool "${tool}" cannot run: MCP server "${this.name}" is not connected; ${why}.`,
    });
  }
}
