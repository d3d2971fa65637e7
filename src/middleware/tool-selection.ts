import { type LanguageModelMiddleware, type PrepareStepFunction, type ToolSet, asSchema } from 'ai';
import type { ConversationMessage } from './conversation.ts';
import {
  type OfferedTool,
  type Selection,
  ToolSelector,
  type ToolSelectionOptions,
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

/** Options of {@link toolSelection}. */
export type ToolSelectionSetup = ToolSelectionOptions & {
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
export function toolSelection({ onMiss, ...options }: ToolSelectionSetup = {}): ToolSelection {
  const selector = new ToolSelector(options);
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
      // Provider-defined tools (web search, code interpreter) are not ours to drop.
      const next = {
        ...params,
        tools: tools.filter(tool => tool.type !== 'function' || selection.names.has(tool.name)),
      };
      given.set(next, { selection, catalog: functionTools });
      return next;
    },
    async wrapGenerate({ doGenerate, params }) {
      const result = await doGenerate();
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
      if (onMiss === undefined) return result;
      const stream = result.stream.pipeThrough(
        new TransformStream({
          transform(part, controller) {
            if (part.type === 'tool-call' && !part.providerExecuted)
              reportMisses(params, [part.toolName]);
            controller.enqueue(part);
          },
        }),
      );
      return { ...result, stream };
    },
  };

  const prepareStep = <TOOLS extends ToolSet>(tools: TOOLS): PrepareStepFunction<TOOLS> => {
    let offered: Promise<OfferedTool[]> | undefined;
    return async ({ messages }) => {
      offered ??= describeTools(tools);
      const selection = await selector.select({
        tools: await offered,
        messages: messages as ConversationMessage[],
      });
      return { activeTools: [...selection.names] as Array<keyof TOOLS & string> };
    };
  };

  const search: ToolSelection['search'] = async ({ query, tools }) =>
    (await selector.rank(query, tools, Math.max(1, tools.length))).map(hit => hit.name);

  return { middleware, prepareStep, search, selector };
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
export function toolSelectionMiddleware(options: ToolSelectionSetup = {}): LanguageModelMiddleware {
  return toolSelection(options).middleware;
}

async function describeTools(tools: ToolSet): Promise<OfferedTool[]> {
  return Promise.all(
    Object.entries(tools).map(async ([name, tool]) => ({
      name,
      // A description may be a function of the call's context; retrieval needs a fixed text.
      ...(typeof tool.description === 'string' ? { description: tool.description } : {}),
      inputSchema: await asSchema(tool.inputSchema).jsonSchema,
    })),
  );
}
