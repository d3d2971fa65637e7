import { LRUCache } from 'lru-cache';
import type { ConversationMessage } from '../conversation.ts';
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
 *
 * @example
 * ```ts
 * const end: ToolExecutionEnd = {
 *   toolCall: { toolCallId: 'call_0', toolName: 'get_weather' },
 *   toolOutput: { type: 'tool-result' },
 *   messages: [{ role: 'user', content: 'will it rain in Oslo?' }],
 * };
 * await selection.onToolExecutionEnd(end);
 * ```
 */
export type ToolExecutionEnd = {
  /** The call the SDK executed. */
  toolCall: { toolCallId: string; toolName: string };
  /** `tool-result` when `execute` returned, `tool-error` when it threw. */
  toolOutput: { type: string };
  /**
   * The messages the model call that made the tool call was given: their query tells apart
   * calls of concurrent requests that share an id (providers that number calls `call_0`...).
   */
  messages?: readonly ConversationMessage[];
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
  // Per call id, every noted call with that id: providers that number their calls (`call_0`)
  // give concurrent requests the same ids, and an execution is matched to its own request's call
  // by its query. Bounded: calls of tools without `execute`, or of requests that ended early,
  // never come back.
  private calls = new LRUCache<string, ModelCall[]>({ max: 10_000 });
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
    const noted = this.calls.get(toolCallId) ?? [];
    noted.push({ tool: toolName, query, abortSignal });
    this.calls.set(toolCallId, noted);
  }

  /** The SDK hook: learns a noted call once it executed here and returned. */
  readonly onToolExecutionEnd = async ({ toolCall, toolOutput, messages }: ToolExecutionEnd) => {
    const call = this.take(toolCall, messages);
    if (call === undefined || toolOutput.type !== 'tool-result') return;
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

  /**
   * Removes and returns the noted call an execution reports (each call teaches at most once,
   * whatever its outcome): the one with its id, tool and query; without `messages`, or when no
   * query matches, only a sole call of that id and tool, so two requests never mix.
   */
  private take(
    { toolCallId, toolName }: ToolExecutionEnd['toolCall'],
    messages: readonly ConversationMessage[] | undefined,
  ): ModelCall | undefined {
    const noted = this.calls.get(toolCallId);
    if (noted === undefined) return undefined;
    const query = messages ? this.selector.queryOf(messages) : undefined;
    const sameTool = noted.filter(call => call.tool === toolName);
    const call =
      sameTool.find(candidate => candidate.query === query) ??
      (sameTool.length === 1 ? sameTool[0] : undefined);
    if (call === undefined) return undefined;
    noted.splice(noted.indexOf(call), 1);
    if (noted.length === 0) this.calls.delete(toolCallId);
    return call;
  }
}
