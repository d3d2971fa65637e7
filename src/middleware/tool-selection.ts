import {
  type LanguageModelMiddleware,
  type PrepareStepFunction,
  type ToolSet,
  toolSearch,
} from 'ai';
import { InvalidArgumentError } from '../errors/invalid-argument-error.ts';
import { createToolIndex } from '../retrieval/create-tool-index.ts';
import type { ConversationMessage } from './conversation.ts';
import { withMarker } from './selection-marker.ts';
import { describeTools } from './describe-tools.ts';
import { type ToolLearnEvent, learnerFor } from './learn-from-turn.ts';
import {
  type OfferedTool,
  type Selection,
  ToolSelector,
  type SelectorOptions,
} from './tool-selector.ts';

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
   * through `toolSearch`) and its result comes back without an error, the
   * request is learned for that tool (`index.learn`), so the next similar
   * request finds it. Needs an index created with `learning` (made for you
   * when no `index` is given). Failed calls teach nothing.
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
  /** The selector itself (index, `select`, `rank`). */
  selector: ToolSelector;
};

type CallOptions = Parameters<NonNullable<LanguageModelMiddleware['transformParams']>>[0]['params'];
type FunctionTool = Extract<NonNullable<CallOptions['tools']>[number], { type: 'function' }>;

/**
 * Builds tool selection for the AI SDK: a middleware that sends each model
 * call only the top-k tools for the latest user message (plus pinned,
 * already-called and forced tools), a strict-mode `prepareStep`, and a
 * `search` for `toolSearch`.
 *
 * @example
 * ```ts
 * const selection = toolSelection({ index: toolbox.index, topK: 5, pinned: ['python'] });
 * const model = wrapLanguageModel({ model: openai('gpt-4.1'), middleware: selection.middleware });
 * const result = streamText({ model, tools, messages, stopWhen: stepCountIs(5) });
 * // strict: streamText({ model, tools, messages, prepareStep: selection.prepareStep(tools) })
 * ```
 */
