import type { UIMessage } from 'ai';

/**
 * What the chat endpoint accepts. Attachments travel inside the request as data URLs (base64,
 * a third larger than the file), so the body limit leaves room for a few MB of CSV; the text
 * limits keep a pasted novel (or a 20 MB "message") from reaching the model, retrieval and
 * the selection part that echoes the query.
 */
export const LIMITS = {
  /** Whole request body, bytes (Hono's `bodyLimit` answers 413 past it). */
  bodyBytes: 12 * 1024 * 1024,
  /** Bytes of all attached files together (`pythonAttachments`' `maxBytes`). */
  attachmentBytes: 8 * 1024 * 1024,
  /** Messages in one conversation. */
  messages: 200,
  /** Characters of text in one message (all its text parts). */
  messageChars: 20_000,
  /** Characters of the query echoed back in `data-tool-selection`. */
  echoChars: 200,
  /** Characters of `q` for /api/tools/search. */
  searchChars: 500,
} as const;

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

/** `text` cut to `max` characters, with an ellipsis when cut. */
export function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
