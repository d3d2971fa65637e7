import type Docker from 'dockerode';
import { dockerCall } from './docker-call.ts';

// Exit 128 + SIGKILL: how the kernel's OOM killer (and any other SIGKILL) ends a container.
const SIGKILL_EXIT = 137;

/**
 * The container's state from `docker inspect`, with its `OOMKilled` flag settled. Docker learns of
 * an exit and of the OOM kill behind it from two events that race (containerd, and gVisor's shim,
 * report them apart), so a SIGKILL exit read at once can still say `OOMKilled: false`: such a
 * state is read again every `stepMs` for up to `settleMs` until the flag shows. Only a container
 * that exited on SIGKILL without the flag pays the wait.
 *
 * @example
 * ```ts
 * const { OOMKilled, ExitCode } = await exitedState({ container, dockerTimeoutMs: 10_000 });
 * ```
 */
export async function exitedState({
  container,
  dockerTimeoutMs,
  settleMs = 1_000,
  stepMs = 50,
}: {
  /** The container, already stopped or stopping. */
  container: Docker.Container;
  /** Deadline of each inspect call. */
  dockerTimeoutMs: number;
  /** How long a SIGKILL exit waits for Docker to record an OOM kill. */
  settleMs?: number;
  /** Between two inspects while it waits. */
  stepMs?: number;
}): Promise<Docker.ContainerInspectInfo['State']> {
  const inspect = async () =>
    (
      await dockerCall({
        operation: 'container inspect',
        timeoutMs: dockerTimeoutMs,
        call: abortSignal => container.inspect({ abortSignal }),
      })
    ).State;
  const deadline = performance.now() + settleMs;
  let state = await inspect();
  while (
    !state.Running &&
    state.ExitCode === SIGKILL_EXIT &&
    !state.OOMKilled &&
    performance.now() < deadline
  ) {
    await new Promise(resolve => setTimeout(resolve, stepMs));
    state = await inspect();
  }
  return state;
}
