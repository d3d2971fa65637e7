import type { NextRequest } from 'next/server';
import { chatResponse, readChatRequest } from 'ai-toolbelt';
import { MISSING_MODEL_MESSAGE, chatModel } from '../../../lib/model';
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
  const model = chatModel();
  if (!model) return Response.json({ error: MISSING_MODEL_MESSAGE }, { status: 503 });
  // Bounded while the body streams in (and from Content-Length first), then checked to be
  // useChat's messages within the message limits; a refusal is the 413 or 400 to send.
  const chat = await readChatRequest({ request });
  if ('response' in chat) return chat.response;
  // One toolbox and sandbox per process (see lib/toolbelt.ts); the rest is per request.
  const { toolbox, sandbox, elicitations } = await getToolbelt();
  // A browser the page gave an id chats with its own toolbox (the shared servers plus those it
  // signed in to); any other client gets the shared servers and creates no per-user state.
  const userId = knownUserId(request);
  const mine =
    userId === undefined ? toolbox : await toolbox.forUser({ userId, abortSignal: request.signal });
  return chatResponse({
    messages: chat.messages,
    model,
    system: SYSTEM,
    tools: mine.tools,
    index: toolbox.index,
    sandbox,
    topK: Number(process.env.TOOLS_TOP_K ?? 3),
    // The user's "Connect" cards and forms, and the chat's interpreter (useChat sends the chat's
    // id), bound to this browser's user id; a client without the page's cookie runs python
    // one-shot.
    ...(userId === undefined
      ? {}
      : {
          mcp: { status: mine.status(), userId, elicitations },
          ...(chat.chatId === undefined ? {} : { conversation: { id: chat.chatId, userId } }),
        }),
    abortSignal: request.signal,
    // An example app: show the real error (a 401 from the model server, say), not a generic one.
    onError: error => (error instanceof Error ? error.message : String(error)),
  });
}
