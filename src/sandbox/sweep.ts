import { hostname } from 'node:os';
import type Docker from 'dockerode';
import { SandboxCleanupError } from '../errors/sandbox-cleanup-error.ts';
import { dockerCall } from './docker-call.ts';
import { EXPIRES_LABEL, HOST_LABEL, PID_LABEL, SANDBOX_LABEL } from './labels.ts';

/** True if a process with this PID exists on this host. */
function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Lists this Docker engine's sandbox containers (any state), optionally only those made
 * by the process `pid` on this host.
 *
 * @example
 * ```ts
 * const leaked = await listSandboxContainers({ docker, pid: process.pid });
 * ```
 */
export async function listSandboxContainers({
  docker,
  pid,
  dockerTimeoutMs = 10_000,
}: {
  /** Docker client. */
  docker: Docker;
  /** Only containers made by this PID on this host. */
  pid?: number;
  /** Deadline of the list call. */
  dockerTimeoutMs?: number;
}): Promise<Docker.ContainerInfo[]> {
  const label = [SANDBOX_LABEL];
  if (pid !== undefined) label.push(`${PID_LABEL}=${pid}`, `${HOST_LABEL}=${hostname()}`);
  return dockerCall({
    operation: 'container list',
    timeoutMs: dockerTimeoutMs,
    call: abortSignal => docker.listContainers({ all: true, filters: { label }, abortSignal }),
  });
}

/**
 * Removes sandbox containers left behind by a crashed or killed host process: those whose
 * TTL has passed, and those made on this host by a process that no longer exists.
 * Containers of live processes (another test worker, another server) are left alone.
 * Returns the removed IDs; removal failures are thrown together.
 *
 * @example
 * ```ts
 * const removed = await sweepStaleContainers({ docker });
 * ```
 */
export async function sweepStaleContainers({
  docker,
  dockerTimeoutMs = 10_000,
}: {
  /** Docker client. */
  docker: Docker;
  /** Deadline of each Docker call. */
  dockerTimeoutMs?: number;
}): Promise<string[]> {
  const now = Date.now();
  const host = hostname();
  const stale = (await listSandboxContainers({ docker, dockerTimeoutMs })).filter(info => {
    const expires = Number(info.Labels[EXPIRES_LABEL]);
    if (Number.isFinite(expires) && expires < now) return true;
    const pid = Number(info.Labels[PID_LABEL]);
    return info.Labels[HOST_LABEL] === host && Number.isInteger(pid) && !processAlive(pid);
  });
  const results = await Promise.allSettled(
    stale.map(info =>
      dockerCall({
        operation: 'container remove',
        timeoutMs: dockerTimeoutMs,
        call: abortSignal =>
          docker.getContainer(info.Id).remove({ force: true, v: true, abortSignal }),
      }),
    ),
  );
  const failed = results.flatMap((result, i) =>
    result.status === 'rejected' && (result.reason as { statusCode?: number }).statusCode !== 404
      ? [{ id: stale[i]!.Id, reason: result.reason as unknown }]
      : [],
  );
  if (failed.length > 0) {
    throw new SandboxCleanupError({
      containerIds: failed.map(f => f.id),
      causes: failed.map(f => f.reason),
    });
  }
  return stale.map(info => info.Id);
}
