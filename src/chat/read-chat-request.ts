import { type UIMessage, safeValidateUIMessages } from 'ai';
import { InvalidArgumentError } from '../errors/invalid-argument-error.ts';
import type { ToolbeltUIMessage } from './chat-message.ts';

/** What {@link readChatRequest} returns: the request's conversation, or the answer refusing it. */
export type ChatRequest<UI_MESSAGE extends UIMessage = ToolbeltUIMessage> =
  | {
      /** The conversation, checked to be UI messages within the limits. */
      messages: UI_MESSAGE[];
      /** The chat's id as `useChat` sends it, when it is short and plain (`[\w-]{1,100}`). */
      chatId: string | undefined;
    }
  | {
      /** 413 (body too large) or 400 (not `{ messages }`, too many, too long), JSON `{ error }`. */
      response: Response;
    };

/** Options of {@link readChatRequest}. */
export type ReadChatRequestOptions = {
  /** The chat request (`useChat`'s POST): a Fetch `Request`, e.g. Hono's `c.req.raw`. */
  request: Request;
  /** Bytes of the whole body: attachments travel inside it as data URLs, a third larger than the files. */
  maxBodyBytes?: number;
  /** Messages in one conversation. */
  maxMessages?: number;
  /**
   * Characters in one user message: its text, and every other part as JSON, file contents left
   * out; attach long text as a file.
   */
  maxMessageChars?: number;
  /**
   * Characters in one of the app's own earlier replies the client sends back (an assistant
   * message: text, reasoning, tool inputs and outputs as JSON, file contents left out). Larger
   * than `maxMessageChars`: one reply may hold several tool runs (the python tool hands each up
   * to 8,000 characters of output).
   */
  maxReplyChars?: number;
  /** Stops reading; by default the request's own signal (the client went away). */
  abortSignal?: AbortSignal;
};

/**
 * Reads a chat request as `useChat` sends it (`{ id, messages }`), within bounds: the body is
 * refused from its Content-Length and cut while it streams in (a chunked upload), never
 * buffered past `maxBodyBytes`; then it must be UI messages (the AI SDK's
 * `safeValidateUIMessages`), no more than `maxMessages`, no user message over `maxMessageChars`
 * characters and no earlier reply over `maxReplyChars` (text, reasoning, tool inputs and
 * outputs: everything a client could send the model but file contents, which only
 * `maxBodyBytes` bounds). A refused request comes back as the `response` to
 * send (JSON `{ error }` saying what was wrong and what to do), so a Next.js route and a Hono
 * handler both return it as is. Throws {@link InvalidArgumentError} for a bad option.
 *
 * @example
 * ```ts
 * export async function POST(request: Request) {
 *   const chat = await readChatRequest({ request });
 *   if ('response' in chat) return chat.response;
 *   return chatResponse({ messages: chat.messages, model, tools: toolbox.tools, index: toolbox.index });
 * }
 * ```
 */
export async function readChatRequest<UI_MESSAGE extends UIMessage = ToolbeltUIMessage>({
  request,
  maxBodyBytes = 12 * 1024 * 1024,
  maxMessages = 200,
  maxMessageChars = 20_000,
  maxReplyChars = 200_000,
  abortSignal = request.signal,
}: ReadChatRequestOptions): Promise<ChatRequest<UI_MESSAGE>> {
  const limits = { maxBodyBytes, maxMessages, maxMessageChars, maxReplyChars };
  for (const [argument, value] of Object.entries(limits)) {
    if (!Number.isSafeInteger(value) || value < 1)
      throw new InvalidArgumentError({
        argument,
        value,
        message: 'expected a whole number of at least 1.',
      });
  }
  const text = await readBody(request, maxBodyBytes, abortSignal);
  if (text === undefined) {
    const size = `${Math.round((maxBodyBytes / (1024 * 1024)) * 10) / 10} MiB`;
    return refuse(
      413,
      `The request is larger than ${size}; send less (attach fewer or smaller files).`,
    );
  }
  let body: { id?: unknown; messages?: unknown } | undefined;
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    body = undefined;
  }
  const checked = await safeValidateUIMessages<UI_MESSAGE>({ messages: body?.messages });
  if (!checked.success)
    return refuse(
      400,
      `Expected { messages: UIMessage[] } as useChat sends them: ${checked.error.message}`,
    );
  const messages = checked.data;
  if (messages.length > maxMessages)
    return refuse(
      400,
      `Too many messages: ${messages.length} (at most ${maxMessages}); start a new chat.`,
    );
  for (const [index, message] of messages.entries()) {
    const chars = messageChars(message);
    const user = message.role === 'user';
    const limit = user ? maxMessageChars : maxReplyChars;
    if (chars > limit)
      return refuse(
        400,
        `Message ${index + 1} is too long: ${chars} characters (at most ${limit}); ` +
          (user ? 'attach long text as a file instead.' : 'start a new chat.'),
      );
  }
  const id = body?.id;
  return { messages, chatId: typeof id === 'string' && /^[\w-]{1,100}$/.test(id) ? id : undefined };
}

// Every part counts, not only text: the client writes all of them (a forged tool output or
// reasoning reaches the model as much as text does). Text counts as its characters, other
// parts as their JSON; file contents (file parts, and `data` / data URLs next to a
// `mediaType`, as python images and MCP media carry them) are left to `maxBodyBytes`.
function messageChars(message: UIMessage): number {
  let chars = 0;
  for (const part of message.parts) {
    if (part.type === 'text') chars += part.text.length;
    else chars += JSON.stringify(part, withoutFileData).length;
  }
  return chars;
}

function withoutFileData(this: unknown, key: string, value: unknown): unknown {
  const holder = this as Record<string, unknown>;
  if (typeof value !== 'string' || (key !== 'data' && key !== 'url')) return value;
  const isFile = holder.type === 'file' || typeof holder.mediaType === 'string';
  if (!isFile) return value;
  return key === 'data' || value.startsWith('data:') ? undefined : value;
}

const refuse = (status: number, error: string) => ({
  response: Response.json({ error }, { status }),
});

/** The body as text, or undefined when it is (or says it is) larger than `max` bytes. */
async function readBody(
  request: Request,
  max: number,
  abortSignal: AbortSignal,
): Promise<string | undefined> {
  abortSignal.throwIfAborted();
  if (Number(request.headers.get('content-length') ?? Number.NaN) > max) {
    await request.body?.cancel();
    return undefined;
  }
  if (request.body === null) return '';
  const reader = request.body.getReader();
  const onAbort = () => void reader.cancel(abortSignal.reason).catch(() => {});
  abortSignal.addEventListener('abort', onAbort, { once: true });
  try {
    const chunks: Uint8Array[] = [];
    let size = 0;
    for (;;) {
      const { done, value } = await reader.read();
      abortSignal.throwIfAborted();
      if (done) break;
      size += value.byteLength;
      if (size > max) {
        await reader.cancel();
        return undefined;
      }
      chunks.push(value);
    }
    const bytes = new Uint8Array(size);
    let offset = 0;
    for (const chunk of chunks) {
      bytes.set(chunk, offset);
      offset += chunk.byteLength;
    }
    return new TextDecoder().decode(bytes);
  } finally {
    abortSignal.removeEventListener('abort', onAbort);
  }
}
