import type { NextRequest } from 'next/server';
import {
  type ToolSet,
  convertToModelMessages,
  createUIMessageStream,
  createUIMessageStreamResponse,
  stepCountIs,
  streamText,
  toUIMessageStream,
  validateUIMessages,
  wrapLanguageModel,
} from 'ai';
import {
  pythonAttachments,
  pythonTool,
  repairGuardMiddleware,
  toolResultImagesMiddleware,
  toolSelection,
} from 'ai-toolbelt';
import type { ChatMessage } from '../../../lib/chat-message';
import { MISSING_MODEL_MESSAGE, chatModel } from '../../../lib/model';
import { writeMcpParts } from '../../../lib/mcp-parts';
import { LIMITS, checkMessageLimits, readJsonBody } from '../../../lib/request-limits';
import { refuseCrossSite } from '../../../lib/same-origin';
import { getToolbelt } from '../../../lib/toolbelt';
import { knownUserId } from '../../../lib/user-id';

// Node, not edge: MCP stdio servers are child processes and the sandbox talks to Docker.
export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

const SYSTEM =
  'You are a helpful assistant. Use the tools you are given. For any calculation, ' +
  'write a short Python program and run it with the python tool, printing the result. ' +
  'When a chart helps, draw it with matplotlib in the same program: the user sees it.';

/** Streams one answer: top-k tools per model call, python in the sandbox, the repair guard. */
export async function POST(request: NextRequest): Promise<Response> {
  const refused = refuseCrossSite(request, { json: true });
  if (refused) return refused;
  const read = await readJsonBody(request);
  if ('response' in read) return read.response;
  const model = chatModel();
  if (!model) return Response.json({ error: MISSING_MODEL_MESSAGE }, { status: 503 });
  const body = read.value as { id?: unknown; messages?: unknown } | undefined;
  let messages: ChatMessage[];
  try {
    messages = await validateUIMessages<ChatMessage>({ messages: body?.messages });
  } catch (error) {
    return Response.json(
      { error: `Expected { messages } as useChat sends them: ${String(error)}` },
      { status: 400 },
    );
  }
  const tooBig = checkMessageLimits(messages);
  if (tooBig !== undefined) return Response.json({ error: tooBig }, { status: 400 });
  // One toolbox and sandbox per process (see lib/toolbelt.ts); the rest is per request.
  const { toolbox, sandbox, elicitations } = await getToolbelt();
  // A browser the page gave an id chats with its own toolbox (the shared servers plus those it
  // signed in to); any other client gets the shared servers and creates no per-user state.
  const userId = knownUserId(request);
  const mine =
    userId === undefined ? toolbox : await toolbox.forUser({ userId, abortSignal: request.signal });

  // The chat's interpreter (useChat sends the chat's id), bound to this browser's user id; a
  // client without the page's cookie runs python one-shot.
  const chatId =
    typeof body?.id === 'string' && /^[\w-]{1,100}$/.test(body.id) ? body.id : undefined;
  const conversation =
    userId !== undefined && chatId !== undefined ? { id: chatId, userId } : undefined;

  let stopMcp = () => {};
  const stream = createUIMessageStream<ChatMessage>({
    originalMessages: messages,
    onEnd: () => stopMcp(),
    async execute({ writer }) {
      if (userId !== undefined)
        stopMcp = writeMcpParts({ writer, status: mine.status(), userId, elicitations });
      request.signal.addEventListener('abort', () => stopMcp(), { once: true });
      let step = 0;
      const selection = toolSelection({
        index: toolbox.index,
        topK: Number(process.env.TOOLS_TOP_K ?? 3),
        pinned: sandbox ? ['python'] : [],
        onSelect: ({ selected, dropped, ms, retrieval }) =>
          writer.write({
            type: 'data-tool-selection',
            id: `tool-selection-${++step}`,
            data: { step, selected, dropped, ms, retrieval },
          }),
      });
      // Attached files go to python under /tmp/inputs; the model reads where they are.
      const { messages: forModel, files } = await pythonAttachments({
        messages,
        maxBytes: LIMITS.attachmentBytes,
      });
      // The python tool streams running / failed / success (with charts and files) as
      // preliminary outputs of its tool part.
      const tools: ToolSet = {
        ...mine.tools,
        ...(sandbox
          ? { python: pythonTool({ sandbox, files, ...(conversation ? { conversation } : {}) }) }
          : {}),
      };
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
        stopWhen: stepCountIs(8),
        abortSignal: request.signal,
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

// An example app: show the real error (a 401 from the model server, say) rather than a generic one.
function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
