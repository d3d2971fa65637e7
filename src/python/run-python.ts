import type { ModelMessage } from 'ai';
import { InvalidArgumentError } from '../errors/invalid-argument-error.ts';
import type {
  SandboxCellResult,
  SandboxConversation,
  SandboxDisplayResult,
  SandboxInputFile,
  SandboxOutputChunk,
} from '../sandbox/types.ts';
import type { PythonRunResult, PythonSandbox } from './python-sandbox.ts';

/**
 * Which conversation a python call belongs to: an object (the tool is made per request) or
 * a function of the call (the tool is made once; read the chat and user from the context the
 * app passes, e.g. `toolsContext`). Undefined runs one-shot.
 *
 * @example
 * ```ts
 * const conversation: PythonConversation = { id: body.id, userId };
 * ```
 */
export type PythonConversation =
  | SandboxConversation
  | ((call: {
      /** The tool call. */
      toolCallId: string;
      /** The messages sent to the model. */
      messages: ModelMessage[];
      /** The tool's context (`toolsContext.python` of `generateText` / `streamText`). */
      context: unknown;
    }) => SandboxConversation | undefined);

/** Throws when `conversation` is set but the sandbox keeps no interpreters. */
export function checkConversationSupport(
  sandbox: PythonSandbox,
  conversation: PythonConversation | undefined,
): void {
  if (conversation === undefined || typeof sandbox.executeCell === 'function') return;
  throw new InvalidArgumentError({
    argument: 'conversation',
    value: typeof conversation === 'function' ? '(function)' : conversation,
    message:
      'needs a sandbox with conversation interpreters (executeCell), such as DockerSandbox from ai-toolbelt/sandbox',
  });
}

/**
 * Runs one attempt: as the next cell of the conversation's interpreter when the call belongs
 * to a conversation, else one-shot.
 *
 * @example
 * ```ts
 * const result = await runPython({ sandbox, code, conversation, timeoutMs: 10_000, call });
 * ```
 */
export async function runPython({
  sandbox,
  code,
  conversation,
  files,
  timeoutMs,
  abortSignal,
  onOutput,
  onResult,
  call,
}: {
  /** Where the code runs. */
  sandbox: PythonSandbox;
  /** The attempt's code. */
  code: string;
  /** The tool's `conversation` option. */
  conversation: PythonConversation | undefined;
  /** The tool's `files` option. */
  files:
    | readonly SandboxInputFile[]
    | ((context: {
        toolCallId: string;
      }) => readonly SandboxInputFile[] | Promise<readonly SandboxInputFile[]>)
    | undefined;
  /** Wall-clock limit. */
  timeoutMs: number;
  /** Ends the run. */
  abortSignal: AbortSignal | undefined;
  /** What the code prints, as it prints it. */
  onOutput?: ((chunk: SandboxOutputChunk) => void) | undefined;
  /** What a notebook cell shows, as it shows it. */
  onResult?: ((result: SandboxDisplayResult) => void) | undefined;
  /** The tool call. */
  call: { toolCallId: string; messages: ModelMessage[]; context: unknown };
}): Promise<
  PythonRunResult &
    Partial<Pick<SandboxCellResult, 'cell' | 'ended' | 'interrupted' | 'results'>> & {
      restored?: { summary: string };
    }
> {
  const inputFiles =
    typeof files === 'function' ? await files({ toolCallId: call.toolCallId }) : files;
  const options = {
    timeoutMs,
    ...(onOutput ? { onOutput } : {}),
    ...(abortSignal ? { abortSignal } : {}),
    ...(inputFiles !== undefined && inputFiles.length > 0 ? { files: inputFiles } : {}),
  };
  const owner = typeof conversation === 'function' ? conversation(call) : conversation;
  if (owner === undefined) return await sandbox.execute(code, options);
  checkConversationSupport(sandbox, owner);
  const shown = onResult ? { onResult } : {};
  return await sandbox.executeCell!(code, { ...options, ...shown, conversation: owner });
}
