import { type LanguageModel, tool } from 'ai';
import { z } from 'zod';
import { InvalidArgumentError } from '../errors/invalid-argument-error.ts';
import { PythonExecutionError } from '../errors/python-execution-error.ts';
import type { ConversationMessage } from '../middleware/conversation.ts';
import { errorFingerprint } from '../repair/error-fingerprint.ts';
import { repairCode } from '../repair/repair-code.ts';
import { type FailureStatus, type RepairPolicy, decideRepair } from '../repair/repair-policy.ts';
import { trimError } from '../repair/trim-error.ts';
import type { PythonSandbox } from './python-sandbox.ts';
import {
  HALT_MARKER,
  type PythonAttemptEvent,
  type PythonToolOutput,
} from './python-tool-output.ts';
import { trailingFailures } from './turn-history.ts';

/** Options of {@link pythonTool}. */
export type PythonToolOptions = RepairPolicy & {
  /** Where code runs, e.g. `new DockerSandbox()` from `ai-toolbelt/sandbox`. */
  sandbox: PythonSandbox;
  /** Wall-clock limit per run. */
  timeoutMs?: number;
  /**
   * Inline mode: the tool asks this model for fixed code and reruns it itself;
   * the main model sees only the final result. Omit for agent mode, where
   * the main model sees each error and writes the fix in its next step.
   */
  repair?: { model: LanguageModel };
  /** The tool's name in the tool set; the repair guard must use the same. */
  toolName?: string;
  /** Longest stdout handed to the model; the rest is cut with a note. */
  maxOutputChars?: number;
  /** Every streamed state, e.g. to write `data-repair` parts (see `repairTimeline`). */
  onAttempt?: (event: PythonAttemptEvent) => void;
  /** The description the model reads. */
  description?: string;
};

const DEFAULT_DESCRIPTION =
  'Run Python 3 code in an isolated sandbox (no network, no files outside /tmp, limited time and memory) ' +
  'and return what it prints to stdout. Print the values you need.';

/**
 * The `python` tool: runs model-written code in a sandbox and streams each
 * attempt (`running`, `failed`, `repairing`, `success`) as preliminary tool
 * results. Failures end as a tool error holding the trimmed stderr, so the
 * model can fix the code (agent mode), or are repaired inline by a repair
 * model (`repair: { model }`), within one policy: a budget of repairs, a halt
 * on a repeated error, no repair of timeouts and crashes by default, and the
 * `onError` hook.
 *
 * @example
 * ```ts
 * const sandbox = new DockerSandbox();
 * const tools = { ...toolbox.tools, python: pythonTool({ sandbox }) };
 * const model = wrapLanguageModel({ model: openai('gpt-4.1'), middleware: [selection.middleware, repairGuardMiddleware()] });
 * ```
 */
export function pythonTool({
  sandbox,
  timeoutMs = 10_000,
  repair,
  toolName = 'python',
  maxOutputChars = 8_000,
  onAttempt,
  description = DEFAULT_DESCRIPTION,
  ...policy
}: PythonToolOptions) {
  if (sandbox == null || typeof sandbox.execute !== 'function') {
    throw new InvalidArgumentError({
      argument: 'sandbox',
      value: sandbox,
      message: 'expected an object with execute(code, options)',
    });
  }
  if (!(Number.isFinite(timeoutMs) && timeoutMs > 0)) {
    throw new InvalidArgumentError({
      argument: 'timeoutMs',
      value: timeoutMs,
      message: 'expected a positive number of milliseconds',
    });
  }

  return tool({
    description,
    inputSchema: z.object({ code: z.string().describe('The complete Python 3 program to run.') }),
    async *execute(
      { code },
      { toolCallId, messages, abortSignal },
    ): AsyncGenerator<PythonToolOutput> {
      const emit = (output: PythonToolOutput): PythonToolOutput => {
        onAttempt?.({ ...output, toolCallId });
        return output;
      };
      // Agent mode continues the count of this turn's earlier failed calls.
      const prior = repair ? [] : trailingFailures(messages as ConversationMessage[], toolName);
      let attempt = prior.length + 1;
      let previousFingerprint =
        prior.length > 0 ? errorFingerprint((prior.at(-1) as { text: string }).text) : undefined;
      let current = code;
      for (;;) {
        yield emit({ state: 'running', attempt, code: current });
        const result = await sandbox.execute(current, {
          timeoutMs,
          ...(abortSignal ? { abortSignal } : {}),
        });
        if (result.status === 'success') {
          const cut = result.stdout.length > maxOutputChars;
          const stdout = cut
            ? `${result.stdout.slice(0, maxOutputChars)}\n… (${result.stdout.length - maxOutputChars} more characters cut)`
            : result.stdout;
          yield emit({
            state: 'success',
            attempt,
            attempts: attempt - prior.length,
            stdout,
            truncated: cut || result.truncated,
            code: current,
          });
          return;
        }
        const status = result.status as FailureStatus;
        const error = describeFailure(status, result, timeoutMs);
        const fingerprint = status === 'error' ? errorFingerprint(result.stderr) : status;
        const { decision, reason } = await decideRepair({
          failure: { attempt, status, error, fingerprint, code: current },
          ...(previousFingerprint !== undefined ? { previousFingerprint } : {}),
          policy,
        });
        yield emit({ state: 'failed', attempt, status, error, next: decision, reason });
        if (decision === 'halt' || !repair) {
          const tail = decision === 'halt' ? `\n${HALT_MARKER}` : '';
          throw new PythonExecutionError({
            message: `${error}${tail}`,
            status,
            attempts: attempt,
            fingerprint,
          });
        }
        previousFingerprint = fingerprint;
        attempt++;
        yield emit({ state: 'repairing', attempt });
        current = await repairCode({
          model: repair.model,
          code: current,
          error,
          ...(abortSignal ? { abortSignal } : {}),
        });
      }
    },
    // The model needs the output, not the bookkeeping.
    toModelOutput: ({ output }) =>
      output.state === 'success'
        ? { type: 'text', value: output.stdout === '' ? '(no output)' : output.stdout }
        : { type: 'json', value: output },
  });
}

// Enough of a killed run's last output to tell where it was stuck.
const LAST_OUTPUT_CHARS = 500;

function describeFailure(
  status: FailureStatus,
  { stdout, stderr }: { stdout: string; stderr: string },
  timeoutMs: number,
): string {
  const trimmed = trimError(stderr);
  switch (status) {
    case 'timeout': {
      const last = stdout.trimEnd().slice(-LAST_OUTPUT_CHARS);
      return [
        `Timed out after ${timeoutMs} ms and was stopped.`,
        ...(last ? [`Its last output:\n${last}`] : []),
        ...(trimmed ? [trimmed] : []),
      ].join('\n');
    }
    case 'oom':
      return 'Ran out of memory and was stopped (the sandbox allows 256 MiB).';
    case 'output-limit':
      return 'Printed more output than the sandbox allows and was stopped. Print less.';
    case 'crashed':
      return `The sandbox stopped unexpectedly${trimmed ? `:\n${trimmed}` : ' (for example after spawning too many processes).'}`;
    default:
      return trimmed || 'Exited with an error and no message.';
  }
}
