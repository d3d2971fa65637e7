import { CodeTooLargeError } from '../../errors/code-too-large-error.ts';
import { InvalidArgumentError } from '../../errors/invalid-argument-error.ts';
import type { ResolvedDockerSandboxOptions } from '../options/docker-sandbox-options.ts';
import { resolveInputFiles } from './input-files.ts';
import type { SandboxExecuteOptions } from '../types.ts';

/**
 * Checks the arguments of `execute` / `executeCell` against the sandbox's options and returns
 * them resolved (default timeout, input files with absolute paths). Throws
 * `InvalidArgumentError` or `CodeTooLargeError` naming what was wrong.
 *
 * @example
 * ```ts
 * const { timeoutMs, files } = checkRunArguments({ code, options: {}, sandbox: resolvedOptions });
 * ```
 */
export function checkRunArguments({
  code,
  options,
  sandbox,
}: {
  /** The Python source. */
  code: unknown;
  /** The call's options. */
  options: SandboxExecuteOptions;
  /** The sandbox's resolved options (limits). */
  sandbox: ResolvedDockerSandboxOptions;
}): { timeoutMs: number; files: Array<{ path: string; data: Uint8Array }> } {
  const { timeoutMs = sandbox.defaultTimeoutMs, onOutput, files } = options;
  if (typeof code !== 'string') {
    throw new InvalidArgumentError({
      argument: 'code',
      value: code,
      message: 'must be a string of Python source',
    });
  }
  const bytes = Buffer.byteLength(code, 'utf8');
  if (bytes > sandbox.maxCodeBytes) {
    throw new CodeTooLargeError({ bytes, maxBytes: sandbox.maxCodeBytes });
  }
  if (typeof timeoutMs !== 'number' || !(timeoutMs > 0) || timeoutMs > sandbox.maxTimeoutMs) {
    throw new InvalidArgumentError({
      argument: 'timeoutMs',
      value: timeoutMs,
      message: `must be a positive number of milliseconds, at most maxTimeoutMs (${sandbox.maxTimeoutMs})`,
    });
  }
  if (onOutput !== undefined && typeof onOutput !== 'function') {
    throw new InvalidArgumentError({
      argument: 'onOutput',
      value: onOutput,
      message: 'must be a function',
    });
  }
  return {
    timeoutMs,
    files: resolveInputFiles({
      files,
      maxFiles: sandbox.maxInputFiles,
      maxBytes: sandbox.maxInputBytes,
    }),
  };
}
