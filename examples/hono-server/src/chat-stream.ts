import {
  type LanguageModel,
  type ToolSet,
  type UIMessage,
  convertToModelMessages,
  createUIMessageStream,
  createUIMessageStreamResponse,
  stepCountIs,
  streamText,
  toUIMessageStream,
  wrapLanguageModel,
} from 'ai';
import {
  type PythonSandbox,
  type ToolIndex,
  pythonAttachments,
  pythonTool,
  repairGuardMiddleware,
  repairTimeline,
  toolResultImagesMiddleware,
  toolSelection,
} from 'ai-toolbelt';
import type { McpElicitationBroker, McpServerStatus } from 'ai-toolbelt/mcp';
import { writeMcpParts } from './mcp-chat-parts.ts';
import { LIMITS, clip } from './request-limits.ts';

/** A model object, as `wrapLanguageModel` needs (not a gateway id string). */
export type ChatModel = Exclude<LanguageModel, string>;

/** The `data-tool-selection` part: what one model call was offered. */
export type ToolSelectionData = {
  /** Model call number within this answer, from 1. */
  step: number;
  /** The retrieval query (the latest user message). */
  query: string;
  /** Kept tools in catalog order, with why each was kept. */
  selected: Array<{ name: string; score?: number; reason: string }>;
  /** How many tools were left out. */
  dropped: number;
  /** Selection time. */
  ms: number;
  /** `hybrid` (lexical + embeddings) or `lexical` (no embedding model). */
  retrieval: string;
};

/** Options of {@link chatResponse}. */
export type ChatResponseOptions = {
  /** The conversation from the client (UI messages). */
  messages: UIMessage[];
  /** The chat model (a model object: the middleware wraps it). */
  model: ChatModel;
  /** MCP tools (`toolbox.tools`); read at request time because MCP updates them in place. */
  tools: ToolSet;
  /** The index behind `tools` (`toolbox.index`). */
  index: ToolIndex;
  /** Runs the python tool; without it there is no python tool. */
  sandbox?: PythonSandbox;
  /** The chat and its user: python keeps one live interpreter for them (cells, like a notebook). */
  conversation?: { id: string; userId: string };
  /** Tools retrieval picks per model call (python is pinned on top). */
  topK?: number;
  /** Model calls per answer. */
  maxSteps?: number;
  /** Ends the model calls and tool runs when the client goes away. */
  abortSignal?: AbortSignal;
  /** The user's MCP servers: "Connect" cards for those needing sign-in, and elicitation forms. */
  mcp?: {
    status: Record<string, McpServerStatus>;
    userId: string;
    elicitations?: McpElicitationBroker | undefined;
  };
};

const SYSTEM =
  'You are a helpful assistant. Use the tools you are given. For any calculation, ' +
  'write a short Python program and run it with the python tool, printing the result. ' +
  'When a chart helps, draw it with matplotlib in the same program: the user sees it.';

/**
 * Answers one chat request as a UI message stream: each model call sees only
 * the top-k tools for the latest user message (a `data-tool-selection` part
 * shows which), python runs in the sandbox with every attempt written as a
 * `data-repair` part (charts and files come back on the tool part), files the
 * user attached are placed under /tmp/inputs, and the repair guard stops a
 * model that keeps failing.
 *
 * @example
 * ```ts
 * app.post('/api/chat', async c => chatResponse({ messages, model, tools: toolbox.tools, index: toolbox.index, sandbox }));
 * ```
 */
export async function chatResponse({
  messages,
  model,
  tools: mcpTools,
  index,
  sandbox,
  topK = 3,
  maxSteps = 8,
  abortSignal,
  mcp,
  conversation,
}: ChatResponseOptions): Promise<Response> {
  let stopMcp = () => {};
  const stream = createUIMessageStream({
    originalMessages: messages,
    onEnd: () => stopMcp(),
    async execute({ writer }) {
      if (mcp) stopMcp = writeMcpParts({ writer, ...mcp });
      abortSignal?.addEventListener('abort', () => stopMcp(), { once: true });
      let step = 0;
      // A selection per request, so its onSelect writes into this request's stream.
      const selection = toolSelection({
        index,
        topK,
        pinned: sandbox ? ['python'] : [],
        onSelect: ({ query, selected, dropped, ms, retrieval }) =>
          writer.write({
            type: 'data-tool-selection',
            id: `tool-selection-${++step}`,
            data: {
              ...{ step, selected, dropped, ms, retrieval },
              // The query is the user's own text: echo enough to recognise it, not all of it.
              query: clip(query, LIMITS.echoChars),
            } satisfies ToolSelectionData,
          }),
      });
      // Attached files go to python; the model reads where they are instead of their bytes.
      const { messages: forModel, files } = await pythonAttachments({
        messages,
        maxBytes: LIMITS.attachmentBytes,
      });
      const python = sandbox
        ? pythonTool({
            sandbox,
            files,
            onAttempt: repairTimeline(writer),
            ...(conversation && sandbox.executeCell ? { conversation } : {}),
          })
        : undefined;
      const tools: ToolSet = { ...mcpTools, ...(python ? { python } : {}) };
      const result = streamText({
        model: wrapLanguageModel({
          model,
          // Chat Completions models take no images in tool results: charts become a text note.
          middleware: [selection.middleware, repairGuardMiddleware(), toolResultImagesMiddleware()],
        }),
        system: SYSTEM,
        tools,
        messages: await convertToModelMessages(forModel, {
          tools,
          ignoreIncompleteToolCalls: true,
        }),
        stopWhen: stepCountIs(maxSteps),
        ...(abortSignal ? { abortSignal } : {}),
      });
      writer.merge(
        toUIMessageStream({
          stream: result.stream,
          tools,
          onError: describeError,
          redactToolErrors: false,
        }),
      );
    },
    onError: describeError,
  });
  return createUIMessageStreamResponse({ stream });
}

// A local example: show the real error (e.g. a 401 from the model server), not the SDK's generic one.
function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
