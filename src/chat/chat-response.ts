// chat/: what every chat endpoint writes the same way: the request read within bounds, and the
// answer's stream with tool selection, the python tool and its repairs, and the MCP parts.
import {
  type LanguageModel,
  type ToolSet,
  type UIMessage,
  type UIMessageStreamWriter,
  convertToModelMessages,
  createUIMessageStream,
  createUIMessageStreamResponse,
  stepCountIs,
  streamText,
  toUIMessageStream,
  wrapLanguageModel,
} from 'ai';
import { InvalidArgumentError } from '../errors/invalid-argument-error.ts';
import { repairGuardMiddleware } from '../middleware/repair-guard-middleware.ts';
import { toolResultImagesMiddleware } from '../middleware/tool-result-images-middleware.ts';
import { toolSelection } from '../middleware/selection/tool-selection.ts';
import { pythonAttachments } from '../python/python-attachments.ts';
import type { PythonSandbox } from '../python/python-sandbox.ts';
import { pythonTool, type PythonToolOptions } from '../python/python-tool.ts';
import { repairTimeline } from '../python/repair-timeline.ts';
import type { ToolIndex } from '../retrieval/tool-index.ts';
import type { ToolSelectionData, ToolbeltUIMessage } from './chat-message.ts';
import { type McpChatParts, writeMcpParts } from './mcp-chat-parts.ts';

/** Characters of the user's query echoed in `data-tool-selection`: enough to recognise it. */
const ECHO_CHARS = 200;

/** Options of {@link chatResponse}. */
export type ChatResponseOptions = {
  /** The conversation (`readChatRequest`'s `messages`). */
  messages: UIMessage[];
  /** The chat model, as an object: the selection, repair-guard and tool-result-images middleware wrap it. */
  model: Exclude<LanguageModel, string>;
  /** The tools besides python, e.g. `toolbox.tools`; read per request, as MCP updates them in place. */
  tools: ToolSet;
  /** The index behind `tools` that selection searches (`toolbox.index`). */
  index: ToolIndex;
  /** Runs the python tool (pinned, so every model call has it); without it there is no python tool. */
  sandbox?: PythonSandbox | undefined;
  /** The chat and its user: python keeps one live interpreter for them (needs `executeCell`). */
  conversation?: PythonToolOptions['conversation'];
  /** The system prompt. */
  system?: string | undefined;
  /** Tools retrieval picks per model call (pinned and already-called tools come on top). */
  topK?: number;
  /** Model calls per answer. */
  maxSteps?: number;
  /** Bytes of all attached files together that reach python under /tmp/inputs (larger: a note). */
  maxAttachmentBytes?: number;
  /** Also write each python attempt as a `data-repair` part (a separate repair timeline). */
  repairParts?: boolean;
  /** The user's MCP servers: "Connect" cards for those needing sign-in, and elicitation forms. */
  mcp?: McpChatParts | undefined;
  /** Ends the model calls, tool runs and MCP listening, e.g. the request's signal. */
  abortSignal?: AbortSignal | undefined;
  /**
   * The error text the client sees for a failed stream (the model server refused, say). By
   * default the AI SDK's generic one, so provider errors stay on the server.
   */
  onError?: ((error: unknown) => string) | undefined;
};

/**
 * Answers one chat request as a UI message stream `Response`, as every tool-using chat
 * assembles it: each model call sees only the top-`topK` tools for the latest user message
 * (a `data-tool-selection` part per call shows which and why), python runs in the sandbox with
 * its attempts as preliminary outputs of the `python` tool part (and `data-repair` parts with
 * `repairParts`), files the user attached reach python under /tmp/inputs, the repair guard
 * stops a model that keeps failing, charts become a note for models that take no images in
 * tool results, and with `mcp` the user's sign-in cards and forms stream with the answer.
 * Works in a Next.js route and a Hono handler alike. Throws {@link InvalidArgumentError} for a
 * bad option, before anything streams.
 *
 * @example
 * ```ts
 * const chat = await readChatRequest({ request });
 * if ('response' in chat) return chat.response;
 * return chatResponse({
 *   messages: chat.messages,
 *   model: openai.chat('gpt-4.1-mini'),
 *   tools: toolbox.tools,
 *   index: toolbox.index,
 *   sandbox,
 *   abortSignal: request.signal,
 * });
 * ```
 */
