import { SandboxBusyError } from '../../../errors/sandbox-busy-error.ts';
import type { BoxInfo } from '../../driver/engine-driver.ts';
import { PLACEMENT_LABEL, SCOPE_LABEL } from '../../driver/labels.ts';
import type { Engine } from '../../engines/engine.ts';
import type { EngineSet } from '../../engines/engine-set.ts';

/** What this process knows of an interpreter it used: for least-recently-used eviction. */
export type KnownInterpreter = { usedAt: number; busy: boolean };

/** The live interpreters of one engine, as listed. */
export type EngineListing = { engine: Engine; live: BoxInfo[] };

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
 * const lists = await listEngines({ engines });
 * ```
 */
export async function listEngines({
  engines,
}: {
  /** The engines (those not up are left out). */
  engines: EngineSet;
}): Promise<EngineListing[]> {
  const up = engines.engines.filter(candidate => candidate.state === 'up');
  return await Promise.all(
    up.map(async engine => ({ engine, live: await liveInterpreters(engine) })),
  );
}

/** The placement id an interpreter carries (one of an older version without it: its container's). */
export function placementOf(info: BoxInfo): string {
  return info.labels[PLACEMENT_LABEL] ?? `container:${info.id}`;
}

/** The idle interpreter used longest ago (by this process's record, else the oldest started). */
export function leastRecentlyUsed(
  group: readonly BoxInfo[],
  known: ReadonlyMap<string, KnownInterpreter>,
): BoxInfo | undefined {
  const candidates = group.filter(info => known.get(info.id)?.busy !== true);
  const lastUse = (info: BoxInfo) => known.get(info.id)?.usedAt ?? info.createdMs;
  return candidates.sort((a, b) => lastUse(a) - lastUse(b))[0];
}

/**
 * Running conversation interpreters on an engine (any replica's). A sandbox with a `scope`
 * counts its scope's only: the bounds are the app's, and an engine may serve several apps.
 */
async function liveInterpreters(engine: Engine): Promise<BoxInfo[]> {
  const scope = engine.limits?.labels?.[SCOPE_LABEL];
  return await engine.driver.list({ kind: 'conversation', scope, live: true });
}
