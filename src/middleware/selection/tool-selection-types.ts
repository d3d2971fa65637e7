import type { LanguageModelMiddleware, PrepareStepFunction, ToolSet } from 'ai';
import type { ConversationMessage } from '../conversation.ts';
import type { ToolExecutionEnd, ToolLearnEvent } from './learn-from-calls.ts';
import type { SelectorOptions, ToolSelector } from './tool-selector.ts';

/** A tool call naming a tool that retrieval did not give the model; see `onMiss`. */
export type ToolMissEvent = {
  /** The tool the model called. */
  toolName: string;
  /** The query its selection was made for. */
  query: string;
  /** What the model had been given. */
  selected: string[];
  /** Whether the caller's tool set has the tool (a retrieval miss) or not (a hallucinated name). */
  inCatalog: boolean;
};

/** Options of {@link toolSelection} and {@link toolSelectionMiddleware}. */
export type ToolSelectionOptions = SelectorOptions & {
  /**
   * Learn from use: when the model calls a tool (selected, missed, or found
   * through `toolSearch`) and this process executes it without an error, the
   * request is learned for that tool (`index.learn`), so the next similar
   * request finds it. Pass `onToolExecutionEnd: selection.onToolExecutionEnd`
   * to `generateText` / `streamText`: only executions it reports teach, never
   * tool calls and results in the history the client sent. Needs an index
   * created with `learning` (made for you when no `index` is given), and
   * `toolSelection()` (the bare middleware has no hook). Failed calls teach nothing.
   */
  learn?: boolean;
  /** Each request learned, or why learning failed. */
  onLearn?: (event: ToolLearnEvent) => void;
  /**
   * Live recall: called when the model calls a tool it was not given. Such a
   * call still executes when the caller's `tools` has it, unless strict mode
   * (`prepareStep`) is on.
   */
  onMiss?: (event: ToolMissEvent) => void;
};

/** The pieces {@link toolSelection} returns, all sharing one index and cache. */
export type ToolSelection = {
  /** Narrows `params.tools` on every model call; use with `wrapLanguageModel`. */
  middleware: LanguageModelMiddleware;
  /**
   * Strict mode: a `prepareStep` that sets `activeTools` to the selection, so
   * tools outside it cannot execute (the SDK rejects them with `NoSuchToolError`).
   */
  prepareStep: <TOOLS extends ToolSet>(tools: TOOLS) => PrepareStepFunction<TOOLS>;
  /** Ranked tool names for the SDK's `toolSearch({ search })`, backed by the same index. */
  search: (options: {
    query: string;
    tools: Array<{ name: string; description?: string }>;
  }) => Promise<string[]>;
  /**
   * The toolSearch recipe, per request: `tools` with everything outside this
   * request's selection deferred (`deferLoading`), plus the SDK's `toolSearch`
   * over the same index, so the model can find and call a tool that top-k
   * missed within the same turn.
   */
  withToolSearch: (options: {
    /** Every tool of the app. */
    tools: ToolSet;
    /** The conversation the request carries (`ModelMessage[]`). */
    messages: readonly ConversationMessage[];
    /** Tools one search returns. */
    maxResults?: number;
    /** The search tool's name. */
    name?: string;
  }) => Promise<ToolSet>;
  /**
   * With `learn`: pass it as `onToolExecutionEnd` to `generateText` /
   * `streamText`. It learns each call the model made through this middleware
   * once the SDK has executed it here and it returned; without it nothing is learned.
   */
  onToolExecutionEnd: (event: ToolExecutionEnd) => Promise<void>;
  /** The selector itself (index, `select`, `rank`). */
  selector: ToolSelector;
};
