import { checkMinimums } from '../../util/check-minimums.ts';

/**
 * Options of `DockerSandbox#createSession`.
 *
 * @example
 * ```ts
 * const options: SessionOptions = { ttlMs: 600_000, maxOutputBytes: 256 * 1024 };
 * ```
 */
export type SessionOptions = {
  /** The container kills itself after this long even if the session is never closed. */
  ttlMs?: number;
  /**
   * pids limit of the session's container. Higher than for one-use runs: under gVisor's
   * ptrace platform the sandbox's host threads grow with every command a long session
   * runs, and reaching the limit ends the whole sandbox (exit 2).
   */
  pidsLimit?: number;
  /**
   * Cap per output stream of each `run` / `spawn` (default: the sandbox's `maxOutputBytes`):
   * past it the command's process tree is killed and the result says `output-limit`.
   */
  maxOutputBytes?: number;
  /** Largest file `readFile` and friends return; only regular files are read. */
  maxFileBytes?: number;
};

/** Fills in the defaults and checks ranges (`InvalidArgumentError` naming the option). */
export function resolveSessionOptions(
  {
    ttlMs = 3_600_000,
    pidsLimit = 1024,
    maxOutputBytes,
    maxFileBytes = 32 * 1024 * 1024,
  }: SessionOptions,
  {
    defaultMaxOutputBytes,
  }: { /** The sandbox's `maxOutputBytes`. */ defaultMaxOutputBytes: number },
): Required<SessionOptions> {
  const resolved = {
    ttlMs,
    pidsLimit,
    maxOutputBytes: maxOutputBytes ?? defaultMaxOutputBytes,
    maxFileBytes,
  };
  checkMinimums([
    ['ttlMs', resolved.ttlMs, 1_000],
    ['pidsLimit', resolved.pidsLimit, 64],
    ['maxOutputBytes', resolved.maxOutputBytes, 1],
    ['maxFileBytes', resolved.maxFileBytes, 1],
  ]);
  return resolved;
}

/**
 * What `DockerSandboxSession#run` resolves with: the AI SDK's result plus whether the output
 * cap cut it (`status: 'output-limit'`, the command killed) or the command exited by itself.
 *
 * @example
 * ```ts
 * const { status, stdout } = await session.run({ command: 'yes' }); // 'output-limit', 1 MiB of y
 * ```
 */
export type SessionRunResult = {
  exitCode: number;
  stdout: string;
  stderr: string;
  /** True when a stream was cut at `maxOutputBytes`. */
  truncated: boolean;
  /** `output-limit`: cut at the cap and killed; `exited`: it ended by itself. */
  status: 'exited' | 'output-limit';
};