export async function chatResponse({
  messages,
  model,
  tools: baseTools,
  index,
  sandbox,
  conversation,
  system,
  topK = 5,
  maxSteps = 8,
  maxAttachmentBytes = 16 * 1024 * 1024,
  repairParts = false,
  mcp,
  abortSignal,
  onError,
}: ChatResponseOptions): Promise<Response> {
  for (const [argument, value] of Object.entries({ maxSteps, maxAttachmentBytes })) {
    if (!Number.isSafeInteger(value) || value < 1)
      throw new InvalidArgumentError({
        argument,
        value,
        message: 'expected a whole number of at least 1.',
      });
  }
  // Everything is built before the stream opens, so a bad option throws here, not mid-stream;
  // the parts go to the stream's writer once it exists.
  let writer: UIMessageStreamWriter<ToolbeltUIMessage> | undefined;
  let step = 0;
  const selection = toolSelection({
    index,
    topK,
    pinned: sandbox ? ['python'] : [],
    onSelect: ({ query, selected, dropped, ms, retrieval }) => {
      step += 1;
      writer?.write({
        type: 'data-tool-selection',
        id: `tool-selection-${step}`,
        data: {
          ...{ step, selected, dropped, ms, retrieval },
          // The query is the user's own text: echo enough to recognise it, not all of it.
          query: query.length <= ECHO_CHARS ? query : `${query.slice(0, ECHO_CHARS - 1)}…`,
        } satisfies ToolSelectionData,
      });
    },
  });
  // Attached files go to python; the model reads where they are instead of their bytes.
  const { messages: forModel, files } = await pythonAttachments({
    messages,
    maxBytes: maxAttachmentBytes,
  });
  const python = sandbox
    ? pythonTool({
        sandbox,
        files,
        ...(repairParts
          ? { onAttempt: repairTimeline({ write: part => writer?.write(part) }) }
          : {}),
        ...(conversation ? { conversation } : {}),
      })
    : undefined;
  const tools: ToolSet = { ...baseTools, ...(python ? { python } : {}) };
  const modelMessages = await convertToModelMessages(forModel, {
    tools,
    ignoreIncompleteToolCalls: true,
  });
  let stopMcp = () => {};
  const stop = () => {
    stopMcp();
    abortSignal?.removeEventListener('abort', stop);
  };
  const stream = createUIMessageStream<ToolbeltUIMessage>({
    originalMessages: messages as ToolbeltUIMessage[],
    onEnd: stop,
    ...(onError ? { onError } : {}),
    execute({ writer: streamWriter }) {
      writer = streamWriter;
      if (mcp) stopMcp = writeMcpParts({ writer, ...mcp });
      abortSignal?.addEventListener('abort', stop, { once: true });
      const result = streamText({
        model: wrapLanguageModel({
          model,
          middleware: [selection.middleware, repairGuardMiddleware(), toolResultImagesMiddleware()],
        }),
        ...(system === undefined ? {} : { system }),
        tools,
        messages: modelMessages,
        stopWhen: stepCountIs(maxSteps),
        ...(abortSignal ? { abortSignal } : {}),
      });
      writer.merge(
        toUIMessageStream({
          stream: result.stream,
          tools,
          ...(onError ? { onError } : {}),
          // Tool errors (an MCP server's, python's) are written for the user and the model alike.
          redactToolErrors: false,
        }),
      );
    },
  });
  return createUIMessageStreamResponse({ stream });
}
