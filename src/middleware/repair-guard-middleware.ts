import type { LanguageModelMiddleware } from 'ai';
import { InvalidArgumentError } from '../errors/invalid-argument-error.ts';
import { errorFingerprint } from '../repair/error-fingerprint.ts';
import { trailingFailures } from '../repair/repair-record.ts';
import { type RepairReason, decideRepair } from '../repair/repair-policy.ts';

/** Options of {@link repairGuardMiddleware}. */
export type RepairGuardOptions = {
  /** The guarded tool's name. */
  toolName?: string;
  /**
   * Repairs allowed in one turn for failures the tool left no decision for (a tool other than
   * `pythonTool`); the python tool records its own decision, which the guard follows.
   */
  maxRepairs?: number;
  /** Called when the guard withholds the tool, e.g. for logging. */
  onHalt?: (event: { toolName: string; failures: number; reason: RepairReason }) => void;
};

/**
 * Enforces the python tool's repair decisions in agent mode, from the
 * conversation itself, so it holds in serverless routes where no process
 * remembers earlier requests: the tool records, with each failed run, whether
 * the model may repair it (its one policy: budget, repeated-error halt,
 * failure kind, `onError` hook); once the latest failure says `halt`, the tool
 * is withheld for the rest of the turn and one short system note asks the model
 * to explain the failure instead of retrying.
 *
 * @example
 * ```ts
 * const model = wrapLanguageModel({ model: openai('gpt-4.1'), middleware: [toolSelectionMiddleware({ index }), repairGuardMiddleware()] });
 * ```
 */
export function repairGuardMiddleware({
  toolName = 'python',
  maxRepairs = 2,
  onHalt,
}: RepairGuardOptions = {}): LanguageModelMiddleware {
  if (!Number.isInteger(maxRepairs) || maxRepairs < 0) {
    throw new InvalidArgumentError({
      argument: 'maxRepairs',
      value: maxRepairs,
      message: 'expected a non-negative integer',
    });
  }
  return {
    specificationVersion: 'v4',
    async transformParams({ params }) {
      if (!params.tools?.some(tool => tool.type === 'function' && tool.name === toolName))
        return params;
      const failures = trailingFailures(params.prompt, toolName);
      const last = failures.at(-1);
      if (last === undefined) return params;
      const previous = failures.at(-2);
      // A failure without the tool's record gets the same policy, with this guard's budget.
      const { decision, reason } =
        last.record ??
        (await decideRepair({
          failure: {
            attempt: failures.length,
            status: 'error',
            error: last.text,
            fingerprint: errorFingerprint(last.text),
            code: '',
          },
          ...(previous
            ? {
                previousFingerprint:
                  previous.record?.fingerprint ?? errorFingerprint(previous.text),
              }
            : {}),
          policy: { maxRepairs },
        }));
      if (decision !== 'halt') return params;
      onHalt?.({ toolName, failures: failures.length, reason });

      const tools = params.tools.filter(
        tool => !(tool.type === 'function' && tool.name === toolName),
      );
      const choice = params.toolChoice;
      const toolChoice =
        (choice?.type === 'tool' && choice.toolName === toolName) ||
        (choice?.type === 'required' && tools.length === 0)
          ? ({ type: 'auto' } as const)
          : choice;
      const note =
        `The ${toolName} tool failed ${failures.length} time${failures.length === 1 ? '' : 's'} in a row` +
        `${reason === 'repeated-error' ? ' with the same error' : ''} and is not available for the rest of this turn. ` +
        'Do not try to run code again; explain to the user what went wrong, using the last error, and what they could change.';
      const [first, ...rest] = params.prompt;
      // One system message at the front: some providers reject system messages later in the conversation.
      const prompt =
        first?.role === 'system'
          ? [{ ...first, content: `${first.content}\n\n${note}` }, ...rest]
          : [{ role: 'system' as const, content: note }, ...params.prompt];
      return { ...params, tools, prompt, ...(toolChoice ? { toolChoice } : {}) };
    },
  };
}
