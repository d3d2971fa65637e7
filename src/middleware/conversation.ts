/**
 * Reads what the selector needs from a conversation, in either shape the AI
 * SDK uses: the provider prompt a middleware sees (`LanguageModelV4Prompt`)
 * and the `ModelMessage[]` that `prepareStep` sees. Both hold user text in
 * `{ type: 'text' }` parts (or a string) and calls in `{ type: 'tool-call' }` parts.
 */
export type ConversationMessage = { role: string; content: unknown };

/** How the retrieval query is taken from the conversation. */
export type QuerySource =
  | 'last-user-message'
  | { lastUserTurns: number }
  | ((messages: readonly ConversationMessage[]) => string);

/** The text of a message's content: a string, or its `text` parts joined by newlines. */
export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter(
      (part): part is { type: 'text'; text: string } =>
        part != null && part.type === 'text' && typeof part.text === 'string',
    )
    .map(part => part.text)
    .join('\n');
}

/** The retrieval query for a conversation; '' when there is no user text. */
export function extractQuery(
  messages: readonly ConversationMessage[],
  source: QuerySource = 'last-user-message',
): string {
  if (typeof source === 'function') return source(messages).trim();
  const turns = source === 'last-user-message' ? 1 : Math.max(1, Math.floor(source.lastUserTurns));
  const texts: string[] = [];
  for (let i = messages.length - 1; i >= 0 && texts.length < turns; i--) {
    const message = messages[i] as ConversationMessage;
    if (message.role !== 'user') continue;
    const text = textOf(message.content).trim();
    if (text !== '') texts.unshift(text);
  }
  return texts.join('\n');
}

/** Names of the tools called anywhere in the conversation, most recent first. */
export function calledTools(messages: readonly ConversationMessage[]): string[] {
  const names: string[] = [];
  const seen = new Set<string>();
  for (let i = messages.length - 1; i >= 0; i--) {
    const { role, content } = messages[i] as ConversationMessage;
    if (role !== 'assistant' || !Array.isArray(content)) continue;
    for (let j = content.length - 1; j >= 0; j--) {
      const part = content[j] as { type?: unknown; toolName?: unknown } | null;
      if (
        part?.type !== 'tool-call' ||
        typeof part.toolName !== 'string' ||
        seen.has(part.toolName)
      )
        continue;
      seen.add(part.toolName);
      names.push(part.toolName);
    }
  }
  return names;
}
