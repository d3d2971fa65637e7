import { randomBytes } from 'node:crypto';
import type Docker from 'dockerode';
import type { CleanupTracker } from './cleanup-tracker.ts';
import { dockerCall } from './docker-call.ts';
import { neverConnected } from './engine-errors.ts';

/**
 * `docker create` with a deadline and a unique name. If the call fails or times out, the
 * engine may still have made the container; the name lets `cleanup` remove it anyway
 * (a 404 means there was nothing to remove). When the request never reached the engine
 * (connection refused, TLS refused) there is nothing to remove.
 *
 * @example
 * ```ts
 * const container = await createContainer({ docker, spec, dockerTimeoutMs: 15_000, cleanup });
 * ```
 */
export async function createContainer({
  docker,
  spec,
  dockerTimeoutMs,
  cleanup,
}: {
  /** Docker client. */
  docker: Docker;
  /** The create body (see `containerSpec`). */
  spec: Docker.ContainerCreateOptions;
  /** Deadline of the call. */
  dockerTimeoutMs: number;
  /** Removes a half-made container. */
  cleanup: CleanupTracker;
}): Promise<Docker.Container> {
  const name = `ai-toolbelt-${process.pid}-${randomBytes(6).toString('hex')}`;
  try {
    return await dockerCall({
      operation: 'container create',
      timeoutMs: dockerTimeoutMs,
      call: abortSignal => docker.createContainer({ ...spec, name, abortSignal }),
    });
  } catch (error) {
    if (!neverConnected(error)) cleanup.remove(docker.getContainer(name));
    throw error;
  }
}
