// selection/: the tool-selection middleware: each call's query, the index's picks, sticky seats,
// pinned and forced tools, strict mode, learning from the calls that served.
import {
  type LanguageModelMiddleware,
  type PrepareStepFunction,
  type ToolSet,
  toolSearch,
} from 'ai';
import { InvalidArgumentError } from '../../errors/invalid-argument-error.ts';
import { createToolIndex } from '../../retrieval/create-tool-index.ts';
import type { ConversationMessage } from '../conversation.ts';
import { withMarker } from './selection-marker.ts';
import { describeTools } from './describe-tools.ts';
import { CallLearner } from './learn-from-calls.ts';
import type { ToolSelection, ToolSelectionOptions } from './tool-selection-types.ts';
import { type Selection, ToolSelector } from './tool-selector.ts';
import { recordSelection, traceSelection } from '../../telemetry/selection-telemetry.ts';
import { activeTracer } from '../../telemetry/tracer.ts';

export type { ToolMissEvent, ToolSelection, ToolSelectionOptions } from './tool-selection-types.ts';

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
 * // learn: true: streamText({ model, tools, messages, onToolExecutionEnd: selection.onToolExecutionEnd })
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
  const learner = new CallLearner({ selector, pinned: options.pinned ?? [], onLearn });
  // The selection a call was given, for live-recall checks on its output.
  const given = new WeakMap<
    object,
    { selection: Selection; catalog: readonly { name: string }[] }
  >();

  // Calls the model makes are noted with their selection's query; only executions teach.
  const noteCalls = (
    params: object,
    calls: Iterable<{ toolCallId: string; toolName: string }>,
    abortSignal: AbortSignal | undefined,
  ): void => {
    const query = given.get(params)?.selection.query;
    if (!learn || query === undefined) return;
    for (const { toolCallId, toolName } of calls)
      learner.noteCall({ toolCallId, toolName, query, abortSignal });
  };
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
      const request = {
        tools: functionTools,
        messages: params.prompt,
        ...(params.toolChoice?.type === 'tool' ? { forced: params.toolChoice.toolName } : {}),
        ...(params.abortSignal ? { abortSignal: params.abortSignal } : {}),
      };
      // Telemetry off (no provider registered): the selection runs as it always did.
      const tracer = activeTracer();
      const selection =
        tracer === undefined
          ? await selector.select(request)
          : await traceSelection({
              ...{ tracer, topK: selector.topK, mode: selector.mode },
              stability: selector.sticky ? 'sticky' : 'fresh',
              candidates: functionTools.length,
              select: () => selector.select(request),
            });
      recordSelection(selection);
      // Provider-defined tools (web search, code interpreter) are not ours to drop. Sticky
      // selection sends the previous call's order first; otherwise the catalog's order.
      const kept = tools.filter(tool => tool.type !== 'function' || selection.names.has(tool.name));
      const next = { ...params, tools: selector.sticky ? inSelectionOrder(kept, selection) : kept };
      given.set(next, { selection, catalog: functionTools });
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
      const calls = result.content.flatMap(part =>
        part.type === 'tool-call' && !part.providerExecuted ? [part] : [],
      );
      reportMisses(
        params,
        calls.map(call => call.toolName),
      );
      noteCalls(params, calls, params.abortSignal);
      return result;
    },
    async wrapStream({ doStream, params }) {
      const result = await doStream();
      const marker = given.get(params)?.selection.marker;
      if (onMiss === undefined && marker === undefined && !learn) return result;
      const stream = result.stream.pipeThrough(
        new TransformStream({
          transform(part, controller) {
            if (part.type === 'tool-call' && !part.providerExecuted) {
              reportMisses(params, [part.toolName]);
              noteCalls(params, [part], params.abortSignal);
            }
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

  return {
    middleware,
    prepareStep,
    search,
    withToolSearch,
    onToolExecutionEnd: learner.onToolExecutionEnd,
    selector,
  };
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
  if (options.learn) {
    throw new InvalidArgumentError({
      argument: 'learn',
      value: options.learn,
      message:
        'learning needs the tool-execution hook the bare middleware cannot give: use toolSelection() and pass onToolExecutionEnd: selection.onToolExecutionEnd to generateText / streamText',
    });
  }
  return toolSelection(options).middleware;
}
