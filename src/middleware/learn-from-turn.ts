import { LRUCache } from 'lru-cache';
import type { ConversationMessage } from './conversation.ts';
import type { ToolSelector } from './tool-selector.ts';
import { succeededCalls } from './turn-calls.ts';

/** A request learned (or not) for a tool that served it; see `learn`. */
export type ToolLearnEvent = {
  /** The tool the model called, which then succeeded. */
  tool: string;
  /** The request it served. */
  query: string;
  /** False when the request had nothing to learn; absent with `error`. */
  learned?: boolean;
  /** Why learning failed (the model call goes on regardless). */
  error?: unknown;
};

/**
 * Learns, once per tool call, each call of the current turn that succeeded:
 * pinned and search tools excepted (they are sent anyway), and only tools the
 * index has (a made-up name teaches nothing). Awaited before the model call:
 * a serverless route may be frozen once its response ends.
 *
 * @example
 * ```ts
 * const learnFromTurn = learnerFor({ selector, pinned: ['python'], onLearn: console.log });
 * await learnFromTurn(params.prompt, selection.query, params.abortSignal);
 * ```
 */
export function learnerFor({
  selector,
  pinned,
  onLearn,
}: {
  /** The selector whose index learns. */
  selector: ToolSelector;
  /** Tools sent anyway: nothing to learn for them. */
  pinned: readonly string[];
  /** Each request learned, or why learning failed. */
  onLearn: ((event: ToolLearnEvent) => void) | undefined;
}) {
  const learned = new LRUCache<string, true>({ max: 10_000 });
  const skip = new Set(pinned);
  return async (
    messages: readonly ConversationMessage[],
    query: string,
    abortSignal: AbortSignal | undefined,
  ): Promise<void> => {
    if (query === '') return;
    for (const { toolCallId, toolName } of succeededCalls(messages)) {
      if (learned.has(toolCallId)) continue;
      learned.set(toolCallId, true);
      if (skip.has(toolName) || selector.isSearchTool(toolName) || !selector.index.has(toolName))
        continue;
      try {
        const done = await selector.index.learn({
          query,
          tool: toolName,
          ...(abortSignal ? { abortSignal } : {}),
        });
        onLearn?.({ tool: toolName, query, learned: done });
      } catch (error) {
        if (abortSignal?.aborted) throw error;
        onLearn?.({ tool: toolName, query, error });
      }
    }
  };
}