export function toolSelection({
  onMiss,
  learn = false,
  onLearn,
  ...options
}: ToolSelectionOptions = {}): ToolSelection {
  if (learn && options.index !== undefined && !options.index.learns) {
    throw new InvalidArgumentError({
      argument: 'learn',
      value: learn,
      message: 'the index does not learn; create it with createToolIndex({ learning: true })',
    });
  }
  const selector = new ToolSelector(
    learn && options.index === undefined
      ? {
          ...options,
          index: createToolIndex({
            ...(options.embeddingModel ? { embeddingModel: options.embeddingModel } : {}),
            learning: true,
          }),
        }
      : options,
  );
  const learnFromTurn = learnerFor({ selector, pinned: options.pinned ?? [], onLearn });
  // The selection a call was given, for live-recall checks on its output.
  const given = new WeakMap<
    object,
    { selection: Selection; catalog: readonly { name: string }[] }
  >();

  const reportMisses = (params: object, toolNames: Iterable<string>): void => {
    const record = given.get(params);
    if (record === undefined || onMiss === undefined) return;
    for (const toolName of toolNames) {
      if (record.selection.names.has(toolName)) continue;
      onMiss({
        toolName,
        query: record.selection.query,
        selected: [...record.selection.names],
        inCatalog: record.catalog.some(tool => tool.name === toolName),
      });
    }
  };

  const middleware: LanguageModelMiddleware = {
    specificationVersion: 'v4',
    async transformParams({ params }) {
      const tools = params.tools;
      if (tools === undefined || tools.length === 0 || params.toolChoice?.type === 'none')
        return params;
      const functionTools = tools.filter((tool): tool is FunctionTool => tool.type === 'function');
      const selection = await selector.select({
        tools: functionTools,
        messages: params.prompt,
        ...(params.toolChoice?.type === 'tool' ? { forced: params.toolChoice.toolName } : {}),
        ...(params.abortSignal ? { abortSignal: params.abortSignal } : {}),
      });
      // Provider-defined tools (web search, code interpreter) are not ours to drop. Sticky
      // selection sends the previous call's order first; otherwise the catalog's order.
      const kept = tools.filter(tool => tool.type !== 'function' || selection.names.has(tool.name));
      const next = { ...params, tools: selector.sticky ? inSelectionOrder(kept, selection) : kept };
      given.set(next, { selection, catalog: functionTools });
      if (learn) await learnFromTurn(params.prompt, selection.query, params.abortSignal);
      return next;
    },
    async wrapGenerate({ doGenerate, params }) {
      const result = await doGenerate();
      const marker = given.get(params)?.selection.marker;
      if (marker !== undefined) {
        result.content = result.content.map(part =>
          MARKED.has(part.type)
            ? { ...part, providerMetadata: withMarker(part.providerMetadata, marker) }
            : part,
        ) as typeof result.content;
      }
      reportMisses(
        params,
        result.content.flatMap(part =>
          part.type === 'tool-call' && !part.providerExecuted ? [part.toolName] : [],
        ),
      );
      return result;
    },
    async wrapStream({ doStream, params }) {
      const result = await doStream();
      const marker = given.get(params)?.selection.marker;
      if (onMiss === undefined && marker === undefined) return result;
      const stream = result.stream.pipeThrough(
        new TransformStream({
          transform(part, controller) {
            if (part.type === 'tool-call' && !part.providerExecuted)
              reportMisses(params, [part.toolName]);
            controller.enqueue(
              marker !== undefined && MARKED_STREAM.has(part.type)
                ? {
                    ...part,
                    providerMetadata: withMarker(
                      (part as { providerMetadata?: Record<string, unknown> }).providerMetadata,
                      marker,
                    ),
                  }
                : part,
            );
          },
        }),
      );
      return { ...result, stream };
    },
  };

  const prepareStep = <TOOLS extends ToolSet>(tools: TOOLS): PrepareStepFunction<TOOLS> => {
    return async ({ messages }) => {
      const selection = await selector.select({
        tools: await describeTools(tools),
        messages: messages as ConversationMessage[],
        report: false,
      });
      return { activeTools: [...selection.names] as Array<keyof TOOLS & string> };
    };
  };

  const search: ToolSelection['search'] = async ({ query, tools }) =>
    (await selector.rank(query, tools, Math.max(1, tools.length))).map(hit => hit.name);

  const withToolSearch: ToolSelection['withToolSearch'] = async ({
    tools,
    messages,
    maxResults = 5,
    name = 'toolSearch',
  }) => {
    selector.addSearchTool(name);
    const selection = await selector.select({
      tools: await describeTools(tools),
      messages,
      report: false,
    });
    const deferred: ToolSet = {};
    for (const [toolName, tool] of Object.entries(tools))
      deferred[toolName] = selection.names.has(toolName) ? tool : { ...tool, deferLoading: true };
    deferred[name] = toolSearch({ search, maxResults });
    return deferred;
  };

  return { middleware, prepareStep, search, withToolSearch, selector };
}

// Response parts that carry the selection marker into the conversation.
const MARKED = new Set(['text', 'reasoning', 'tool-call']);
const MARKED_STREAM = new Set([
  'text-start',
  'text-end',
  'reasoning-start',
  'reasoning-end',
  'tool-call',
]);

function inSelectionOrder<T extends { type: string; name: string }>(
  tools: T[],
  selection: Selection,
): T[] {
  const order = new Map([...selection.names].map((name, i) => [name, i]));
  const rank = (tool: T) => (tool.type === 'function' ? (order.get(tool.name) ?? 0) : -1);
  return tools.sort((a, b) => rank(a) - rank(b));
}

/**
 * Tool selection as a ready middleware: `wrapLanguageModel({ model, middleware: toolSelectionMiddleware({ ... }) })`.
 * Use {@link toolSelection} for strict mode and `toolSearch`.
 *
 * @example
 * ```ts
 * const model = wrapLanguageModel({
 *   model: openai('gpt-4.1'),
 *   middleware: toolSelectionMiddleware({ index: toolbox.index, topK: 5, pinned: ['python'] }),
 * });
 * ```
 */
export function toolSelectionMiddleware(
  options: ToolSelectionOptions = {},
): LanguageModelMiddleware {
  return toolSelection(options).middleware;
}
