import { InvalidArgumentError } from '../../errors/invalid-argument-error.ts';
import type { SandboxConversation } from '../types.ts';

/**
 * The conversation of a cell call, checked: an id and a user id, each a non-empty string of at
 * most 512 characters; anything else is an `InvalidArgumentError` naming the field.
 *
 * @example
 * ```ts
 * const { id, userId } = checkConversation(options.conversation);
 * ```
 */
export function checkConversation(conversation: unknown): SandboxConversation {
  const { id, userId } = (conversation ?? {}) as Partial<SandboxConversation>;
  for (const [argument, value] of [
    ['conversation.id', id],
    ['conversation.userId', userId],
  ] as const) {
    if (typeof value !== 'string' || value.length === 0 || value.length > 512) {
      throw new InvalidArgumentError({
        argument,
        value,
        message: 'must be a non-empty string of at most 512 characters',
      });
    }
  }
  return { id: id!, userId: userId! };
}
