import { LRUCache } from 'lru-cache';
import type { ToolSelector } from './tool-selector.ts';

/** A request learned (or not) for a tool that served it; see `learn`. */
export type ToolLearnEvent = {
  /** The tool the model called, which then succeeded. */
  tool: string;
  /** The request it served. */
  query: string;
  /** False when the request had nothing to learn; absent with `error`. */
  learned?: boolean;
  /** Why learning failed (the request goes on regardless). */
  error?: unknown;
};

/**
 * What `onToolExecutionEnd` of `generateText` / `streamText` passes, reduced
 * to what learning reads (so the hook fits any tool set).
 */
export type ToolExecutionEnd = {
  /** The call the SDK executed. */
  toolCall: { toolCallId: string; toolName: string };
  /** `tool-result` when `execute` returned, `tool-error` when it threw. */
  toolOutput: { type: string };
};

type ModelCall = { tool: string; query: string; abortSignal: AbortSignal | undefined };

/**
 * Learns from tool calls this process executed, never from the conversation
 * the client sent: a call counts only when the model made it through this
 * selection's middleware (`noteCall`, with the query its selection was made
 * for) and the SDK then ran it here and it returned (`onToolExecutionEnd`).
 * A tool-call/result pair written into client-side history matches neither,
 * so it teaches nothing. Pinned and search tools are skipped (sent anyway),
 * as are names the index lacks.
 *
 * @example
 * ```ts
 * const learner = new CallLearner({ selector, pinned: ['python'] });
 * learner.noteCall({ toolCallId: 'c1', toolName: 'get_weather', query, abortSignal });
 * await learner.onToolExecutionEnd({ toolCall: { toolCallId: 'c1', toolName: 'get_weather' }, toolOutput: { type: 'tool-result' } });
 * ```
 */
export class CallLearner {
  // Bounded: calls of tools without `execute`, or of requests that ended early, never come back.
  private calls = new LRUCache<string, ModelCall>({ max: 10_000 });
  private selector: ToolSelector;
  private skip: Set<string>;
  private onLearn: ((event: ToolLearnEvent) => void) | undefined;

  constructor({
    selector,
    pinned = [],
    onLearn,
  }: {
    /** The selector whose index learns. */
    selector: ToolSelector;
    /** Tools sent anyway: nothing to learn for them. */
    pinned?: readonly string[];
    /** Each request learned, or why learning failed. */
    onLearn?: ((event: ToolLearnEvent) => void) | undefined;
  }) {
    this.selector = selector;
    this.skip = new Set(pinned);
    this.onLearn = onLearn;
  }

  /** Records a tool call the model just made, with the query its tools were selected for. */
  noteCall({
    toolCallId,
    toolName,
    query,
    abortSignal,
  }: {
    /** The call's id, as the SDK will report its execution. */
    toolCallId: string;
    /** The tool called. */
    toolName: string;
    /** The query of the selection the model call was given. */
    query: string;
    /** The model call's signal: an aborted request stops its learn. */
    abortSignal?: AbortSignal | undefined;
  }): void {
    if (query === '') return;
    this.calls.set(toolCallId, { tool: toolName, query, abortSignal });
  }

  /** The SDK hook: learns a noted call once it executed here and returned. */
  readonly onToolExecutionEnd = async ({ toolCall, toolOutput }: ToolExecutionEnd) => {
    const call = this.calls.get(toolCall.toolCallId);
    // Each call teaches at most once, whatever its outcome.
    this.calls.delete(toolCall.toolCallId);
    if (call === undefined || call.tool !== toolCall.toolName) return;
    if (toolOutput.type !== 'tool-result') return;
    const { tool, query, abortSignal } = call;
    if (this.skip.has(tool) || this.selector.isSearchTool(tool) || !this.selector.index.has(tool))
      return;
    try {
      const learned = await this.selector.index.learn({
        query,
        tool,
        ...(abortSignal ? { abortSignal } : {}),
      });
      this.onLearn?.({ tool, query, learned });
    } catch (error) {
      // The SDK swallows what its hooks throw; the app hears of it through onLearn.
      this.onLearn?.({ tool, query, error });
    }
  };
}
