import { setTimeout as delay } from 'node:timers/promises';
import type {
  ElicitRequest,
  ElicitResult,
  Tool as McpTool,
} from '@modelcontextprotocol/sdk/types.js';
import { McpAuthorizationError } from '../errors/mcp-authorization-error.ts';
import { McpConnectionError } from '../errors/mcp-connection-error.ts';
import { McpTimeoutError } from '../errors/mcp-timeout-error.ts';
import { ConnectionAuth } from './auth/connection-auth.ts';
import { backoffDelayMs } from '../util/backoff-delay.ts';
import { PendingWork } from '../util/pending-work.ts';
import { toCallError } from './call-error.ts';
import { CallTracker } from './call-tracker.ts';
import { disposeConnection } from './dispose-connection.ts';
import {
  answerElicitation,
  elicitationRequest,
  type McpElicitationHandler,
} from './elicitation.ts';
import { isUnauthorized } from './error-codes.ts';
import { listAllTools } from './list-all-tools.ts';
import { openClient, type OpenedClient } from './open-client.ts';
import { RelistScheduler } from './relist-scheduler.ts';
import { serverUnavailable } from './server-unavailable.ts';
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
  elicitationTimeoutMs: number;
  elicitationModes: readonly ('form' | 'url')[];
};

/**
 * One MCP server: connects, lists every page, follows `list_changed`
 * (throttled, full re-list), reconnects with backoff after a crash, calls
 * tools, answers elicitations through the app's hook, and, for servers with
 * `auth`, turns "the user must sign in" into the `needs-auth` state until
 * `finishAuth()`. `onTools` fires whenever its tool list may have changed.
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
  readonly userId: string | undefined;
  private config: McpServerConfig;
  private settings: McpConnectionSettings;
  private onTools: () => void;
  private onEvent: (event: McpEvent) => void;
  private onElicitation: McpElicitationHandler | undefined;
  private onAuthorizationRequired: ((url: string | undefined) => void) | undefined;
  private auth: ConnectionAuth | undefined;
  private currentState: McpServerState = 'connecting';
  private currentTools: McpTool[] = [];
  private live: OpenedClient | undefined;
  // Identifies the live client: callbacks from a replaced client compare and bail out.
  private generation = 0;
  private error: Error | undefined;
  private attempts = 0;
  private lifetime = new AbortController();
  private connecting: Promise<unknown> | undefined;
  private relists: RelistScheduler;
  private probing = false;
  private closing: Promise<void> | undefined;
  private disposals = new PendingWork();
  private calls = new CallTracker();
  // The access token the server last refused; a different one in the store means someone signed in.
  private refusedToken: string | undefined;

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
    /** The user, for servers with per-user `auth`. */
    userId?: string | undefined;
    /** Answers the server's elicitations (declined without it). */
    onElicitation?: McpElicitationHandler | undefined;
    /** Told when the user has to sign in. */
    onAuthorizationRequired?: ((url: string | undefined) => void) | undefined;
  }) {
    this.name = options.name;
    this.userId = options.userId;
    this.config = options.config;
    this.settings = options.settings;
    this.onTools = options.onTools;
    this.onEvent = options.onEvent;
    this.onElicitation = options.onElicitation;
    this.onAuthorizationRequired = options.onAuthorizationRequired;
    this.relists = new RelistScheduler({
      debounceMs: options.settings.listChangedDebounceMs,
      run: () => this.relistOnce(),
    });
    if ('auth' in options.config && options.config.auth !== undefined) {
      this.auth = new ConnectionAuth({
        server: this.name,
        serverUrl: new URL(options.config.url).href,
        auth: options.config.auth,
        userId: options.userId,
        onAuthorizationUrl: () => {},
      });
    }
  }

  /** The server's current tools, as it names them. */
  get tools(): readonly McpTool[] {
    return this.currentTools;
  }

  get state(): McpServerState {
    return this.currentState;
  }

  /** Tool calls running now. */
  get busy(): boolean {
    return this.calls.busy;
  }

  status(): McpServerStatus {
    const pid = this.live?.pid;
    const url = this.currentState === 'needs-auth' ? this.auth?.authorizationUrl : undefined;
    return {
      name: this.name,
      state: this.currentState,
      tools: this.currentTools.length,
      attempts: this.attempts,
      ...(pid === undefined ? {} : { pid }),
      ...(this.error === undefined ? {} : { error: this.error }),
      ...(url === undefined ? {} : { authorizationUrl: url }),
      ...(this.userId === undefined ? {} : { userId: this.userId }),
    };
  }

  /** First connection. Never throws: a failure leaves the server `failed` or `needs-auth`. */
  async start(abortSignal?: AbortSignal): Promise<void> {
    this.currentState = 'connecting';
    try {
      await this.connect(abortSignal);
    } catch (error) {
      if (this.state === 'closed') return;
      if (isUnauthorized(error)) return void (await this.needsAuth(error));
      this.currentState = 'failed';
      this.error = error as Error;
      this.emit({ type: 'connect-failed', server: this.name, error: error as Error });
    }
  }

  /** Tries a `failed` server again from scratch; a `needs-auth` one once someone signed in. */
  async retry(abortSignal?: AbortSignal): Promise<void> {
    if (this.currentState === 'needs-auth') {
      const tokens = await this.auth?.provider.tokens();
      if (tokens === undefined || tokens.access_token === this.refusedToken) return;
    } else if (this.currentState !== 'failed') return;
    this.attempts = 0;
    await this.start(abortSignal);
    if (this.state === 'ready') this.onTools();
  }

  /**
   * Exchanges the sign-in callback's `code` (checked against `state`) for
   * tokens and connects. Throws {@link McpAuthorizationError} when the
   * exchange fails or the server still refuses.
   */
  async finishAuth({
    code,
    state,
    abortSignal,
  }: {
    code: string;
    state?: string | undefined;
    abortSignal?: AbortSignal | undefined;
  }): Promise<void> {
    if (this.auth === undefined) {
      throw new McpAuthorizationError({
        server: this.name,
        reason: 'no-auth',
        message: `MCP server "${this.name}" has no \`auth\`; there is no sign-in to finish.`,
      });
    }
    if (this.currentState === 'closed') throw this.unavailable();
    await this.auth.finish({ code, state });
    this.emit({ type: 'authorized', server: this.name });
    await this.connecting?.catch(() => {});
    // A live or reconnecting connection picks the new tokens up on its next request.
    if (this.currentState === 'ready' || this.currentState === 'reconnecting') return;
    this.refusedToken = undefined;
    this.attempts = 0;
    await this.start(abortSignal);
    this.onTools();
    if (this.state !== 'ready') throw this.error ?? this.unavailable();
  }

  /** Re-lists every page now (a listing already running is followed by a fresh one). */
  relist(): Promise<void> {
    return this.relists.now();
  }

  /** Calls a tool by its server-side name; maps timeouts, crashes, sign-in and server errors. */
  async callTool(
    tool: string,
    args: Record<string, unknown>,
    abortSignal: AbortSignal | undefined,
    toolCallId?: string,
  ): Promise<McpCallResult> {
    const live = this.live;
    if (this.currentState !== 'ready' || live === undefined) throw this.unavailable(tool);
    const generation = this.generation;
    const { callTimeoutMs } = this.settings;
    const timeout = new McpTimeoutError({
      server: this.name,
      operation: 'tools/call',
      timeoutMs: callTimeoutMs,
      tool,
    });
    try {
      const { client } = live;
      return await this.calls.run({ client, tool, args, abortSignal, toolCallId, timeout });
    } catch (cause) {
      if (cause === timeout || abortSignal?.aborted) throw cause;
      if (this.state === 'closed') throw this.unavailable(tool);
      if (isUnauthorized(cause)) {
        await this.needsAuth(cause, generation);
        throw this.unavailable(tool);
      }
      const { error, disconnected } = toCallError({
        server: this.name,
        tool,
        cause,
        callTimeoutMs,
      });
      if (disconnected) this.disconnected(generation, cause);
      throw error;
    }
  }

  /** Ends the connection and any child process; idempotent. */
  close(): Promise<void> {
    this.closing ??= this.shutDown();
    return this.closing;
  }

  private async shutDown(): Promise<void> {
    const wasReady = this.currentState === 'ready';
    this.currentState = 'closed';
    this.generation++;
    this.relists.cancel();
    const message = `MCP server "${this.name}" was closed.`;
    this.lifetime.abort(new McpConnectionError({ server: this.name, message }));
    this.currentTools = [];
    // An attempt in flight sees the abort, tears itself down and reports it via track.
    await this.connecting?.catch(() => {});
    const live = this.live;
    this.live = undefined;
    await disposeConnection({ ...live, terminateSession: wasReady });
    await this.disposals.settled();
  }

  private emit(event: McpEvent): void {
    this.onEvent(this.userId === undefined ? event : { ...event, userId: this.userId });
  }

  private track(disposal: Promise<void>): void {
    this.disposals.track(disposal);
  }

  private async connect(abortSignal?: AbortSignal): Promise<void> {
    const generation = ++this.generation;
    const lifetime = this.lifetime.signal;
    const attempt = openClient({
      server: this.name,
      config: this.config,
      limits: this.settings,
      signal: abortSignal ? AbortSignal.any([lifetime, abortSignal]) : lifetime,
      onDisposal: disposal => this.track(disposal),
      auth: this.auth,
      elicitation: this.settings.elicitationModes,
      handlers: {
        onListChanged: () => this.listChanged(generation),
        onClose: () => this.disconnected(generation, new Error('the connection closed')),
        onError: error => this.transportError(generation, error),
        onElicitation: (params, signal) => this.elicit(params, signal),
      },
    });
    this.connecting = attempt;
    const live = await attempt.finally(() => (this.connecting = undefined));
    if (generation !== this.generation) {
      // close() ran while the listing finished; do not resurrect.
      this.track(disposeConnection(live));
      throw new McpConnectionError({
        server: this.name,
        message: `MCP server "${this.name}" was closed.`,
      });
    }
    this.live = live;
    this.currentTools = live.tools;
    this.currentState = 'ready';
    this.error = undefined;
    this.attempts = 0;
    const pid = live.pid === undefined ? {} : { pid: live.pid };
    this.emit({ type: 'connected', server: this.name, tools: live.tools.length, ...pid });
  }

  // The user has to sign in (again, or for more scope): drop the connection and
  // its tools, keep the authorization URL for status() and the app's hook.
  private async needsAuth(cause: unknown, generation = this.generation): Promise<void> {
    if (generation !== this.generation || this.currentState === 'closed') return;
    this.generation++;
    this.relists.cancel();
    const live = this.live;
    this.live = undefined;
    if (live !== undefined) this.track(disposeConnection(live));
    const wasReady = this.currentState === 'ready';
    this.currentState = 'needs-auth';
    this.currentTools = [];
    this.refusedToken = (await this.auth?.provider.tokens())?.access_token;
    const url = this.auth?.authorizationUrl;
    this.error = new McpAuthorizationError({
      server: this.name,
      reason: 'needs-auth',
      authorizationUrl: url,
      cause,
      message:
        `MCP server "${this.name}" needs the user to sign in` +
        (url === undefined ? '.' : ` at ${url}.`),
    });
    this.emit({
      type: 'needs-auth',
      server: this.name,
      ...(url === undefined ? {} : { authorizationUrl: url }),
    });
    try {
      this.onAuthorizationRequired?.(url);
    } catch {
      // The app's hook must not break the connection's state.
    }
    if (wasReady) this.onTools();
  }

  private elicit(params: ElicitRequest['params'], signal: AbortSignal): Promise<ElicitResult> {
    return this.calls.whileUserAnswers(async origin => {
      const result = await answerElicitation({
        handler: this.onElicitation,
        timeoutMs: this.settings.elicitationTimeoutMs,
        onError: error => this.emit({ type: 'error', server: this.name, error }),
        request: elicitationRequest({
          params,
          origin: {
            server: this.name,
            ...(this.userId === undefined ? {} : { userId: this.userId }),
            ...origin,
            abortSignal: AbortSignal.any([signal, this.lifetime.signal]),
          },
        }),
      });
      this.emit({ type: 'elicitation', server: this.name, action: result.action });
      return result;
    });
  }

  private listChanged(generation: number): void {
    if (generation !== this.generation || this.currentState !== 'ready') return;
    this.emit({ type: 'list-changed', server: this.name });
    this.relists.notify();
  }

  private async relistOnce(): Promise<void> {
    const live = this.live;
    const generation = this.generation;
    if (this.currentState !== 'ready' || live === undefined) return;
    try {
      const tools = await listAllTools({
        client: live.client,
        server: this.name,
        timeoutMs: this.settings.listTimeoutMs,
        maxPages: this.settings.maxPages,
        abortSignal: this.lifetime.signal,
      });
      // A reconnect in the meantime lists on its own; this result may be stale.
      if (generation !== this.generation) return;
      this.currentTools = tools;
      this.emit({ type: 'relisted', server: this.name, tools: tools.length });
      this.onTools();
    } catch (error) {
      if (this.state === 'closed') return;
      if (isUnauthorized(error)) return void (await this.needsAuth(error, generation));
      this.emit({ type: 'error', server: this.name, error: error as Error });
    }
  }

  // The HTTP transport reports a dead server only as errors (its SSE stream
  // failing); a ping tells a real outage from a transient hiccup.
  private transportError(generation: number, error: Error): void {
    if (generation !== this.generation || this.currentState !== 'ready') return;
    this.emit({ type: 'error', server: this.name, error });
    const live = this.live;
    if (this.probing || live === undefined) return;
    this.probing = true;
    live.client
      .ping({ timeout: Math.min(5_000, this.settings.callTimeoutMs) })
      .catch((pingError: unknown) =>
        isUnauthorized(pingError) || isUnauthorized(error)
          ? this.needsAuth(pingError, generation)
          : this.disconnected(generation, pingError),
      )
      .finally(() => (this.probing = false));
  }

  private disconnected(generation: number, cause: unknown): void {
    if (generation !== this.generation || this.currentState !== 'ready') return;
    this.generation++;
    this.currentState = 'reconnecting';
    const why = cause instanceof Error ? cause.message : String(cause);
    const message = `MCP server "${this.name}" disconnected (${why}).`;
    this.error = new McpConnectionError({ server: this.name, cause, message });
    this.emit({ type: 'disconnected', server: this.name, error: this.error });
    const live = this.live;
    this.live = undefined;
    this.track(disposeConnection({ ...live }));
    void this.reconnect();
  }

  private async reconnect(): Promise<void> {
    const { initialDelayMs, maxDelayMs, maxAttempts } = this.settings.reconnect;
    while (this.attempts < maxAttempts) {
      const attempt = ++this.attempts;
      const delayMs = backoffDelayMs({ attempt, initialDelayMs, maxDelayMs });
      this.emit({ type: 'reconnecting', server: this.name, attempt, delayMs });
      try {
        await delay(delayMs, undefined, { signal: this.lifetime.signal });
        await this.connect();
        this.onTools();
        return;
      } catch (error) {
        if (this.state === 'closed') return;
        if (isUnauthorized(error)) {
          await this.needsAuth(error);
          return this.onTools();
        }
        this.error = error as Error;
        this.emit({ type: 'error', server: this.name, error: error as Error });
      }
    }
    this.currentState = 'failed';
    this.currentTools = [];
    const error = this.error ?? new Error('unknown');
    this.emit({ type: 'gave-up', server: this.name, error });
    this.onTools();
  }

  private unavailable(tool?: string): Error {
    return serverUnavailable({
      server: this.name,
      state: this.currentState,
      error: this.error,
      authorizationUrl: this.auth?.authorizationUrl,
      ...(tool === undefined ? {} : { tool }),
    });
  }
}
