import type Docker from 'dockerode';
import { SandboxCleanupError } from '../../errors/sandbox-cleanup-error.ts';
import { KIND_LABEL } from '../docker/labels.ts';
import { listSandboxContainers, removeContainers, sweepStaleContainers } from '../docker/sweep.ts';

/**
 * Removes every container of one sandbox instance on an engine (any state); returns those
 * that could not be removed. Listing by the instance label also finds containers whose
 * create answer was lost.
 *
 * @example
 * ```ts
 * const failed = await removeInstanceContainers({ docker, instanceId: sandbox.instanceId, dockerTimeoutMs: 15_000 });
 * ```
 */
export async function removeInstanceContainers({
  docker,
  instanceId,
  dockerTimeoutMs,
  keepInterpreters = false,
  keep,
  onRemoved,
}: {
  /** The engine's client. */
  docker: Docker;
  /** The sandbox instance. */
  instanceId: string;
  /** Deadline of each Docker call. */
  dockerTimeoutMs: number;
  /** Leave running conversation interpreters alone (other replicas may be using them). */
  keepInterpreters?: boolean;
  /** Containers to leave alone (interpreters another replica serves). */
  keep?: ReadonlySet<string>;
  /** Told about each container removed. */
  onRemoved?: ((id: string) => void) | undefined;
}): Promise<{ id: string; cause: unknown }[]> {
  const leftovers = (await listSandboxContainers({ docker, instanceId, dockerTimeoutMs })).filter(
    info =>
      !keep?.has(info.Id) &&
      (!keepInterpreters || info.Labels[KIND_LABEL] !== 'conversation' || info.State !== 'running'),
  );
  const { failed } = await removeContainers({
    docker,
    ids: leftovers.map(info => info.Id),
    dockerTimeoutMs,
    onRemoved,
  });
  return failed;
}

/**
 * `sweepStaleContainers` for the background: the containers it could not remove belong to
 * anyone (other replicas too), so they go to `onCleanupError` (or a process warning), not
 * to this instance's `close()`; a failed listing goes to `onListError`.
 *
 * @example
 * ```ts
 * await sweepExpiredQuietly({ docker, dockerTimeoutMs: 15_000, clockSkewMs: 60_000, onListError: () => {} });
 * ```
 */
export async function sweepExpiredQuietly({
  docker,
  dockerTimeoutMs,
  clockSkewMs,
  scope,
  onCleanupError,
  onListError,
  onRemoved,
}: {
  /** The engine's client. */
  docker: Docker;
  /** Deadline of each Docker call. */
  dockerTimeoutMs: number;
  /** Clock-skew margin on the expiry labels. */
  clockSkewMs: number;
  /** The sandbox's `scope`: only containers of the same scope are swept. */
  scope?: string | undefined;
  /** Told about containers that could not be removed. */
  onCleanupError?: (error: SandboxCleanupError) => void;
  /** Told when the engine could not be asked at all. */
  onListError: (error: unknown) => void;
  /** Told about each container removed. */
  onRemoved?: ((id: string) => void) | undefined;
}): Promise<void> {
  try {
    await sweepStaleContainers({ docker, dockerTimeoutMs, clockSkewMs, scope, onRemoved });
  } catch (error) {
    if (!SandboxCleanupError.isInstance(error)) return onListError(error);
    if (onCleanupError !== undefined) onCleanupError(error);
    else process.emitWarning(error.message, { type: error.name });
  }
}
