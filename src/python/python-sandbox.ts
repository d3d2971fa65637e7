import type { Sandbox, SandboxResult } from '../sandbox/types.ts';

/**
 * What the python tool needs from a sandbox: `execute`. `DockerSandbox` from
 * `ai-toolbelt/sandbox` provides it; errors of the user's code are results
 * (`status`), and only infrastructure failures throw.
 */
export type PythonSandbox = Pick<Sandbox, 'execute'>;

/** The outcome of one run. */
export type PythonRunResult = SandboxResult;
