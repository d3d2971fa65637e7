import { hostname } from 'node:os';
import type Docker from 'dockerode';
import { SandboxCleanupError } from '../../errors/sandbox-cleanup-error.ts';
import { dockerCall, isGone } from './docker-call.ts';
import { removeContainer } from './remove-container.ts';
import {
  HOST_LABEL,
  INSTANCE_LABEL,
  KIND_LABEL,
  PID_LABEL,
  SANDBOX_LABEL,
  SCOPE_LABEL,
  isStale,
} from '../driver/labels.ts';

/**
 * Lists an engine's sandbox containers (any state): all of them, those of one sandbox
 * instance, or (for diagnostics on one host) those made by the process `pid` here.
 *
 * @example
 * ```ts
 * const mine = await listSandboxContainers({ docker, instanceId: sandbox.instanceId });
 * ```
 */
export async function listSandboxContainers({
  docker,
  instanceId,
  pid,
  scope,
  kind,
  states,
  dockerTimeoutMs = 10_000,
}: {
  /** Docker client. */
  docker: Docker;
  /** Only containers of this sandbox instance (`DockerSandbox#instanceId`). */
  instanceId?: string;
  /** Only containers made by this PID on this host (diagnostics; never used for ownership). */
  pid?: number;
  /** Only containers of sandboxes with this `scope`. */
  scope?: string;
  /** Only containers of this kind (`KIND_LABEL`). */
  kind?: string;
  /** Only containers in these states (Docker's `status` filter, e.g. `created`, `running`). */
  states?: string[];
  /** Deadline of the list call. */
  dockerTimeoutMs?: number;
}): Promise<Docker.ContainerInfo[]> {
  const label = [SANDBOX_LABEL];
  if (instanceId !== undefined) label.push(`${INSTANCE_LABEL}=${instanceId}`);
  if (scope !== undefined) label.push(`${SCOPE_LABEL}=${scope}`);
  if (kind !== undefined) label.push(`${KIND_LABEL}=${kind}`);
  if (pid !== undefined) label.push(`${PID_LABEL}=${pid}`, `${HOST_LABEL}=${hostname()}`);
  const filters: Record<string, string[]> = { label };
  if (states !== undefined) filters.status = states;
  return dockerCall({
    operation: 'container list',
    timeoutMs: dockerTimeoutMs,
    call: abortSignal => docker.listContainers({ all: states === undefined, filters, abortSignal }),
  });
}

/**
 * Force-removes containers by ID in parallel; "already gone" counts as removed. Returns the
 * removed IDs and the failures.
 */
export async function removeContainers({
  docker,
  ids,
  dockerTimeoutMs,
  onRemoved,
}: {
  /** Docker client. */
  docker: Docker;
  /** Containers to remove. */
  ids: string[];
  /** Deadline of each call. */
  dockerTimeoutMs: number;
  /** Told about each container removed (what it held on the host goes with it). */
  onRemoved?: ((id: string) => void) | undefined;
}): Promise<{ removed: string[]; failed: { id: string; cause: unknown }[] }> {
  const results = await Promise.allSettled(
    ids.map(id => removeContainer({ container: docker.getContainer(id), dockerTimeoutMs })),
  );
  const removed: string[] = [];
  const failed: { id: string; cause: unknown }[] = [];
  results.forEach((result, i) => {
    if (result.status === 'fulfilled' || isGone(result.reason)) removed.push(ids[i]!);
    else failed.push({ id: ids[i]!, cause: result.reason });
  });
  for (const id of removed) onRemoved?.(id);
  return { removed, failed };
}

/**
 * Removes sandbox containers whose expiry label has passed by more than `clockSkewMs` (their
 * TTL wrapper has killed them, so whoever made them (this process, another replica, a
 * crashed one) no longer uses them) and conversation interpreters that have stopped (idle
 * expiry, killed: they are never started again). It never judges by host name or PID, so replicas sharing
 * an engine never remove each other's live containers. Only containers of `scope` are considered
 * (without one: containers of no scope). Returns the removed IDs; removal failures are thrown
 * together (`SandboxCleanupError`).
 *
 * @example
 * ```ts
 * const removed = await sweepStaleContainers({ docker });
 * ```
 */
export async function sweepStaleContainers({
  docker,
  dockerTimeoutMs = 10_000,
  clockSkewMs = 60_000,
  scope,
  onRemoved,
}: {
  /** Docker client. */
  docker: Docker;
  /** Deadline of each Docker call. */
  dockerTimeoutMs?: number;
  /** Allowance for clocks of the hosts sharing the engine being this far apart. */
  clockSkewMs?: number;
  /** The sweeping sandbox's `scope`: only containers of the same scope (or of none) are swept. */
  scope?: string | undefined;
  /** Told about each container removed (what it held on the host goes with it). */
  onRemoved?: ((id: string) => void) | undefined;
}): Promise<string[]> {
  const now = Date.now();
  const listed = await listSandboxContainers({
    docker,
    dockerTimeoutMs,
    ...(scope === undefined ? {} : { scope }),
  });
  const stale = listed.filter(info =>
    isStale({
      ...{ labels: info.Labels, now, clockSkewMs, scope },
      exited: info.State === 'exited' || info.State === 'dead',
    }),
  );
  const { removed, failed } = await removeContainers({
    docker,
    ids: stale.map(info => info.Id),
    dockerTimeoutMs,
    onRemoved,
  });
  if (failed.length > 0) {
    throw new SandboxCleanupError({
      containerIds: failed.map(f => f.id),
      causes: failed.map(f => f.cause),
    });
  }
  return removed;
}
