import { sha256Base64Url } from '../../util/sha256.ts';
import type { ConversationMessage } from '../conversation.ts';

/**
 * What a model call was given, carried in the conversation: the selection
 * middleware adds it to the `providerMetadata` of each part the model returns,
 * which the AI SDK keeps as `providerOptions` on the assistant message (and
 * `useChat` as the part's `providerMetadata`, which `convertToModelMessages`
 * turns back). Providers read only their own key, so none reads this one. The
 * next call reads it back: the selection is recovered from the conversation
 * alone, so it survives serverless routes and replicas without server state.
 */
export type SelectionMarker = {
  /** A short hash of the query the selection was made for (not the query itself). */
  query: string;
  /** The function tools sent, in the order they were sent. */
  tools: string[];
  /** The ones among them that held retrieval's seats. */
  seats: string[];
};

/** The `providerOptions` / `providerMetadata` key (shared with the repair record). */
export const MARKER_KEY = 'aiToolbelt';
const FIELD = 'toolSelection';
// A marker naming more tools than this is not ours (or is corrupt): ignored.
const MAX_MARKED_TOOLS = 1_000;

/** The hash a marker keeps of its query. */
export function queryHash(query: string): string {
  return sha256Base64Url(query).slice(0, 16);
}

/**
 * `providerMetadata` with the marker merged in, keeping what the provider put there.
 *
 * @example
 * ```ts
 * part.providerMetadata = withMarker(part.providerMetadata, marker);
 * ```
 */
export function withMarker<T extends Record<string, unknown> | undefined>(
  metadata: T,
  marker: SelectionMarker,
): Record<string, Record<string, unknown>> {
  const ours = (metadata?.[MARKER_KEY] ?? {}) as Record<string, unknown>;
  return {
    ...(metadata as Record<string, Record<string, unknown>> | undefined),
    [MARKER_KEY]: { ...ours, [FIELD]: marker },
  };
}

/**
 * The latest marker in the conversation (from the most recent assistant
 * message that has one), or undefined. Malformed markers are ignored.
 * `inTurn` says it was written after the latest user message, i.e. by an
 * earlier step of the request being answered: a user who sends the same text
 * again (say, after signing in to a server) starts a new request.
 *
 * @example
 * ```ts
 * const previous = readMarker(messages)?.seats ?? [];
 * ```
 */
export function readMarker(
  messages: readonly ConversationMessage[],
): (SelectionMarker & { inTurn: boolean }) | undefined {
  let inTurn = true;
  for (let i = messages.length - 1; i >= 0; i--) {
    const { role, content } = messages[i] as ConversationMessage;
    if (role === 'user') inTurn = false;
    if (role !== 'assistant' || !Array.isArray(content)) continue;
    for (let j = content.length - 1; j >= 0; j--) {
      const part = content[j] as { providerOptions?: unknown } | null;
      const options = part?.providerOptions as Record<string, unknown> | undefined;
      const marker = parseMarker((options?.[MARKER_KEY] as Record<string, unknown>)?.[FIELD]);
      if (marker !== undefined) return { ...marker, inTurn };
    }
  }
  return undefined;
}

function parseMarker(value: unknown): SelectionMarker | undefined {
  if (value == null || typeof value !== 'object') return undefined;
  const { query, tools, seats } = value as Record<string, unknown>;
  if (typeof query !== 'string' || !isNames(tools) || !isNames(seats)) return undefined;
  return { query, tools, seats };
}

function isNames(value: unknown): value is string[] {
  return (
    Array.isArray(value) &&
    value.length <= MAX_MARKED_TOOLS &&
    value.every(name => typeof name === 'string')
  );
}
