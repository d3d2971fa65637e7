import type { FailureStatus, RepairDecision, RepairReason } from './repair-policy.ts';

/**
 * What the python tool decided about one failed run, kept in the conversation next to the
 * error text the model reads (in the tool result's `providerOptions`, which providers ignore).
 * The repair guard and the next call of the tool read it back, so the decision is made once,
 * by one policy, and survives a serverless route replaying the conversation.
 *
 * @example
 * ```ts
 * const record: RepairRecord = { attempt: 2, status: 'error', fingerprint: 'NameError: ...', decision: 'halt', reason: 'repeated-error' };
 * ```
 */
export type RepairRecord = {
  /** 1-based attempt number within the turn. */
  attempt: number;
  /** How the run failed. */
  status: FailureStatus;
  /** The normalised error (see `errorFingerprint`). */
  fingerprint: string;
  /** `repair`: the model may fix the code; `halt`: the tool is done for this turn. */
  decision: RepairDecision;
  /** Why. */
  reason: RepairReason;
};

/** The `providerOptions` key the record travels under (no provider reads it). */
export const REPAIR_RECORD_KEY = 'aiToolbelt';

/**
 * A failed run as the model sees it: the error text as a tool error, with the record attached.
 *
 * @example
 * ```ts
 * toolModelOutput = failureOutput({ text: 'NameError: ...', record });
 * ```
 */
export function failureOutput({ text, record }: { text: string; record: RepairRecord }) {
  return {
    type: 'error-text' as const,
    value: text,
    providerOptions: { [REPAIR_RECORD_KEY]: { repair: record } },
  };
}

/** A failed result of the current turn: its text, and the tool's record when it has one. */
export type PriorFailure = { text: string; record?: RepairRecord };

type ToolResultLike = {
  type?: string;
  toolName?: string;
  output?: { type?: string; value?: unknown; providerOptions?: Record<string, unknown> };
};

/**
 * The consecutive failed results of `toolName` at the end of the current turn (everything
 * after the last user message), oldest first, in either message shape the AI SDK uses (the
 * provider prompt a middleware sees, or `ModelMessage[]`). A success resets the streak.
 *
 * @example
 * ```ts
 * const failures = trailingFailures(params.prompt, 'python');
 * failures.at(-1)?.record?.decision; // 'halt'
 * ```
 */
export function trailingFailures(
  messages: ReadonlyArray<{ role: string; content: unknown }>,
  toolName: string,
): PriorFailure[] {
  const lastUser = messages.findLastIndex(message => message.role === 'user');
  const failures: PriorFailure[] = [];
  for (const message of messages.slice(lastUser + 1)) {
    if (message.role !== 'tool' || !Array.isArray(message.content)) continue;
    for (const part of message.content as ToolResultLike[]) {
      if (part?.type !== 'tool-result' || part.toolName !== toolName) continue;
      const output = part.output;
      if (output?.type !== 'error-text' && output?.type !== 'error-json') {
        failures.length = 0;
        continue;
      }
      const text = typeof output.value === 'string' ? output.value : JSON.stringify(output.value);
      const record = readRecord(output.providerOptions);
      failures.push(record ? { text, record } : { text });
    }
  }
  return failures;
}

function readRecord(
  providerOptions: Record<string, unknown> | undefined,
): RepairRecord | undefined {
  const record = (providerOptions?.[REPAIR_RECORD_KEY] as { repair?: Partial<RepairRecord> })
    ?.repair;
  if (record === undefined || record === null) return undefined;
  const { attempt, status, fingerprint, decision, reason } = record;
  if (typeof attempt !== 'number' || typeof fingerprint !== 'string') return undefined;
  if (decision !== 'repair' && decision !== 'halt') return undefined;
  if (typeof status !== 'string' || typeof reason !== 'string') return undefined;
  return { attempt, status, fingerprint, decision, reason };
}
