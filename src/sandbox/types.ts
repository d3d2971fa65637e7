// The sandbox contract. Kept free of dockerode so that code typed against it (the python tool,
// tests with fakes) never loads Docker client code.

/**
 * How a run ended. Only `success` and `error` come from the code itself (its exit
 * status); the others are observed by the host:
 * - `timeout`: still running at `timeoutMs`; the container was killed.
 * - `oom`: killed by the memory limit.
 * - `output-limit`: printed more than the per-stream cap; the container was killed.
 * - `crashed`: died without reporting, e.g. killed by a signal, or the gVisor sandbox
 *   itself ended (a fork bomb does that: exit 2, no output).
 *
 * @example
 * ```ts
 * const retryable = (status: SandboxStatus) => status === 'error' || status === 'timeout';
 * ```
 */
export type SandboxStatus = 'success' | 'error' | 'timeout' | 'oom' | 'output-limit' | 'crashed';

/**
 * The outcome of one `execute` call. Failures of the user's code are results, not
 * exceptions.
 *
 * @example
 * ```ts
 * const result = await sandbox.execute('print(1 / 0)');
 * if (result.status === 'error') console.log(result.stderr); // ZeroDivisionError ...
 * ```
 */
export type SandboxResult = {
  /** How the run ended. */
  status: SandboxStatus;
  /** The process's exit code; `null` when the host killed it (`timeout`, `output-limit`). */
  exitCode: number | null;
  /** Everything the code printed to stdout, up to the cap. */
  stdout: string;
  /** Everything the code printed to stderr, up to the cap (tracebacks land here). */
  stderr: string;
  /** True when either stream was cut at the cap. */
  truncated: boolean;
  /** Wall-clock time from sending the code to knowing the outcome. */
  durationMs: number;
};

/**
 * A piece of output, delivered while the code runs.
 *
 * @example
 * ```ts
 * const onOutput = ({ stream, text }: SandboxOutputChunk) => process[stream].write(text);
 * ```
 */
export type SandboxOutputChunk = {
  /** Which stream the text came from. */
  stream: 'stdout' | 'stderr';
  /** The decoded text (never splits a UTF-8 character). */
  text: string;
};

/**
 * Options of one `execute` call.
 *
 * @example
 * ```ts
 * const options: SandboxExecuteOptions = { timeoutMs: 5_000, abortSignal: AbortSignal.timeout(60_000) };
 * ```
 */
export type SandboxExecuteOptions = {
  /** Wall-clock limit; at the limit the container is killed and the status is `timeout`. */
  timeoutMs?: number;
  /** Aborting kills the run and rejects with the signal's reason. */
  abortSignal?: AbortSignal;
  /** Called with output as it arrives (after the run starts, before it ends). */
  onOutput?: (chunk: SandboxOutputChunk) => void;
};

/**
 * Runs untrusted Python code in isolation, one fresh interpreter per call.
 * `DockerSandbox` (from `ai-toolbelt/sandbox`) implements it with Docker + gVisor.
 *
 * @example
 * ```ts
 * async function run(sandbox: Sandbox) {
 *   const { status, stdout } = await sandbox.execute('print(6 * 7)', { timeoutMs: 5_000 });
 *   return status === 'success' ? stdout : undefined;
 * }
 * ```
 */
export interface Sandbox extends AsyncDisposable {
  /**
   * Runs `code` and resolves with its outcome. Throws only for bad arguments
   * (`InvalidArgumentError`, `CodeTooLargeError`), a closed sandbox
   * (`SandboxClosedError`), infrastructure failures (`SandboxUnavailableError`,
   * `SandboxRuntimeMissingError`, `DockerTimeoutError`, `SandboxCleanupError`) and aborts.
   */
  execute(code: string, options?: SandboxExecuteOptions): Promise<SandboxResult>;
  /** Stops accepting work, removes every container, and reports removal failures. */
  close(): Promise<void>;
}
