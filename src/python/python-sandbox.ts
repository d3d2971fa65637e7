import type { ConversationSandbox, Sandbox, SandboxResult } from '../sandbox/types.ts';
import type { PythonNetwork } from './python-tool-description.ts';

/**
 * What the python tool needs from a sandbox: `execute`, and `executeCell` for conversation
 * interpreters. `DockerSandbox` from `ai-toolbelt/sandbox` provides both; errors of the user's code are results
 * (`status`), and only infrastructure failures throw.
 */
export type PythonSandbox = Pick<Sandbox, 'execute'> &
  Partial<ConversationSandbox> & {
    /** Python distributions in the sandbox (`pandas==1.5.3`), named in the tool's description. */
    readonly packages?: readonly string[] | undefined;
    /** What code may reach over the network (`DockerSandbox.network`), named in the description. */
    readonly network?: PythonNetwork | undefined;
    /** The memory limit of a run, named when code runs out of memory. */
    readonly memoryBytes?: number | undefined;
    /** Images a run may return (default 10); the tool keeps no more, whatever a run returned. */
    readonly maxImages?: number | undefined;
    /** Files a run may return (default 20); the tool keeps no more, whatever a run returned. */
    readonly maxOutputFiles?: number | undefined;
  };

/** The outcome of one run. */
export type PythonRunResult = SandboxResult;
