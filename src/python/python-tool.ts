import { type LanguageModel, tool } from 'ai';
import { z } from 'zod';
import { CodeTooLargeError } from '../errors/code-too-large-error.ts';
import { InvalidArgumentError } from '../errors/invalid-argument-error.ts';
import { SandboxBusyError } from '../errors/sandbox-busy-error.ts';
import { errorFingerprint } from '../repair/error-fingerprint.ts';
import { repairCode } from '../repair/repair-code.ts';
import {
  DEFAULT_MAX_REPAIRS,
  type FailureStatus,
  type RepairPolicy,
  decideRepair,
} from '../repair/repair-policy.ts';
import { trimError } from '../repair/trim-error.ts';
import { refusalNotes } from '../sandbox/egress/network-usage.ts';
import type { SandboxInputFile } from '../sandbox/types.ts';
import { type SaveArtifact, toPythonArtifacts, withoutBytes } from './python-artifacts.ts';
import { toPythonResults } from './python-results.ts';
import { LiveOutput } from './live-output.ts';
import { pythonModelOutput } from './python-model-output.ts';
import type { PythonSandbox } from './python-sandbox.ts';
import { type PythonConversation, checkConversationSupport, runPython } from './run-python.ts';
import {
  BASE_DESCRIPTION,
  type PythonNetwork,
  pythonToolDescription,
} from './python-tool-description.ts';
import { trailingFailures } from '../repair/repair-record.ts';
import type { PythonAttemptEvent, PythonToolOutput } from './python-tool-output.ts';
import { traceAttempt, traceRepair } from '../telemetry/python-telemetry.ts';

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
  /**
   * Every streamed state, e.g. to write `data-repair` parts (see `repairTimeline`); image
   * and file bytes are left out (the tool output has them).
   */
  onAttempt?: (event: PythonAttemptEvent) => void;
  /**
   * The description the model reads; by default it names the image's packages (from
   * `sandbox.packages`) and, with `files`, where input files are.
   */
  description?: string;
  /**
   * Files placed under /tmp before every run, e.g. what the user attached (see
   * `pythonAttachments`); a function is called per run.
   */
  files?:
    | readonly SandboxInputFile[]
    | ((context: {
        toolCallId: string;
      }) => readonly SandboxInputFile[] | Promise<readonly SandboxInputFile[]>);
  /** Stores images and files and returns their URLs; without it they travel inline as base64. */
  saveArtifact?: SaveArtifact;
  /**
   * Run each call as the next cell of the conversation's long-lived interpreter (globals,
   * imports and files persist between calls; needs a sandbox with `executeCell`, such as
   * `DockerSandbox`): the conversation and its user, or a function of the call that returns
   * them. Calls without one run one-shot, each in a fresh interpreter.
   */
  conversation?: PythonConversation;
  /**
   * Give the model the images as image content (it can then read the chart). Models that
   * take no images in tool results need `toolResultImagesMiddleware()`, which swaps them
   * for a short text.
   */
  modelImages?: boolean;
};

