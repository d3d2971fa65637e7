// calls/: one tools/call: its deadline (paused while the user answers a form), the SDK's errors as
// typed ones, and the result as model output.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { McpTimeoutError } from '../../errors/mcp-timeout-error.ts';
import { CallDeadline } from './call-deadline.ts';
import { linkSignal } from '../../util/linked-signal.ts';
import type { McpCallResult } from './to-model-output.ts';

// The SDK's own request timeout is replaced by a CallDeadline that pauses for elicitations.
const NO_SDK_TIMEOUT = 2 ** 31 - 1;

type Call = { tool: string; toolCallId: string | undefined; deadline: CallDeadline };

/**
 * The tool calls one connection is running: each with a deadline that stops
 * counting while the server waits for the user (an elicitation), so a form
 * that takes minutes does not time out the call it belongs to. Also tells an
 * elicitation which call it interrupts, when only one is running.
 *
 * @example
 * ```ts
 * const end = tracker.begin({ tool: 'search', toolCallId, timeoutMs: 60_000, onExpire });
 * try { await client.callTool(...) } finally { end(); }
 * ```
 */
export class CallTracker {
  private calls = new Set<Call>();
  private waitingForUser = 0;

  /** True while a call runs. */
  get busy(): boolean {
    return this.calls.size > 0;
  }

  /**
   * Sends one `tools/call`, aborted with `timeout` once it has run for
   * `timeout.timeoutMs` (not counting time spent waiting for the user) or
   * with the caller's reason when `abortSignal` aborts. SDK errors pass through.
   */
  async run({
    client,
    tool,
    args,
    abortSignal,
    toolCallId,
    timeout,
    meta,
  }: {
    /** The connected client. */
    client: Pick<Client, 'callTool'>;
    /** The tool's server-side name. */
    tool: string;
    /** Its arguments. */
    args: Record<string, unknown>;
    /** The caller's signal. */
    abortSignal: AbortSignal | undefined;
    /** The AI SDK's tool call id. */
    toolCallId: string | undefined;
    /** Thrown when the call runs out of time. */
    timeout: McpTimeoutError;
    /** Trace context for `params._meta`, so an instrumented server joins the trace. */
    meta?: Record<string, string> | undefined;
  }): Promise<McpCallResult> {
    const link = linkSignal(abortSignal);
    const end = this.begin({
      tool,
      toolCallId,
      timeoutMs: timeout.timeoutMs,
      onExpire: () => link.abort(timeout),
    });
    try {
      const params = {
        name: tool,
        arguments: args,
        ...(meta === undefined ? {} : { _meta: meta }),
      };
      const options = { timeout: NO_SDK_TIMEOUT, signal: link.signal };
      return (await client.callTool(params, undefined, options)) as McpCallResult;
    } catch (error) {
      // The SDK reports an abort as a timeout; the caller's own reason is clearer.
      abortSignal?.throwIfAborted();
      throw error;
    } finally {
      end();
      link.dispose();
    }
  }

  /** Starts tracking a call; returns the function that ends it. */
  begin({
    tool,
    toolCallId,
    timeoutMs,
    onExpire,
  }: {
    /** The tool's server-side name. */
    tool: string;
    /** The AI SDK's tool call id. */
    toolCallId: string | undefined;
    /** Running time allowed. */
    timeoutMs: number;
    /** Called when it runs out. */
    onExpire: () => void;
  }): () => void {
    const deadline = new CallDeadline({ timeoutMs, onExpire, paused: this.waitingForUser > 0 });
    const call: Call = { tool, toolCallId, deadline };
    this.calls.add(call);
    return () => {
      deadline.clear();
      this.calls.delete(call);
    };
  }

  /** Runs `task` (waiting for the user) with every call's deadline paused; `origin` names the call when only one runs. */
  async whileUserAnswers<T>(
    task: (origin: { tool?: string; toolCallId?: string }) => Promise<T>,
  ): Promise<T> {
    if (this.waitingForUser++ === 0) for (const call of this.calls) call.deadline.pause();
    try {
      const only = this.calls.size === 1 ? [...this.calls][0]! : undefined;
      return await task({
        ...(only === undefined ? {} : { tool: only.tool }),
        ...(only?.toolCallId === undefined ? {} : { toolCallId: only.toolCallId }),
      });
    } finally {
      if (--this.waitingForUser === 0) for (const call of this.calls) call.deadline.resume();
    }
  }
}
