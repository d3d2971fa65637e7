import { randomBytes } from 'node:crypto';
import type Docker from 'dockerode';
import type { CleanupTracker } from '../driver/cleanup-tracker.ts';
import type { ContainerLimits } from '../driver/engine-driver.ts';
import { dockerCall } from './docker-call.ts';
import { neverConnected } from './engine-errors.ts';

/**
 * `docker create` with a deadline and a unique name. If the call fails or times out, the
 * engine may still have made the container; the name lets `cleanup` remove it anyway
 * (a 404 means there was nothing to remove). When the request never reached the engine
 * (connection refused, TLS refused) there is nothing to remove. With `egress`, the container
 * gets a proxy of its own first (see `EgressGateway`), closed when `cleanup` removes it.
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
  egress,
  ttlMs = 0,
}: {
  /** Docker client. */
  docker: Docker;
  /** The create body (see `containerSpec`). */
  spec: Docker.ContainerCreateOptions;
  /** Deadline of the call. */
  dockerTimeoutMs: number;
  /** Removes a half-made container (by its name when its id is not known). */
  cleanup: Pick<CleanupTracker, 'remove' | 'whenRemoved'>;
  /** The egress policy, when this container may use the network. */
  egress?: ContainerLimits['egress'];
  /** The container's life bound (with `egress`: its proxy's too). */
  ttlMs?: number;
}): Promise<Docker.Container> {
  const name = `ai-toolbelt-${process.pid}-${randomBytes(6).toString('hex')}`;
  const opened = await egress?.gateway.open({ spec, ttlMs, runtime: egress.runtime });
  try {
    const container = await dockerCall({
      operation: 'container create',
      timeoutMs: dockerTimeoutMs,
      call: abortSignal =>
        docker.createContainer({
          ...((opened?.spec as Docker.ContainerCreateOptions | undefined) ?? spec),
          name,
          abortSignal,
        }),
    });
    if (opened !== undefined) {
      egress!.gateway.bind(container.id, opened.link);
      cleanup.whenRemoved(container.id, () => egress!.gateway.release(container.id));
    }
    return container;
  } catch (error) {
    void opened?.link.close();
    if (!neverConnected(error)) void cleanup.remove(name);
    throw error;
  }
}