/**
 * The `python` tool: runs model-written code in a sandbox and streams each
 * attempt (`running`, `failed`, `repairing`, `success`) as preliminary tool
 * results. Failures end as a tool error holding the trimmed stderr, so the
 * model can fix the code (agent mode), or are repaired inline by a repair
 * model (`repair: { model }`), within one policy: a budget of repairs, a halt
 * on a repeated error, no repair of timeouts and crashes by default, and the
 * `onError` hook. When the sandbox itself fails (no engine, a Docker timeout, busy), the
 * model reads one short line without host details ("the sandbox is unavailable; try again
 * later"), the call ends as `failed` with status `unavailable`, and the typed error goes to
 * the app: `onError` gets it as `cause` (without a hook it is a process warning).
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
  description,
  files,
  saveArtifact,
  modelImages = true,
  conversation,
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

  if (files !== undefined && typeof files !== 'function' && !Array.isArray(files)) {
    throw new InvalidArgumentError({
      argument: 'files',
      value: files,
      message: 'expected an array of { path, data } or a function returning one',
    });
  }
  checkConversationSupport(sandbox, conversation);
  const packagesOf = (sandbox as { packages?: readonly string[] }).packages;

  return tool({
    // A getter: `DockerSandbox.packages` is known once the sandbox is ready, after this runs.
    get description() {
      return (
        description ??
        pythonToolDescription({
          base: BASE_DESCRIPTION,
          packages: (sandbox as { packages?: readonly string[] }).packages ?? packagesOf,
          inputFiles: files !== undefined,
          stateful: conversation !== undefined,
          network: (sandbox as { network?: PythonNetwork }).network,
        })
      );
    },
    inputSchema: z.object({ code: z.string().describe('The complete Python 3 program to run.') }),
    async *execute(
      { code },
      { toolCallId, messages, abortSignal, context },
    ): AsyncGenerator<PythonToolOutput> {
      const emit = (output: PythonToolOutput): PythonToolOutput => {
        onAttempt?.(
          output.state === 'success'
            ? {
                ...output,
                images: withoutBytes(output.images),
                files: withoutBytes(output.files),
                toolCallId,
              }
            : { ...output, toolCallId },
        );
        return output;
      };
      // Agent mode continues the count of this turn's earlier failed calls.
      const prior = repair ? [] : trailingFailures(messages, toolName);
      const last = prior.at(-1);
      let attempt = (last?.record?.attempt ?? prior.length) + 1;
      let previousFingerprint = last && (last.record?.fingerprint ?? errorFingerprint(last.text));
      let current = code;
      // Said on every later output of this call: a repaired attempt's result is what the model
      // reads in the end, and state restored before the failed attempt is still restored.
      let restored: string | undefined;
      for (;;) {
        yield emit({ state: 'running', attempt, code: current });
        const traced = traceAttempt({
          ...{ toolName, toolCallId, attempt, code: current, mode: repair ? 'inline' : 'agent' },
          maxRepairs: policy.maxRepairs ?? DEFAULT_MAX_REPAIRS,
        });
        let result: Awaited<ReturnType<typeof runPython>>;
        // What the code prints streams to the chat while it runs (bounded in rate and size).
        const live = new LiveOutput();
        const running = traced.within(() =>
          runPython({
            ...{ sandbox, code: current, conversation, files, timeoutMs, abortSignal },
            ...{ onOutput: live.push, onResult: live.pushResult },
            call: { toolCallId, messages, context },
          }),
        );
        for await (const { output, results } of live.until(running)) {
          const shown = results.length > 0 ? { results } : {};
          yield emit({ state: 'running', attempt, code: current, output, ...shown });
        }
        try {
          result = await running;
        } catch (error) {
          // Aborts end the call as they are; code over the size limit is the model's to fix.
          if (abortSignal?.aborted || CodeTooLargeError.isInstance(error)) {
            traced.end({ status: 'exception', error });
            throw error;
          }
          // The sandbox itself failed: the model gets a short, host-free line (engine
          // addresses, Docker hints and paths are for the app), the app the typed error.
          const message = SandboxBusyError.isInstance(error) ? BUSY_MESSAGE : UNAVAILABLE_MESSAGE;
          const failure = {
            ...{ attempt, status: 'unavailable' as const, error: message },
            ...{ fingerprint: 'unavailable', code: current, cause: error },
          };
          if (policy.onError === undefined) reportSandboxFailure(error);
          const { decision, reason } = await decideRepair({ failure, policy });
          const { fingerprint, status } = failure;
          traced.end({ status, fingerprint, decision, reason });
          yield emit({
            state: 'failed',
            attempt,
            status,
            error: message,
            fingerprint,
            next: decision,
            reason,
          });
          return;
        }
        restored ??= result.restored?.summary;
        if (result.status === 'success') {
          traced.end({ status: 'success', attempt });
          const cut = result.stdout.length > maxOutputChars;
          const stdout = cut
            ? `${result.stdout.slice(0, maxOutputChars)}\n… (${result.stdout.length - maxOutputChars} more characters cut)`
            : result.stdout;
          // Cut to the sandbox's caps before anything is encoded or saved.
          // Shown images (a figure passed to display()) join the figures, in order.
          const shown = toPythonResults({ results: result.results ?? [] });
          const artifacts = await toPythonArtifacts({
            ...{
              images: [...(result.images ?? []), ...shown.images],
              files: result.files ?? [],
              notes: result.notes ?? [],
            },
            ...{ maxImages: sandbox.maxImages, maxFiles: sandbox.maxOutputFiles },
            ...{ toolCallId, saveArtifact },
          });
          yield emit({
            state: 'success',
            attempt,
            attempts: attempt - (last?.record?.attempt ?? prior.length),
            stdout,
            truncated: cut || result.truncated,
            code: current,
            ...artifacts,
            ...stateOf(result, restored),
            ...(shown.results.length > 0 ? { results: shown.results } : {}),
          });
          return;
        }
        const status = result.status as FailureStatus;
        // A cell that ended its interpreter says so now: the model must not count on its variables.
        // Refused connections too: often why the code failed (pip, a blocked host).
        const error = [
          describeFailure(status, result, timeoutMs, sandbox.memoryBytes, result.interrupted),
          ...(result.ended ? [result.ended] : []),
          ...(result.network ? refusalNotes(result.network) : []),
        ].join('\n');
        const fingerprint = status === 'error' ? errorFingerprint(result.stderr) : status;
        const { decision, reason } = await decideRepair({
          failure: { attempt, status, error, fingerprint, code: current },
          ...(previousFingerprint !== undefined ? { previousFingerprint } : {}),
          policy,
        });
        traced.end({ status, fingerprint, decision, reason });
        // The last state yielded is the tool's result: a failure the model reads as a tool
        // error, with the decision recorded for the repair guard (see `RepairRecord`).
        yield emit({
          state: 'failed',
          attempt,
          status,
          error,
          fingerprint,
          next: decision,
          reason,
          ...stateOf(result, restored),
        });
        if (decision === 'halt' || !repair) return;
        previousFingerprint = fingerprint;
        attempt++;
        yield emit({ state: 'repairing', attempt });
        const code = current;
        current = await traceRepair({
          attempt,
          run: () =>
            repairCode({
              model: repair.model,
              code,
              error: restored ? `[${restored}]\n${error}` : error,
              ...(abortSignal ? { abortSignal } : {}),
            }),
        });
      }
    },
    // The model needs the output (and the charts), not the bookkeeping.
    toModelOutput: ({ output }) =>
      pythonModelOutput({ output, images: modelImages, maxResultChars: maxOutputChars }),
  });
}

/** The conversation fields of an output: the cell's number, and how lost state was restored. */
function stateOf(result: { cell?: number }, restored: string | undefined) {
  return {
    ...(result.cell !== undefined ? { cell: result.cell } : {}),
    ...(restored !== undefined ? { restored } : {}),
  };
}

