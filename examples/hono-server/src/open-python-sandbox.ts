import type { DockerSandbox, EgressOptions } from 'ai-toolbelt/sandbox';
import type { Storage } from 'unstorage';

/** What {@link openPythonSandbox} found. */
export type PythonSandboxSetup = {
  /** The sandbox, ready to run code; undefined when python is disabled. */
  sandbox?: DockerSandbox;
  /** Why python is disabled, with what to do about it. */
  problem?: string;
};

/**
 * Opens the gVisor sandbox for the python tool (Docker, or the Kubernetes cluster
 * `AI_TOOLBELT_SANDBOX_ENGINE=kubernetes` names), checking the engine, the gVisor
 * runtime and the image up front, so a machine without them gets
 * one clear message at start-up (and a chat without the python tool) instead
 * of failing tool calls later. Each chat keeps one live interpreter: with a
 * shared store and `SANDBOX_STATE_KEY` its handle and history go to the store
 * (sealed), so any replica continues the conversation; otherwise they stay in
 * this process's memory.
 *
 * @example
 * ```ts
 * const { sandbox, problem } = await openPythonSandbox({ disabled: process.env.PYTHON_SANDBOX === 'off' });
 * ```
 */
export async function openPythonSandbox({
  disabled = false,
  store,
  stateKey,
  egress,
}: {
  /** Skip the sandbox on purpose (`PYTHON_SANDBOX=off`). */
  disabled?: boolean;
  /** The app's shared store (Redis with REDIS_URL), for the conversations' interpreters. */
  store?: Storage | undefined;
  /** Seals the interpreters' handles and history in `store` (`SANDBOX_STATE_KEY`, 32+ bytes). */
  stateKey?: string | undefined;
  /** What code may reach (`SANDBOX_EGRESS_ALLOW`, `SANDBOX_PYTHON_INDEX`); default nothing. */
  egress?: EgressOptions | undefined;
} = {}): Promise<PythonSandboxSetup> {
  if (disabled) return { problem: 'turned off with PYTHON_SANDBOX=off.' };
  if (store !== undefined && stateKey === undefined) {
    console.warn(
      '[python] conversations are kept in this process only: set SANDBOX_STATE_KEY (32+ bytes, e.g. `openssl rand -base64 32`) to keep them in the shared store for every replica',
    );
  }
  const shared = store !== undefined && stateKey !== undefined;
  try {
    // Loaded only here: the sandbox subpath brings dockerode, which nothing else needs.
    const { DockerSandbox } = await import('ai-toolbelt/sandbox');
    return {
      sandbox: await DockerSandbox.create({
        warmPoolSize: 1,
        conversations: shared ? { store, encryptionKey: stateKey } : {},
        // Packages pip installs live under /tmp: give it room when pip can reach an index.
        ...(egress ? { egress, tmpfsMiB: 256 } : {}),
      }),
    };
  } catch (error) {
    return { problem: error instanceof Error ? error.message : String(error) };
  }
}
