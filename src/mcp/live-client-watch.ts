import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import { isUnauthorized } from './error-codes.ts';
import { listAllTools } from './list-all-tools.ts';
import { RelistScheduler } from './relist-scheduler.ts';
import type { McpEvent } from './types.ts';

/** The connection's ready client and the generation it belongs to. */
export type CurrentClient = { client: Client; generation: number };

/**
 * Follows a server's live client between connects: `list_changed`
 * (debounced, then a full re-list), re-lists on demand, and transport errors
 * (a ping tells an outage from a hiccup). Each client's callbacks carry its
 * generation; a replaced client's are ignored. Internal to `McpServerConnection`.
 *
 * @example
 * ```ts
 * const watch = new LiveClientWatch({ server: 'fs', settings, signal, emit, current, onListed, onUnauthorized, onDown });
 * handlers.onListChanged = () => watch.listChanged(generation);
 * ```
 */
export class LiveClientWatch {
  private server: string;
  private settings: { listTimeoutMs: number; maxPages: number; callTimeoutMs: number };
  private signal: AbortSignal;
  private emit: (event: McpEvent) => void;
  private current: () => CurrentClient | undefined;
  private onListed: (tools: McpTool[]) => void;
  private onUnauthorized: (cause: unknown, generation: number) => Promise<void>;
  private onDown: (cause: unknown, generation: number) => void;
  private relists: RelistScheduler;
  private probing = false;

  constructor(options: {
    /** The server's name. */
    server: string;
    /** Listing limits, the list_changed debounce and the call timeout (bounds the ping). */
    settings: {
      listTimeoutMs: number;
      maxPages: number;
      callTimeoutMs: number;
      listChangedDebounceMs: number;
    };
    /** The connection's lifetime: aborted on close. */
    signal: AbortSignal;
    /** Lifecycle events. */
    emit: (event: McpEvent) => void;
    /** The ready client, if the connection is ready. */
    current: () => CurrentClient | undefined;
    /** A re-list of the current client finished. */
    onListed: (tools: McpTool[]) => void;
    /** The server refused the user's token. */
    onUnauthorized: (cause: unknown, generation: number) => Promise<void>;
    /** The server is gone. */
    onDown: (cause: unknown, generation: number) => void;
  }) {
    this.server = options.server;
    this.settings = options.settings;
    this.signal = options.signal;
    this.emit = options.emit;
    this.current = options.current;
    this.onListed = options.onListed;
    this.onUnauthorized = options.onUnauthorized;
    this.onDown = options.onDown;
    this.relists = new RelistScheduler({
      debounceMs: options.settings.listChangedDebounceMs,
      run: () => this.relistOnce(),
    });
  }

  /** The client of `generation` says its tools changed. */
  listChanged(generation: number): void {
    if (this.current()?.generation !== generation) return;
    this.emit({ type: 'list-changed', server: this.server });
    this.relists.notify();
  }

  /** Re-lists every page now (a listing already running is followed by a fresh one). */
  relist(): Promise<void> {
    return this.relists.now();
  }

  /** Drops a scheduled re-list (the client is going away). */
  cancel(): void {
    this.relists.cancel();
  }

  // The HTTP transport reports a dead server only as errors (its SSE stream
  // failing); a ping tells a real outage from a transient hiccup.
  /** The transport of the client of `generation` reported an error. */
  transportError(generation: number, error: Error): void {
    const current = this.current();
    if (current?.generation !== generation) return;
    this.emit({ type: 'error', server: this.server, error });
    if (this.probing) return;
    this.probing = true;
    current.client
      .ping({ timeout: Math.min(5_000, this.settings.callTimeoutMs) })
      .catch((pingError: unknown) =>
        isUnauthorized(pingError) || isUnauthorized(error)
          ? this.onUnauthorized(pingError, generation)
          : this.onDown(pingError, generation),
      )
      .finally(() => (this.probing = false));
  }

  private async relistOnce(): Promise<void> {
    const current = this.current();
    if (current === undefined) return;
    const { generation } = current;
    try {
      const tools = await listAllTools({
        client: current.client,
        server: this.server,
        timeoutMs: this.settings.listTimeoutMs,
        maxPages: this.settings.maxPages,
        abortSignal: this.signal,
      });
      // A reconnect in the meantime lists on its own; this result may be stale.
      if (this.current()?.generation !== generation) return;
      this.onListed(tools);
    } catch (error) {
      // Aborted exactly when the connection closed.
      if (this.signal.aborted) return;
      if (isUnauthorized(error)) return void (await this.onUnauthorized(error, generation));
      this.emit({ type: 'error', server: this.server, error: error as Error });
    }
  }
}