/** What the model reads when the sandbox cannot run code (never the host's details). */
export const UNAVAILABLE_MESSAGE =
  'The Python sandbox is unavailable right now, so the code did not run; try again later.';
/** What the model reads when the sandbox refused the run because too much work is waiting. */
export const BUSY_MESSAGE =
  'The Python sandbox is busy right now, so the code did not run; try again later.';

/** Without an `onError` hook the app still hears about sandbox failures: a process warning. */
function reportSandboxFailure(error: unknown): void {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  const warn = (globalThis as { process?: { emitWarning?: (m: string, o: object) => void } })
    .process?.emitWarning;
  if (typeof warn === 'function') {
    warn.call(globalThis.process, `python tool: the sandbox failed: ${text}`, {
      type: 'AiToolbeltSandboxFailure',
    });
  } else {
    console.error(`[ai-toolbelt] python tool: the sandbox failed: ${text}`);
  }
}

// Enough of a killed run's last output to tell where it was stuck.
const LAST_OUTPUT_CHARS = 500;

function describeFailure(
  status: FailureStatus,
  { stdout, stderr }: { stdout: string; stderr: string },
  timeoutMs: number,
  memoryBytes: number | undefined,
  interrupted = false,
): string {
  const trimmed = trimError(stderr);
  switch (status) {
    case 'timeout': {
      const last = stdout.trimEnd().slice(-LAST_OUTPUT_CHARS);
      return [
        interrupted
          ? `Timed out after ${timeoutMs} ms and was interrupted (KeyboardInterrupt); the interpreter and its variables are kept.`
          : `Timed out after ${timeoutMs} ms and was stopped.`,
        ...(last ? [`Its last output:\n${last}`] : []),
        ...(trimmed ? [trimmed] : []),
      ].join('\n');
    }
    case 'oom':
      return `Ran out of memory and was stopped${memoryBytes ? ` (the sandbox allows ${Math.round(memoryBytes / 1048576)} MiB)` : ''}.`;
    case 'output-limit':
      return 'Printed more output, or returned more figures or files, than the sandbox allows and was stopped. Print less, and save fewer figures and files.';
    case 'crashed':
      return `The sandbox stopped unexpectedly${trimmed ? `:\n${trimmed}` : ' (for example after spawning too many processes).'}`;
    default:
      return trimmed || 'Exited with an error and no message.';
  }
}
