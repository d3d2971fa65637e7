import { SandboxCleanupError } from '../../errors/sandbox-cleanup-error.ts';
import type { EngineDriver } from '../driver/engine-driver.ts';
import { KIND_LABEL, isStale } from '../driver/labels.ts';

/**
 * Removes the boxes `ids` on an engine in parallel; "already gone" counts as removed. Returns the
 * failures; `onRemoved` hears of each box removed.
 */
async function removeBoxes({
  driver,
  ids,
  onRemoved,
}: {
  driver: EngineDriver;
  ids: string[];
  onRemoved?: ((id: string) => void) | undefined;
}): Promise<{ id: string; cause: unknown }[]> {
  const results = await Promise.allSettled(ids.map(id => driver.remove(id)));
  const failed: { id: string; cause: unknown }[] = [];
  const removed: string[] = [];
  results.forEach((result, i) => {
    if (result.status === 'fulfilled' || driver.isGone(result.reason)) removed.push(ids[i]!);
    else failed.push({ id: ids[i]!, cause: result.reason });
  });
  for (const id of removed) onRemoved?.(id);
  return failed;
}

/**
 * Removes every box of one sandbox instance on an engine (any state); returns those that could
 * not be removed. Listing by the instance label also finds boxes whose create answer was lost.
 *
 * @example
 * ```ts
 * const failed = await removeInstanceContainers({ driver, instanceId: sandbox.instanceId });
 * ```
 */
export async function removeInstanceContainers({
  driver,
  instanceId,
  keepInterpreters = false,
  keep,
  onRemoved,
}: {
  /** The engine. */
  driver: EngineDriver;
  /** The sandbox instance. */
  instanceId: string;
  /** Leave running conversation interpreters alone (other replicas may be using them). */
  keepInterpreters?: boolean;
  /** Boxes to leave alone (interpreters another replica serves). */
  keep?: ReadonlySet<string>;
  /** Told about each box removed. */
  onRemoved?: ((id: string) => void) | undefined;
}): Promise<{ id: string; cause: unknown }[]> {
  const leftovers = (await driver.list({ instanceId })).filter(
    info =>
      !keep?.has(info.id) &&
      (!keepInterpreters || info.labels[KIND_LABEL] !== 'conversation' || info.state !== 'running'),
  );
  return await removeBoxes({ driver, ids: leftovers.map(info => info.id), onRemoved });
}

/**
 * Removes the stale boxes of an engine (see `isStale`: expired ones of any replica, stopped
 * interpreters) for the background: the boxes it could not remove belong to anyone (other
 * replicas too), so they go to `onCleanupError` (or a process warning), not to this instance's
 * `close()`; a failed listing goes to `onListError`.
 *
 * @example
 * ```ts
 * await sweepExpiredQuietly({ driver, clockSkewMs: 60_000, onListError: () => {} });
 * ```
 */
export async function sweepExpiredQuietly({
  driver,
  clockSkewMs,
  scope,
  onCleanupError,
  onListError,
  onRemoved,
}: {
  /** The engine. */
  driver: EngineDriver;
  /** Clock-skew margin on the expiry labels. */
  clockSkewMs: number;
  /** The sandbox's `scope`: only boxes of the same scope are swept. */
  scope?: string | undefined;
  /** Told about boxes that could not be removed. */
  onCleanupError?: ((error: SandboxCleanupError) => void) | undefined;
  /** Told when the engine could not be asked at all. */
  onListError: (error: unknown) => void;
  /** Told about each box removed. */
  onRemoved?: ((id: string) => void) | undefined;
}): Promise<void> {
  let listed;
  try {
    listed = await driver.list(scope === undefined ? {} : { scope });
  } catch (error) {
    return onListError(error);
  }
  const now = Date.now();
  const stale = listed.filter(info =>
    isStale({ labels: info.labels, exited: info.state === 'exited', now, clockSkewMs, scope }),
  );
  const failed = await removeBoxes({ driver, ids: stale.map(info => info.id), onRemoved });
  if (failed.length === 0) return;
  const error = new SandboxCleanupError({
    containerIds: failed.map(f => f.id),
    causes: failed.map(f => f.cause),
  });
  if (onCleanupError !== undefined) onCleanupError(error);
  else process.emitWarning(error.message, { type: error.name });
}
