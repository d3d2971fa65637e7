/**
 * What the python tool needs from a sandbox; `DockerSandbox` from
 * `ai-toolbelt/sandbox` provides it. Errors of the user's code are results
 * (`status`), not exceptions: only infrastructure failures throw.
 */
export interface PythonSandbox {
  execute(
    code: string,
    options?: { timeoutMs?: number; abortSignal?: AbortSignal },
  ): Promise<PythonRunResult>;
}

/** The outcome of one run. */
export type PythonRunResult = {
  status: 'success' | 'error' | 'timeout' | 'oom' | 'output-limit' | 'crashed';
  exitCode: number | null;
  stdout: string;
  stderr: string;
  truncated: boolean;
  durationMs: number;
};
