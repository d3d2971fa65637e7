// connection/: one server's connection: transport, connect within deadlines, the live client
// and its watch, reconnects with backoff, and teardown that leaves no child process behind.
import type {
  ElicitRequest,
  ElicitResult,
  Tool as McpTool,
} from '@modelcontextprotocol/sdk/types.js';
import { McpConnectionError } from '../../errors/mcp-connection-error.ts';
import { McpTimeoutError } from '../../errors/mcp-timeout-error.ts';
import { ServerSignIn } from '../auth/server-sign-in.ts';
import { toCallError } from '../calls/call-error.ts';
import { CallTracker } from '../calls/call-tracker.ts';
import type { McpConnectionSettings, McpServerConnectionOptions } from './connection-settings.ts';
import { ClientSlot } from './client-slot.ts';
import { elicitationBridge } from '../elicitation/elicitation-bridge.ts';
import { isUnauthorized } from '../error-codes.ts';
import { LiveClientWatch } from './live-client-watch.ts';
import { openClient } from './open-client.ts';
import { ReconnectBackoff } from './reconnect-backoff.ts';
import { serverUnavailable } from './server-unavailable.ts';
import type { McpCallResult } from '../calls/to-model-output.ts';
import type { McpEvent, McpServerConfig, McpServerState, McpServerStatus } from '../types.ts';
import {
  type McpTraceMeta,
  recordMcpEvent,
  traceMcpRequest,
  traceSignIn,
} from '../../telemetry/mcp-telemetry.ts';

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
  private signIn: ServerSignIn;
  private currentState: McpServerState = 'connecting';
  private currentTools: McpTool[] = [];
  private slot: ClientSlot;
  private error: Error | undefined;
  private backoff: ReconnectBackoff;
  private lifetime = new AbortController();
  private watch: LiveClientWatch;
  private closing: Promise<void> | undefined;
  private calls = new CallTracker();
  private elicit: (params: ElicitRequest['params'], signal: AbortSignal) => Promise<ElicitResult>;

  constructor(options: McpServerConnectionOptions) {
    this.name = options.name;
    this.userId = options.userId;
    this.config = options.config;
    this.settings = options.settings;
    this.onTools = options.onTools;
    this.onEvent = options.onEvent;
    this.slot = new ClientSlot({ server: this.name });
    this.backoff = new ReconnectBackoff({ policy: options.settings.reconnect });
    this.watch = new LiveClientWatch({
      server: this.name,
      settings: options.settings,
      signal: this.lifetime.signal,
      emit: event => this.emit(event),
      current: () => {
        const live = this.slot.client;
        if (this.currentState !== 'ready' || live === undefined) return undefined;
        return { client: live.client, generation: this.slot.generation };
      },
      onListed: tools => {
        this.currentTools = tools;
        this.emit({ type: 'relisted', server: this.name, tools: tools.length });
        this.onTools();
      },
      onUnauthorized: (cause, generation) => this.needsAuth(cause, generation),
      onDown: (cause, generation) => this.disconnected(generation, cause),
    });
    this.signIn = new ServerSignIn({
      server: this.name,
      config: options.config,
      userId: options.userId,
      onAuthorizationRequired: options.onAuthorizationRequired,
    });
    this.elicit = elicitationBridge({
      server: this.name,
      userId: options.userId,
      handler: options.onElicitation,
      timeoutMs: options.settings.elicitationTimeoutMs,
      calls: this.calls,
      lifetime: this.lifetime.signal,
      emit: event => this.emit(event),
    });
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

  /**
   * Its state. `borrowed`: as a user's toolbox shows it, without the URL of
   * an app-wide sign-in (whoever finishes that signs every user in).
   */
  status({ borrowed = false }: { borrowed?: boolean } = {}): McpServerStatus {
    const pid = this.slot.client?.pid;
    const hidden = borrowed && this.signIn.appWide;
    const url =
      this.currentState === 'needs-auth' && !hidden ? this.signIn.authorizationUrl : undefined;
    return {
      name: this.name,
      state: this.currentState,
      tools: this.currentTools.length,
      attempts: this.backoff.attempts,
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
      if (!(await this.signIn.signedInSince())) return;
    } else if (this.currentState !== 'failed') return;
    this.backoff.reset();
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
    const auth = this.signIn.required();
    if (this.currentState === 'closed') throw this.unavailable();
    await traceSignIn({ server: this.name, run: () => auth.finish({ code, state }) });
    this.emit({ type: 'authorized', server: this.name });
    await this.slot.opened();
    // A live or reconnecting connection picks the new tokens up on its next request.
    if (this.currentState === 'ready' || this.currentState === 'reconnecting') return;
    this.signIn.forgetRefused();
    this.backoff.reset();
    await this.start(abortSignal);
    this.onTools();
    if (this.state !== 'ready') throw this.error ?? this.unavailable();
  }

  /** True when `state` is that of this server's pending app-wide sign-in (compared in constant time). */
  startedWith(state: string | undefined): boolean {
    return this.signIn.auth?.startedWith(state) ?? false;
  }

  /** Re-lists every page now (a listing already running is followed by a fresh one). */
  relist(): Promise<void> {
    return this.watch.relist();
  }

  /** Calls a tool by its server-side name; maps timeouts, crashes, sign-in and server errors. */
  async callTool(
    tool: string,
    args: Record<string, unknown>,
    abortSignal: AbortSignal | undefined,
    toolCallId?: string,
  ): Promise<McpCallResult> {
    const live = this.slot.client;
    if (this.currentState !== 'ready' || live === undefined) throw this.unavailable(tool);
    return traceMcpRequest({
      ...{ method: 'tools/call', server: this.name, tool, toolCallId, args, client: live.client },
      send: meta => this.send({ live, tool, args, abortSignal, toolCallId, meta }),
    });
  }

  private async send({
    live,
    tool,
    args,
    abortSignal,
    toolCallId,
    meta,
  }: {
    /** The ready client the call goes over. */
    live: NonNullable<ClientSlot['client']>;
    /** The tool's server-side name. */
    tool: string;
    /** Its arguments. */
    args: Record<string, unknown>;
    /** The caller's signal. */
    abortSignal: AbortSignal | undefined;
    /** The AI SDK's tool call id. */
    toolCallId: string | undefined;
    /** Trace context for `params._meta`. */
    meta: McpTraceMeta | undefined;
  }): Promise<McpCallResult> {
    const generation = this.slot.generation;
    const { callTimeoutMs } = this.settings;
    const timeout = new McpTimeoutError({
      server: this.name,
      operation: 'tools/call',
      timeoutMs: callTimeoutMs,
      tool,
    });
    try {
      const { client } = live;
      return await this.calls.run({ client, tool, args, abortSignal, toolCallId, timeout, meta });
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
    this.slot.retire();
    this.watch.cancel();
    const message = `MCP server "${this.name}" was closed.`;
    this.lifetime.abort(new McpConnectionError({ server: this.name, message }));
    this.currentTools = [];
    await this.slot.close({ terminateSession: wasReady });
  }

  private emit(event: McpEvent): void {
    recordMcpEvent(event);
    this.onEvent(this.userId === undefined ? event : { ...event, userId: this.userId });
  }

  private async connect(abortSignal?: AbortSignal): Promise<void> {
    const lifetime = this.lifetime.signal;
    const live = await this.slot.open(generation =>
      openClient({
        server: this.name,
        config: this.config,
        limits: this.settings,
        signal: abortSignal ? AbortSignal.any([lifetime, abortSignal]) : lifetime,
        onDisposal: disposal => this.slot.track(disposal),
        auth: this.signIn.auth,
        elicitation: this.settings.elicitationModes,
        handlers: {
          onListChanged: () => this.watch.listChanged(generation),
          onClose: () => this.disconnected(generation, new Error('the connection closed')),
          onError: error => this.watch.transportError(generation, error),
          onElicitation: (params, signal) => this.elicit(params, signal),
        },
      }),
    );
    this.currentTools = live.tools;
    this.currentState = 'ready';
    this.error = undefined;
    this.backoff.reset();
    const pid = live.pid === undefined ? {} : { pid: live.pid };
    this.emit({ type: 'connected', server: this.name, tools: live.tools.length, ...pid });
  }

  // The user has to sign in (again, or for more scope): drop the connection and
  // its tools, keep the authorization URL for status() and the app's hook.
  private async needsAuth(cause: unknown, generation = this.slot.generation): Promise<void> {
    if (generation !== this.slot.generation || this.currentState === 'closed') return;
    this.slot.retire();
    this.watch.cancel();
    this.slot.release();
    const wasReady = this.currentState === 'ready';
    this.currentState = 'needs-auth';
    this.currentTools = [];
    const { error, url } = await this.signIn.refused(cause);
    this.error = error;
    this.emit({
      type: 'needs-auth',
      server: this.name,
      ...(url === undefined ? {} : { authorizationUrl: url }),
    });
    this.signIn.announce(url);
    if (wasReady) this.onTools();
  }

  private disconnected(generation: number, cause: unknown): void {
    if (generation !== this.slot.generation || this.currentState !== 'ready') return;
    this.slot.retire();
    this.currentState = 'reconnecting';
    const why = cause instanceof Error ? cause.message : String(cause);
    const message = `MCP server "${this.name}" disconnected (${why}).`;
    this.error = new McpConnectionError({ server: this.name, cause, message });
    this.emit({ type: 'disconnected', server: this.name, error: this.error });
    this.slot.release();
    void this.reconnect();
  }

  private async reconnect(): Promise<void> {
    const outcome = await this.backoff.run({
      signal: this.lifetime.signal,
      onWait: (attempt, delayMs) =>
        this.emit({ type: 'reconnecting', server: this.name, attempt, delayMs }),
      attempt: async () => {
        await this.connect();
        this.onTools();
      },
      onFailure: async error => {
        if (this.state === 'closed') return 'stop';
        if (isUnauthorized(error)) {
          await this.needsAuth(error);
          this.onTools();
          return 'stop';
        }
        this.error = error as Error;
        this.emit({ type: 'error', server: this.name, error: error as Error });
        return 'retry';
      },
    });
    if (outcome === 'ended') return;
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
      authorizationUrl: this.signIn.authorizationUrl,
      appWide: this.signIn.appWide,
      ...(tool === undefined ? {} : { tool }),
    });
  }
}
