import type { UIMessage } from 'ai';

/**
 * What the chat route accepts. Attachments travel inside the request as data URLs (base64,
 * a third larger than the file), so the body limit leaves room for a few MB of CSV; the text
 * limits keep a pasted novel (or a 20 MB "message") from reaching the model and retrieval.
 */
export const LIMITS = {
  /** Whole request body, bytes (413 past it). */
  bodyBytes: 12 * 1024 * 1024,
  /** Bytes of all attached files together (`pythonAttachments`' `maxBytes`). */
  attachmentBytes: 8 * 1024 * 1024,
  /** Messages in one conversation. */
  messages: 200,
  /** Characters of text in one message (all its text parts). */
  messageChars: 20_000,
} as const;

const tooLarge = () =>
  Response.json(
    {
      error: `The request is larger than ${LIMITS.bodyBytes / (1024 * 1024)} MiB; attach smaller files (at most ${LIMITS.attachmentBytes / (1024 * 1024)} MiB in all).`,
    },
    { status: 413 },
  );

/**
 * Reads the JSON body up to `LIMITS.bodyBytes`: refused from Content-Length when it says so,
 * and cut while streaming when it does not (a chunked upload), never buffered past the limit.
 * Resolves with the parsed value (undefined when it is not JSON) or a 413 response.
 */
export async function readJsonBody(
  request: Request,
): Promise<{ value: unknown } | { response: Response }> {
  const declared = Number(request.headers.get('content-length') ?? Number.NaN);
  if (declared > LIMITS.bodyBytes) return { response: tooLarge() };
  if (request.body === null) return { value: undefined };
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = request.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > LIMITS.bodyBytes) {
      await reader.cancel();
      return { response: tooLarge() };
    }
    chunks.push(value);
  }
  try {
    return { value: JSON.parse(Buffer.concat(chunks).toString('utf8')) };
  } catch {
    return { value: undefined };
  }
}

/** Why `messages` is over the limits, or undefined when they fit. */
export function checkMessageLimits(messages: readonly UIMessage[]): string | undefined {
  if (messages.length > LIMITS.messages) {
    return `Too many messages: ${messages.length} (at most ${LIMITS.messages}); start a new chat.`;
  }
  for (const [index, message] of messages.entries()) {
    let chars = 0;
    for (const part of message.parts) if (part.type === 'text') chars += part.text.length;
    if (chars > LIMITS.messageChars) {
      return `Message ${index + 1} is too long: ${chars} characters (at most ${LIMITS.messageChars}); attach long text as a file instead.`;
    }
  }
  return undefined;
}
