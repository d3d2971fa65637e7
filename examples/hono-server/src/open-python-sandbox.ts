import type { Sandbox } from 'ai-toolbelt/sandbox';

/** What {@link openPythonSandbox} found. */
export type PythonSandboxSetup = {
  /** The sandbox, ready to run code; undefined when python is disabled. */
  sandbox?: Sandbox;
  /** Why python is disabled, with what to do about it. */
  problem?: string;
};

/**
 * Opens the Docker + gVisor sandbox for the python tool, checking the engine,
 * the `runsc` runtime and the image up front, so a machine without them gets
 * one clear message at start-up (and a chat without the python tool) instead
 * of failing tool calls later.
 *
 * @example
 * ```ts
 * const { sandbox, problem } = await openPythonSandbox({ disabled: process.env.PYTHON_SANDBOX === 'off' });
 * ```
 */
export async function openPythonSandbox({
  disabled = false,
}: {
  /** Skip the sandbox on purpose (`PYTHON_SANDBOX=off`). */
  disabled?: boolean;
} = {}): Promise<PythonSandboxSetup> {
  if (disabled) return { problem: 'turned off with PYTHON_SANDBOX=off.' };
  try {
    // Loaded only here: the sandbox subpath brings dockerode, which nothing else needs.
    const { DockerSandbox } = await import('ai-toolbelt/sandbox');
    return { sandbox: await DockerSandbox.create({ warmPoolSize: 1 }) };
  } catch (error) {
    return { problem: error instanceof Error ? error.message : String(error) };
  }
}
