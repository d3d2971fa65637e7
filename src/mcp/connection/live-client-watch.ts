import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import { isUnauthorized } from '../error-codes.ts';
import { listAllTools } from '../catalog/list-all-tools.ts';
import { RelistScheduler } from '../catalog/relist-scheduler.ts';
import type { McpEvent } from '../types.ts';

/** The connection's ready client and the generation it belongs to. */
export type CurrentClient = { client: Client; generation: number };

/** What a {@link LiveClientWatch} follows and whom it tells. */
export type LiveClientWatchOptions = {
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
};

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
  private options: LiveClientWatchOptions;
  private relists: RelistScheduler;
  private probing = false;

  constructor(options: LiveClientWatchOptions) {
    this.options = options;
    this.relists = new RelistScheduler({
      debounceMs: options.settings.listChangedDebounceMs,
      run: () => this.relistOnce(),
    });
  }

  /** The client of `generation` says its tools changed. */
  listChanged(generation: number): void {
    if (this.options.current()?.generation !== generation) return;
    this.options.emit({ type: 'list-changed', server: this.options.server });
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

  /**
   * The transport of the client of `generation` reported an error. The HTTP
   * transport reports a dead server only as errors (its SSE stream failing);
   * a ping tells a real outage from a transient hiccup.
   */
  transportError(generation: number, error: Error): void {
    const current = this.options.current();
    if (current?.generation !== generation) return;
    this.options.emit({ type: 'error', server: this.options.server, error });
    if (this.probing) return;
    this.probing = true;
    current.client
      .ping({ timeout: Math.min(5_000, this.options.settings.callTimeoutMs) })
      .catch((pingError: unknown) =>
        isUnauthorized(pingError) || isUnauthorized(error)
          ? this.options.onUnauthorized(pingError, generation)
          : this.options.onDown(pingError, generation),
      )
      .finally(() => (this.probing = false));
  }

  private async relistOnce(): Promise<void> {
    const current = this.options.current();
    if (current === undefined) return;
    const { generation } = current;
    try {
      const tools = await listAllTools({
        client: current.client,
        server: this.options.server,
        timeoutMs: this.options.settings.listTimeoutMs,
        maxPages: this.options.settings.maxPages,
        abortSignal: this.options.signal,
      });
      // A reconnect in the meantime lists on its own; this result may be stale.
      if (this.options.current()?.generation !== generation) return;
      this.options.onListed(tools);
    } catch (error) {
      // Aborted exactly when the connection closed.
      if (this.options.signal.aborted) return;
      if (isUnauthorized(error)) return void (await this.options.onUnauthorized(error, generation));
      this.options.emit({ type: 'error', server: this.options.server, error: error as Error });
    }
  }
}
