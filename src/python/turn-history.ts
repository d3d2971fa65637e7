import type { ConversationMessage } from '../middleware/conversation.ts';

/** A python result of the current turn that failed. */
export type PriorFailure = { text: string };

/**
 * The consecutive failed results of `toolName` at the end of the current turn
 * (everything after the last user message), oldest first. Reading them from
 * the conversation keeps agent-mode repair stateless: a serverless route
 * replaying the conversation in a new process counts the same.
 */
export function trailingFailures(
  messages: readonly ConversationMessage[],
  toolName: string,
): PriorFailure[] {
  const lastUser = messages.findLastIndex(message => message.role === 'user');
  const failures: PriorFailure[] = [];
  for (const message of messages.slice(lastUser + 1)) {
    if (message.role !== 'tool' || !Array.isArray(message.content)) continue;
    for (const part of message.content as {
      type?: string;
      toolName?: string;
      output?: { type?: string; value?: unknown };
    }[]) {
      if (part?.type !== 'tool-result' || part.toolName !== toolName) continue;
      const output = part.output;
      if (output?.type === 'error-text' || output?.type === 'error-json') {
        failures.push({
          text: typeof output.value === 'string' ? output.value : JSON.stringify(output.value),
        });
      } else {
        failures.length = 0; // a success resets the streak
      }
    }
  }
  return failures;
}
