import type Docker from 'dockerode';
import { SandboxBusyError } from '../../../errors/sandbox-busy-error.ts';
import { dockerCall } from '../../docker/docker-call.ts';
import { KIND_LABEL, PLACEMENT_LABEL, SANDBOX_LABEL, SCOPE_LABEL } from '../../docker/labels.ts';
import type { Engine } from '../../engines/engine.ts';
import type { EngineSet } from '../../engines/engine-set.ts';

/** What this process knows of an interpreter it used: for least-recently-used eviction. */
export type KnownInterpreter = { usedAt: number; busy: boolean };

/** The live interpreters of one engine, as listed. */
export type EngineListing = { engine: Engine; live: Docker.ContainerInfo[] };

// How long a caller refused for lack of room might wait: the time an idle interpreter takes to
// end is `idleMs`, but one usually finishes a cell in seconds.
const RETRY_AFTER_MS = 5_000;

/** The refusal of a placement past a bound of `limit` interpreters. */
export function interpretersBusy(limit: number): SandboxBusyError {
  return new SandboxBusyError({ resource: 'interpreters', limit, retryAfterMs: RETRY_AFTER_MS });
}

/**
 * The running conversation interpreters on every healthy engine (any replica's), listed at once.
 *
 * @example
 * ```ts
 * const lists = await listEngines({ engines, dockerTimeoutMs: 15_000 });
 * ```
 */
export async function listEngines({
  engines,
  dockerTimeoutMs,
}: {
  /** The engines (those not up are left out). */
  engines: EngineSet;
  /** Deadline of each list call. */
  dockerTimeoutMs: number;
}): Promise<EngineListing[]> {
  const up = engines.engines.filter(candidate => candidate.state === 'up');
  return await Promise.all(
    up.map(async engine => ({ engine, live: await liveInterpreters(engine, dockerTimeoutMs) })),
  );
}

/** The placement id an interpreter carries (one of an older version without it: its container's). */
export function placementOf(info: Docker.ContainerInfo): string {
  return info.Labels?.[PLACEMENT_LABEL] ?? `container:${info.Id}`;
}

/** The idle interpreter used longest ago (by this process's record, else the oldest started). */
export function leastRecentlyUsed(
  group: readonly Docker.ContainerInfo[],
  known: ReadonlyMap<string, KnownInterpreter>,
): Docker.ContainerInfo | undefined {
  const candidates = group.filter(info => known.get(info.Id)?.busy !== true);
  const lastUse = (info: Docker.ContainerInfo) => known.get(info.Id)?.usedAt ?? info.Created * 1000;
  return candidates.sort((a, b) => lastUse(a) - lastUse(b))[0];
}

/**
 * Running conversation interpreters on an engine (any replica's). A sandbox with a `scope`
 * counts its scope's only: the bounds are the app's, and an engine may serve several apps.
 */
async function liveInterpreters(
  engine: Engine,
  dockerTimeoutMs: number,
): Promise<Docker.ContainerInfo[]> {
  const scope = engine.limits?.labels?.[SCOPE_LABEL];
  const label = [SANDBOX_LABEL, `${KIND_LABEL}=conversation`];
  if (scope !== undefined) label.push(`${SCOPE_LABEL}=${scope}`);
  return await dockerCall({
    operation: 'container list',
    timeoutMs: dockerTimeoutMs,
    call: abortSignal =>
      engine.docker.listContainers({
        filters: { label, status: ['created', 'running'] },
        abortSignal,
      }),
  });
}
