import { historyBytes } from './input-versions.ts';
import type { InterpreterHandle } from './interpreter-handle.ts';

/** One of a user's conversations with history in the store. */
export type UserConversation = {
  /** The conversation id, hashed under the store's id key. */
  id: string;
  /** Bytes its history holds. */
  bytes: number;
  /** When its last cell ended (epoch ms). */
  usedAt: number;
};

/**
 * A user's list of conversations after `conversation` saved `handle`, within the per-user
 * bounds: past `maxConversations` or `maxBytes` in all, the least recently used other
 * conversations go (their history is to be removed). The conversation just used always stays
 * (its own history is bounded by `maxHistoryBytes`, which is at most `maxBytes`).
 *
 * @example
 * ```ts
 * const { kept, evicted } = boundUserConversations({ list, conversation, handle, maxConversations: 20, maxBytes: 64 << 20 });
 * ```
 */
export function boundUserConversations({
  list,
  conversation,
  handle,
  maxConversations,
  maxBytes,
}: {
  /** The user's list as stored. */
  list: readonly UserConversation[];
  /** The conversation that was used (hashed id). */
  conversation: string;
  /** Its handle as saved. */
  handle: InterpreterHandle;
  /** Conversations with history per user. */
  maxConversations: number;
  /** Bytes of history per user. */
  maxBytes: number;
}): { kept: UserConversation[]; evicted: UserConversation[] } {
  const kept = list.filter(entry => entry.id !== conversation);
  // Oldest first, so the ones to go are at the front.
  kept.sort((a, b) => a.usedAt - b.usedAt);
  const current = { id: conversation, bytes: historyBytes(handle), usedAt: handle.usedAt };
  let total = current.bytes;
  for (const entry of kept) total += entry.bytes;
  const evicted: UserConversation[] = [];
  while (kept.length > 0 && (kept.length + 1 > maxConversations || total > maxBytes)) {
    const entry = kept.shift()!;
    total -= entry.bytes;
    evicted.push(entry);
  }
  kept.push(current);
  return { kept, evicted };
}
