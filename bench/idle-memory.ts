import type Docker from 'dockerode';
import { listSandboxContainers } from '../src/internal.ts';

/**
 * Average memory of this process's running sandbox containers, MiB, as `docker stats` counts
 * it: usage minus inactive file pages. Not usage minus all "cache": gVisor keeps the sandbox's
 * memory in a memfd, which the cgroup counts as shared-memory cache, so subtracting the cache
 * would hide most of what a container really holds.
 *
 * @example
 * ```ts
 * console.log(await idleMiB(docker)); // 85.2
 * ```
 */
export async function idleMiB(
  docker: Docker,
  {
    kind,
    instanceId,
  }: {
    /** Only containers of this kind (`execute`, `conversation`). */
    kind?: string;
    /** Only containers of this sandbox instance (else every one of this process). */
    instanceId?: string;
  } = {},
): Promise<number> {
  const containers = await listSandboxContainers(
    instanceId === undefined ? { docker, pid: process.pid } : { docker, instanceId },
  );
  const sizes = await Promise.all(
    containers
      .filter(info => info.State === 'running')
      .filter(info => kind === undefined || info.Labels['ai-toolbelt.sandbox.kind'] === kind)
      .map(async info => {
        const { memory_stats: memory } = await docker
          .getContainer(info.Id)
          .stats({ stream: false });
        const stats = (memory.stats ?? {}) as {
          total_inactive_file?: number;
          inactive_file?: number;
        };
        const inactive = stats.total_inactive_file ?? stats.inactive_file ?? 0;
        return (memory.usage - inactive) / (1024 * 1024);
      }),
  );
  return sizes.reduce((a, b) => a + b, 0) / Math.max(1, sizes.length);
}
