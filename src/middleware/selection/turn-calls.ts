import { type ConversationMessage, textOf } from '../conversation.ts';

type Part = { type?: unknown; toolName?: unknown; output?: { type?: unknown; value?: unknown } };

function turnStart(messages: readonly ConversationMessage[]): number {
  for (let i = messages.length - 1; i >= 0; i--)
    if ((messages[i] as ConversationMessage).role === 'user') return i + 1;
  return 0;
}

function partsOf(message: ConversationMessage): Part[] {
  return Array.isArray(message.content) ? (message.content as Part[]) : [];
}

/**
 * Tool names that a search tool (the AI SDK's `toolSearch`) returned in the
 * current turn: its results are `{ tools: [{ name }] }`. The SDK makes them
 * callable on the next step; selection keeps them so they stay callable.
 *
 * @example
 * ```ts
 * discoveredTools(params.prompt, new Set(['toolSearch'])); // ['get_weather']
 * ```
 */
export function discoveredTools(
  messages: readonly ConversationMessage[],
  searchTools: ReadonlySet<string>,
): string[] {
  if (searchTools.size === 0) return [];
  const names: string[] = [];
  for (let i = turnStart(messages); i < messages.length; i++) {
    for (const part of partsOf(messages[i] as ConversationMessage)) {
      if (part?.type !== 'tool-result' || !searchTools.has(part.toolName as string)) continue;
      const value = part.output?.type === 'json' ? part.output.value : undefined;
      const found = (value as { tools?: unknown } | undefined)?.tools;
      if (!Array.isArray(found)) continue;
      for (const tool of found) {
        const name = (tool as { name?: unknown } | null)?.name;
        if (typeof name === 'string') names.push(name);
      }
    }
  }
  return names;
}

/** The text of the user message before the latest one ('' when there is none). */
export function previousUserText(messages: readonly ConversationMessage[]): string {
  let seen = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i] as ConversationMessage;
    if (message.role !== 'user') continue;
    if (++seen === 2) return textOf(message.content).trim();
  }
  return '';
}
